// `baton resign [--wait]`: ask the leader to step down, then optionally poll
// its status until another node holds the lease (leader_wait.hpp).
#include <algorithm>

#include "baton/duration.hpp"
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"
#include "leader_wait.hpp"

namespace baton::cli {

int run_resign(const client_settings& settings, std::ostream& out, std::ostream& err) {
  // With --wait, --timeout is the wait; each request keeps its usual bound.
  const milliseconds request_timeout =
      settings.wait ? std::min(default_request_timeout, settings.timeout) : settings.timeout;
  const time_point start = mono_clock::now();
  daemon_client client(settings.socket_path, request_timeout);
  if (auto why = client.connect(start + request_timeout); !why.empty()) {
    err << client.unreachable(why) << '\n';
    return exit_failure;
  }
  message reply = client.ask({{"cmd", "resign"}}, start + request_timeout);
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
    err << "baton: the daemon refused to resign: " << error << '\n';
    return exit_failure;
  }
  if (type != "resign") {
    err << client.unreachable("unexpected reply to resign: " + printable(reply.line.substr(0, 200)))
        << '\n';
    return exit_failure;
  }
  out << "resigned: stopping the app and releasing the lease; staying out of the election for "
      << human_duration(int_field(reply.object, "cooldown_ms").value_or(0)) << std::endl;
  if (!settings.wait) return exit_ok;
  const auto self = string_field(reply.object, "node_id");
  return wait_for_leader(
      client, [self](const std::string& leader) { return !self || leader != *self; },
      start + settings.timeout,
      "baton: no other node took over within " + format_duration(settings.timeout), out, err);
}

}  // namespace baton::cli
