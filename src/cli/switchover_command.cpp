// `baton switchover --to NODE [--window D] [--wait]`: ask the leader to hand
// over to NODE (stop its app, release the lease reserved for NODE alone for
// the window), then optionally poll its status until NODE leads.
#include <algorithm>

#include "baton/duration.hpp"
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"
#include "leader_wait.hpp"

namespace baton::cli {

int run_switchover(const client_settings& settings, std::ostream& out, std::ostream& err) {
  // With --wait, --timeout is the wait; each request keeps its usual bound.
  const milliseconds request_timeout =
      settings.wait ? std::min(default_request_timeout, settings.timeout) : settings.timeout;
  const time_point start = mono_clock::now();
  daemon_client client(settings.socket_path, request_timeout);
  if (auto why = client.connect(start + request_timeout); !why.empty()) {
    err << client.unreachable(why) << '\n';
    return exit_failure;
  }
  nlohmann::json request{{"cmd", "switchover"}, {"to", settings.to}};
  if (settings.window) request["window_ms"] = settings.window->count();
  message reply = client.ask(request, start + request_timeout);
  if (!reply.ok()) {
    err << client.unreachable(reply) << '\n';
    return exit_failure;
  }
  const auto type = string_field(reply.object, "type");
  if (type == "error") {
    const std::string error = daemon_error_text(reply.object);
    if (error.starts_with("not the leader")) {
      err << "baton: " << error << '\n';
      return exit_not_leader;
    }
    if (error.starts_with("unknown command")) {
      err << "baton: this daemon is older than the switchover command: " << error << '\n';
      return exit_failure;
    }
    err << "baton: the daemon refused the switchover: " << error << '\n';
    return exit_failure;
  }
  if (type != "switchover") {
    err << client.unreachable("unexpected reply to switchover: " +
                              printable(reply.line.substr(0, 200)))
        << '\n';
    return exit_failure;
  }
  out << "switchover to " << printable(settings.to)
      << ": stopping the app, then releasing the lease reserved for it for "
      << human_duration(int_field(reply.object, "window_ms").value_or(0)) << std::endl;
  if (!settings.wait) return exit_ok;
  const auto to = settings.to;
  return wait_for_leader(
      client, [to](const std::string& leader) { return leader == to; }, start + settings.timeout,
      "baton: " + printable(to) + " did not take over within " + format_duration(settings.timeout),
      out, err);
}

}  // namespace baton::cli
