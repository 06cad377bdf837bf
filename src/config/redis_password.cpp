// Reading the password file keeps no more of it in memory than needed: the
// file holds a secret, and only its first line is the password.
#include "redis_password.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "baton/redis_url.hpp"
#include "option_table.hpp"

namespace baton {
namespace {

std::string read_first_line(const std::string& option, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "re");
  if (file == nullptr) {
    throw config_error(option, path, std::string("cannot open it: ") + std::strerror(errno));
  }
  std::string line;
  bool failed = false;
  int error = 0;
  for (;;) {
    const int c = std::fgetc(file);
    if (c == EOF) {
      if (std::ferror(file) != 0) {
        failed = true;
        error = errno;
      }
      break;
    }
    if (c == '\n') break;
    line += static_cast<char>(c);
    if (line.size() > 4096) break;
  }
  std::fclose(file);
  if (failed) throw config_error(option, path, std::string("cannot read it: ") + std::strerror(error));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) throw config_error(option, path, "its first line is empty");
  return line;
}

}  // namespace

std::string resolve_redis_password(const config& cfg, const environment& env,
                                   const option_origins& origins) {
  std::optional<std::string> from_env;
  if (env) from_env = env(std::string(option_at(cfg, cfg.redis.password).env));
  if (from_env && !from_env->empty()) return *from_env;
  if (!cfg.redis.password_file.empty()) {
    const std::string option = option_name(cfg, cfg.redis.password_file);
    try {
      return read_first_line(option, cfg.redis.password_file);
    } catch (const config_error& e) {
      const auto it = origins.find(option);
      if (it == origins.end()) throw;
      throw config_error::with_message(e.option(), std::string(e.what()) + " (" + it->second + ")");
    }
  }
  // validate_config has already parsed the URL, so this cannot throw.
  return parse_redis_url(cfg.redis.url).password;
}

}  // namespace baton
