// `baton status` and `baton health`: one {"cmd":"status"} request each, read
// as a table, a JSON line or a verdict: liveness ("healthy", "health") by
// default, readiness ("ready", "readiness") with --ready. When there is no
// status, `status --json` still prints one JSON object:
// {"error":...,"socket":...}.
#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"

namespace baton::cli {
namespace {

/// The daemon's status object, or why there is none: a phrase for "baton:
/// <why>" ("cannot reach the daemon at <path>: ...", "the daemon answered:
/// ...").
struct status_or_why {
  std::optional<nlohmann::json> status;
  std::string why;
};

status_or_why fetch_status(daemon_client& client, time_point deadline) {
  // unreachable() words it for stderr; the JSON error has no "baton: ".
  const auto failed = [](std::string line) {
    if (line.starts_with("baton: ")) line.erase(0, 7);
    return status_or_why{std::nullopt, std::move(line)};
  };
  if (auto why = client.connect(deadline); !why.empty()) return failed(client.unreachable(why));
  message reply = client.ask({{"cmd", "status"}}, deadline);
  if (!reply.ok()) return failed(client.unreachable(reply));
  const auto type = string_field(reply.object, "type");
  if (type == "error") {
    return failed("the daemon answered: " + daemon_error_text(reply.object));
  }
  if (type != "status") {
    return failed(client.unreachable("unexpected reply to status: " +
                                     printable(reply.line.substr(0, 200))));
  }
  return {std::move(reply.object), ""};
}

}  // namespace

int run_status(const client_settings& settings, std::ostream& out, std::ostream& err) {
  daemon_client client(settings.socket_path, settings.timeout);
  auto [status, why] = fetch_status(client, mono_clock::now() + settings.timeout);
  if (!status) {
    err << "baton: " << why << '\n';
    // A script reading --json gets an object either way, and the exit code.
    if (settings.json) {
      const nlohmann::json error{{"error", why}, {"socket", settings.socket_path}};
      out << error.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    }
    return exit_failure;
  }
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
  auto [status, why] = fetch_status(client, mono_clock::now() + settings.timeout);
  if (!status) {
    err << "baton: " << why << '\n';
    return exit_failure;
  }
  // A daemon that does not report health is healthy as long as it answers;
  // one from before readiness had its own fields counted the store in
  // "healthy", which is the nearest answer it has.
  const bool readiness = settings.ready && status->contains("ready");
  const char* const yes_field = readiness ? "ready" : "healthy";
  const char* const why_field = readiness ? "readiness" : "health";
  const char* const yes = settings.ready ? "ready" : "healthy";
  const char* const no = settings.ready ? "not ready" : "unhealthy";
  if (bool_field(*status, yes_field).value_or(true)) {
    if (settings.verbose) out << yes << ": " << status_line(*status) << std::endl;
    return exit_ok;
  }
  err << "baton: " << no << ": "
      << printable(string_field(*status, why_field).value_or("the daemon reports a problem"))
      << '\n';
  return exit_failure;
}

}  // namespace baton::cli
