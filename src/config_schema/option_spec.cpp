// What a row says of a value: whether it must not reach the app.
#include "option_spec.hpp"

#include <cctype>

namespace baton {

bool option_spec::value_is_secret(std::string_view value) const {
  if (secret) return true;
  if (!may_carry_credentials && kind() != value_kind::secret_text) {
    return false;
  }
  // user:password@ in a URL, or password=... in a libpq string or a URI's
  // query. Either spelling in any case: libpq keywords are lower case, but a
  // wrong guess here only costs the app a variable it has no use for.
  std::string lower(value);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find('@') != std::string::npos || lower.find("password") != std::string::npos;
}

}  // namespace baton
