// `baton resign [--wait]`: ask the leader to step down, then optionally poll
// its status until another node holds the lease (leader_wait.hpp).
#include "baton/duration.hpp"
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"
#include "leader_wait.hpp"

namespace baton::cli {

int run_resign(const client_settings& settings, std::ostream& out, std::ostream& err) {
  const milliseconds request_timeout = request_timeout_of(settings);
  const time_point start = mono_clock::now();
  daemon_client client(settings.socket_path, request_timeout);
  auto answer = ask_leader(client, {{"cmd", "resign"}}, start + request_timeout,
                           "the daemon refused to resign", err);
  if (const int* code = std::get_if<int>(&answer)) return *code;
  const auto& reply = std::get<nlohmann::json>(answer);
  out << "resigned: stopping the app and releasing the lease; staying out of the election for "
      << human_duration(int_field(reply, "cooldown_ms").value_or(0)) << std::endl;
  if (!settings.wait) return exit_ok;
  const auto self = string_field(reply, "node_id");
  return wait_for_leader(
      client, [self](const std::string& leader) { return !self || leader != *self; },
      start + settings.timeout,
      "baton: no other node took over within " + format_duration(settings.timeout), out, err);
}

}  // namespace baton::cli
