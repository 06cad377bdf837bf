// `baton status` and `baton health`: one {"cmd":"status"} request each, read
// as a table, a JSON line or a health verdict.
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"

namespace baton::cli {
namespace {

/// The daemon's status object, or nullopt after printing why there is none.
std::optional<nlohmann::json> fetch_status(daemon_client& client, time_point deadline,
                                           std::ostream& err) {
  if (auto why = client.connect(deadline); !why.empty()) {
    err << client.unreachable(why) << '\n';
    return std::nullopt;
  }
  message reply = client.ask({{"cmd", "status"}}, deadline);
  if (!reply.ok()) {
    err << client.unreachable(reply) << '\n';
    return std::nullopt;
  }
  const auto type = string_field(reply.object, "type");
  if (type == "error") {
    err << "baton: the daemon answered: "
        << printable(string_field(reply.object, "error").value_or("an error without a message"))
        << '\n';
    return std::nullopt;
  }
  if (type != "status") {
    err << client.unreachable("unexpected reply to status: " + printable(reply.line.substr(0, 200)))
        << '\n';
    return std::nullopt;
  }
  return std::move(reply.object);
}

}  // namespace

int run_status(const client_settings& settings, std::ostream& out, std::ostream& err) {
  daemon_client client(settings.socket_path, settings.timeout);
  auto status = fetch_status(client, mono_clock::now() + settings.timeout, err);
  if (!status) return exit_failure;
  if (settings.json) {
    status->erase("type");
    out << status->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    out << status_table(*status);
  }
  out.flush();
  return bool_field(*status, "is_leader").value_or(false) ? exit_ok : exit_not_leader;
}

int run_health(const client_settings& settings, std::ostream& out, std::ostream& err) {
  daemon_client client(settings.socket_path, settings.timeout);
  auto status = fetch_status(client, mono_clock::now() + settings.timeout, err);
  if (!status) return exit_failure;
  // A daemon that does not report health is healthy as long as it answers.
  if (bool_field(*status, "healthy").value_or(true)) {
    if (settings.verbose) out << "healthy: " << status_line(*status) << std::endl;
    return exit_ok;
  }
  err << "baton: unhealthy: "
      << printable(string_field(*status, "health").value_or("the daemon reports a problem"))
      << '\n';
  return exit_failure;
}

}  // namespace baton::cli
