#include "on_demand_library.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace baton {

void on_demand_library::open() const {
  std::call_once(opened_, [this] {
    // Unset again right after, so the app and hooks (which inherit the
    // daemon's environment) never see it. The library is opened before the
    // store's first connection, while the loop is the only thread that
    // reads the environment.
    const bool set_for_load = while_opening_.name != nullptr &&
                              ::getenv(while_opening_.name) == nullptr &&
                              ::setenv(while_opening_.name, while_opening_.value, 0) == 0;
    // RTLD_LOCAL: the library's own dependencies stay out of the global
    // namespace.
    handle_ = ::dlopen(soname_, RTLD_NOW | RTLD_LOCAL);
    if (set_for_load) ::unsetenv(while_opening_.name);
    if (handle_ == nullptr) {
      const char* why = ::dlerror();
      error_ = (why != nullptr ? std::string(why) : std::string(soname_) + " could not be opened") +
               " (Debian: apt-get install " + package_ + ")";
    }
  });
}

std::optional<std::string> on_demand_library::load_error() const {
  open();
  if (handle_ == nullptr) return error_;
  return std::nullopt;
}

void* on_demand_library::function(const char* name) const {
  open();
  void* symbol = handle_ != nullptr ? ::dlsym(handle_, name) : nullptr;
  if (symbol == nullptr) {
    const std::string why =
        handle_ == nullptr ? error_ : std::string("no such function in ") + soname_;
    std::fprintf(stderr, "baton: %s: %s: %s\n", what_, name, why.c_str());
    std::abort();
  }
  return symbol;
}

}  // namespace baton
