// See secret_environment.hpp.
#include "secret_environment.hpp"

#include <unistd.h>

#include <cstdlib>

#include "baton/secret_variables.hpp"

namespace baton {

std::vector<std::string> scrub_secret_environment() {
  auto names = secret_variables_in(::environ);
  for (const auto& name : names) ::unsetenv(name.c_str());
  return names;
}

}  // namespace baton
