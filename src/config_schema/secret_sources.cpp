// Which source of a store's password wins: see secret_sources.hpp.
#include "secret_sources.hpp"

#include <optional>
#include <stdexcept>

#include "baton/secret_file.hpp"

namespace baton {
namespace {

std::string read_first_line(const std::string& option, const std::string& path) {
  try {
    return read_secret_file(path);
  } catch (const std::runtime_error& e) {
    throw config_error(option, path, e.what());
  }
}

}  // namespace

std::string resolve_password(const password_sources& src, const environment& env,
                             const option_origins& origins) {
  const std::string variable(src.secret.env);
  const std::string& file_option = src.file_option;
  const std::string& url_option = src.url_option;
  const auto origin = [&origins](const std::string& option) {
    const auto it = origins.find(option);
    return it == origins.end() ? std::string() : " (" + it->second + ")";
  };
  std::optional<std::string> from_env;
  if (env) from_env = env(variable);
  const bool has_env = from_env && !from_env->empty();
  const bool has_file = !src.file_path.empty();
  const std::string& from_url = src.url_password;
  // Two sources of one secret: whichever won, the other would be a password
  // the operator believes is in use. Never name the secret, only its sources.
  if (!from_url.empty() && (has_env || has_file)) {
    const std::string other =
        has_env ? variable : file_option + origin(file_option);
    throw config_error::with_message(
        url_option, url_option + origin(url_option) + " carries a password and so does " + other +
                        "; give the password in one place only (remove it from the URL)");
  }
  if (has_env && has_file) {
    throw config_error::with_message(
        file_option, "the " + src.label + " password is given twice: " + variable + " is set and " +
                         file_option + origin(file_option) + " names a file; use only one of them");
  }
  if (has_env) return *from_env;
  if (has_file) {
    try {
      return read_first_line(file_option, src.file_path);
    } catch (const config_error& e) {
      const auto it = origins.find(file_option);
      if (it == origins.end()) throw;
      throw config_error::with_message(e.option(), std::string(e.what()) + " (" + it->second + ")");
    }
  }
  return from_url;
}

}  // namespace baton
