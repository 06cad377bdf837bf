// `baton switchover --to NODE [--window D] [--wait] [--force]`: ask the
// leader to hand over to NODE (stop its app, release the lease reserved for
// NODE alone for the window), then optionally poll its status until NODE
// leads. The leader refuses a node that would not take the lease, or that a
// live candidate outranks unless --force; a forced one's warning is printed.
#include "baton/duration.hpp"
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"
#include "leader_wait.hpp"

namespace baton::cli {

int run_switchover(const client_settings& settings, std::ostream& out, std::ostream& err) {
  const milliseconds request_timeout = request_timeout_of(settings);
  const time_point start = mono_clock::now();
  daemon_client client(settings.socket_path, request_timeout);
  nlohmann::json request{{"cmd", "switchover"}, {"to", settings.to}};
  if (settings.window) request["window_ms"] = settings.window->count();
  if (settings.force) request["force"] = true;
  auto answer = ask_leader(client, request, start + request_timeout,
                           "the daemon refused the switchover", err);
  if (const int* code = std::get_if<int>(&answer)) return *code;
  const auto& reply = std::get<nlohmann::json>(answer);
  out << "switchover to " << printable(settings.to)
      << ": stopping the app, then releasing the lease reserved for it for "
      << human_duration(int_field(reply, "window_ms").value_or(0)) << std::endl;
  if (auto warning = string_field(reply, "warning")) {
    err << "baton: warning: " << printable(*warning) << std::endl;
  }
  if (!settings.wait) return exit_ok;
  const auto to = settings.to;
  return wait_for_leader(
      client, [to](const std::string& leader) { return leader == to; }, start + settings.timeout,
      "baton: " + printable(to) + " did not take over within " + format_duration(settings.timeout),
      out, err);
}

}  // namespace baton::cli
