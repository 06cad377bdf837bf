// `baton resign [--wait]`: ask the leader to step down, then optionally poll
// its status until another node holds the lease. The poll reuses the one
// connection, so a daemon that goes away is noticed at the next request.
#include <algorithm>
#include <thread>

#include "baton/duration.hpp"
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"

namespace baton::cli {
namespace {

std::string error_of(const nlohmann::json& reply) {
  return daemon_error_text(reply);
}

int wait_for_successor(daemon_client& client, std::optional<std::string> node,
                       time_point wait_deadline, milliseconds wait, std::ostream& out,
                       std::ostream& err) {
  const std::string gave_up = "baton: no other node took over within " + format_duration(wait);
  // The deadline ends the loop; the count is only a backstop.
  for (long polls = 0; polls < 10'000'000; ++polls) {
    const time_point now = mono_clock::now();
    message reply =
        client.ask({{"cmd", "status"}}, std::min(now + default_request_timeout, wait_deadline));
    if (reply.what == io_result::kind::timed_out && mono_clock::now() >= wait_deadline) {
      err << gave_up << '\n';
      return exit_no_successor;
    }
    if (!reply.ok()) {
      err << client.unreachable(reply) << '\n';
      return exit_failure;
    }
    if (string_field(reply.object, "type") == "error") {
      err << "baton: the daemon answered: " << error_of(reply.object) << '\n';
      return exit_failure;
    }
    if (!node) node = string_field(reply.object, "node_id");
    if (auto leader = string_field(reply.object, "leader"); leader && node && *leader != *node) {
      out << "new leader: " << printable(*leader);
      if (auto token = int_field(reply.object, "token"); token && *token > 0) {
        out << " (token " << *token << ")";
      }
      out << std::endl;
      return exit_ok;
    }
    if (mono_clock::now() + resign_poll_interval >= wait_deadline) break;
    std::this_thread::sleep_for(resign_poll_interval);
  }
  err << gave_up << '\n';
  return exit_no_successor;
}

}  // namespace

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
    const std::string error = error_of(reply.object);
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
  return wait_for_successor(client, string_field(reply.object, "node_id"), start + settings.timeout,
                            settings.timeout, out, err);
}

}  // namespace baton::cli
