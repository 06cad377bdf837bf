#include "libsystemd_on_demand.hpp"

#include <systemd/sd-daemon.h>

#include "on_demand/on_demand_library.hpp"

namespace baton {
namespace {

const on_demand_library libsystemd("libsystemd.so.0", "libsystemd0", "libsystemd");

}  // namespace

std::optional<std::string> libsystemd_load_error() { return libsystemd.load_error(); }

}  // namespace baton

#define BATON_LIBSYSTEMD(name) BATON_ON_DEMAND_TARGET(baton::libsystemd, name)

extern "C" {

int sd_notify(int unset_environment, const char* state) {
  BATON_LIBSYSTEMD(sd_notify);
  return target(unset_environment, state);
}

int sd_watchdog_enabled(int unset_environment, uint64_t* usec) {
  BATON_LIBSYSTEMD(sd_watchdog_enabled);
  return target(unset_environment, usec);
}

}  // extern "C"
