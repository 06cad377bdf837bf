#include "leader_wait.hpp"

#include <algorithm>
#include <thread>

#include "client_text.hpp"
#include "client_verbs.hpp"

namespace baton::cli {

milliseconds request_timeout_of(const client_settings& settings) {
  return settings.wait ? std::min(default_request_timeout, settings.timeout) : settings.timeout;
}

std::variant<nlohmann::json, int> ask_leader(daemon_client& client, const nlohmann::json& request,
                                             time_point deadline, const std::string& refused,
                                             std::ostream& err) {
  if (auto why = client.connect(deadline); !why.empty()) {
    err << client.unreachable(why) << '\n';
    return exit_failure;
  }
  message reply = client.ask(request, deadline);
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
    err << "baton: " << refused << ": " << error << '\n';
    return exit_failure;
  }
  const std::string cmd = request.value("cmd", "");
  if (type != cmd) {
    err << client.unreachable("unexpected reply to " + cmd + ": " +
                              printable(reply.line.substr(0, 200)))
        << '\n';
    return exit_failure;
  }
  return std::move(reply.object);
}

int wait_for_leader(daemon_client& client, const std::function<bool(const std::string&)>& wanted,
                    time_point deadline, const std::string& gave_up, std::ostream& out,
                    std::ostream& err) {
  // The deadline ends the loop; the count is only a backstop.
  for (long polls = 0; polls < 10'000'000; ++polls) {
    const time_point now = mono_clock::now();
    message reply =
        client.ask({{"cmd", "status"}}, std::min(now + default_request_timeout, deadline));
    if (reply.what == io_result::kind::timed_out && mono_clock::now() >= deadline) {
      err << gave_up << '\n';
      return exit_no_successor;
    }
    if (!reply.ok()) {
      err << client.unreachable(reply) << '\n';
      return exit_failure;
    }
    if (string_field(reply.object, "type") == "error") {
      err << "baton: the daemon answered: " << daemon_error_text(reply.object) << '\n';
      return exit_failure;
    }
    if (auto leader = string_field(reply.object, "leader"); leader && wanted(*leader)) {
      out << "new leader: " << printable(*leader);
      if (auto token = int_field(reply.object, "token"); token && *token > 0) {
        out << " (token " << *token << ")";
      }
      out << std::endl;
      return exit_ok;
    }
    if (mono_clock::now() + resign_poll_interval >= deadline) break;
    std::this_thread::sleep_for(resign_poll_interval);
  }
  err << gave_up << '\n';
  return exit_no_successor;
}

}  // namespace baton::cli
