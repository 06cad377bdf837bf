// Builds the hook/child environment from `environ`, read at each spawn.
#include "app_environment.hpp"

#include <unistd.h>

#include <array>

#include "baton/secret_variables.hpp"

namespace baton::process {

namespace {

// Set by us for every spawn; an inherited value (e.g. the daemon itself runs
// under another baton) would otherwise appear twice.
constexpr std::array<std::string_view, 6> term_variables = {
    "BATON_EVENT",  "BATON_NODE_ID",      "BATON_ELECTION",
    "BATON_REASON", "BATON_LEASE_TTL_MS", "BATON_TOKEN"};
// What systemd passes to the daemon itself (sd_notify, the watchdog): an app
// that inherited them could notify systemd as if it were baton.
constexpr std::array<std::string_view, 3> service_manager_variables = {
    "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  for (auto n : names) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> app_environment(const app_context& context, std::string_view event) {
  std::vector<std::string> env;
  for (char** entry = ::environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const auto equals = text.find('=');
    std::string_view name = text.substr(0, equals);
    std::string_view value = equals == std::string_view::npos ? "" : text.substr(equals + 1);
    // The daemon scrubs these at start; this is the backstop for a variable
    // set since (and for the keeper's tests, which run no daemon).
    if (is_secret_variable(name, value) || contains(term_variables, name) ||
        contains(service_manager_variables, name)) {
      continue;
    }
    env.emplace_back(text);
  }
  env.push_back("BATON_EVENT=" + std::string(event));
  env.push_back("BATON_NODE_ID=" + context.node_id);
  env.push_back("BATON_ELECTION=" + context.election);
  env.push_back("BATON_REASON=" + context.reason);
  env.push_back("BATON_LEASE_TTL_MS=" + std::to_string(context.lease_ttl.count()));
  env.push_back("BATON_TOKEN=" + std::to_string(context.token));
  return env;
}

}  // namespace baton::process
