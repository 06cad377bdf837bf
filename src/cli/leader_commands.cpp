// `baton leader`, `baton drain` and `baton undrain`: who leads and where its
// service is, as this node's daemon knows it; and whether this node may
// lead (drain_control.hpp in the daemon says what a drain does).
#include <thread>

#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"
#include "leader_wait.hpp"

namespace baton::cli {
namespace {

// A standby lists the candidates (where the leader's address is) when
// asked: a status that names a leader its list lacks yet is asked again, a
// few times.
constexpr int leader_asks = 4;
constexpr milliseconds leader_ask_gap{250};

bool lists_leader(const nlohmann::json& status) {
  const auto leader = string_field(status, "leader");
  if (!leader || string_field(status, "leader_advertise") ||
      leader == string_field(status, "node_id")) {
    return true;
  }
  const auto it = status.find("candidates");
  if (it == status.end() || !it->is_array()) return false;
  for (const auto& c : *it) {
    if (c.is_object() && string_field(c, "node") == leader) return true;
  }
  return false;
}

}  // namespace

int run_leader(const client_settings& settings, std::ostream& out, std::ostream& err) {
  const time_point deadline = mono_clock::now() + settings.timeout;
  nlohmann::json status;
  for (int ask = 0; ask < leader_asks; ++ask) {
    // A connection per ask: ask_leader connects the client it is given.
    daemon_client client(settings.socket_path, settings.timeout);
    auto answer = ask_leader(client, {{"cmd", "status"}}, deadline,
                             "the daemon did not answer the status", err);
    if (const int* code = std::get_if<int>(&answer)) return *code;
    status = std::move(std::get<nlohmann::json>(answer));
    if (lists_leader(status) || mono_clock::now() + leader_ask_gap >= deadline) break;
    std::this_thread::sleep_for(leader_ask_gap);
  }
  const auto line = leader_line(status);
  if (settings.json) {
    out << leader_object(status).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << std::endl;
  } else if (line) {
    out << *line << std::endl;
  }
  if (!line) {
    err << "baton: no leader known to " << printable(string_field(status, "node_id").value_or("?"))
        << " (state " << printable(string_field(status, "state").value_or("?")) << ")\n";
    return exit_failure;
  }
  return exit_ok;
}

int run_drain(const client_settings& settings, std::ostream& out, std::ostream& err) {
  daemon_client client(settings.socket_path, settings.timeout);
  auto answer = ask_leader(client, {{"cmd", "drain"}}, mono_clock::now() + settings.timeout,
                           "the daemon refused to drain", err);
  if (const int* code = std::get_if<int>(&answer)) return *code;
  const auto& reply = std::get<nlohmann::json>(answer);
  const auto node = printable(string_field(reply, "node_id").value_or("?"));
  if (auto to = string_field(reply, "handing_over_to")) {
    out << "drained " << node << ": handing the lease over to " << printable(*to)
        << "; it takes no lease until `baton undrain`" << std::endl;
  } else {
    out << "drained " << node << (bool_field(reply, "already").value_or(false) ? " (already)" : "")
        << ": it takes no lease until `baton undrain`" << std::endl;
  }
  return exit_ok;
}

int run_undrain(const client_settings& settings, std::ostream& out, std::ostream& err) {
  daemon_client client(settings.socket_path, settings.timeout);
  auto answer = ask_leader(client, {{"cmd", "undrain"}}, mono_clock::now() + settings.timeout,
                           "the daemon refused to undrain", err);
  if (const int* code = std::get_if<int>(&answer)) return *code;
  const auto& reply = std::get<nlohmann::json>(answer);
  const auto node = printable(string_field(reply, "node_id").value_or("?"));
  if (string_field(reply, "standing") == "never") {
    out << "undrained " << node << ", which still never leads (never_lead)" << std::endl;
  } else {
    out << "undrained " << node
        << (bool_field(reply, "already").value_or(false) ? " (it was not drained)" : "")
        << ": it competes for the lease again" << std::endl;
  }
  return exit_ok;
}

}  // namespace baton::cli
