// See secret_environment.hpp.
#include "secret_environment.hpp"

#include <cstdlib>
#include <exception>

#include "baton/redis_url.hpp"

namespace baton {

std::vector<std::string> scrub_secret_environment() {
  std::vector<std::string> removed;
  if (std::getenv("BATON_REDIS_PASSWORD") != nullptr) {
    ::unsetenv("BATON_REDIS_PASSWORD");
    removed.emplace_back("BATON_REDIS_PASSWORD");
  }
  if (const char* url = std::getenv("BATON_REDIS_URL"); url != nullptr) {
    bool secret = true;
    try {
      secret = !parse_redis_url(url).password.empty();
    } catch (const std::exception&) {
      // Unparseable: it may hold a password in a shape the parser rejects.
    }
    if (secret) {
      ::unsetenv("BATON_REDIS_URL");
      removed.emplace_back("BATON_REDIS_URL");
    }
  }
  return removed;
}

}  // namespace baton
