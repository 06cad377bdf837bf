// The etcd kind: a key on an etcd lease (etcd: section). What its options
// mean, how its store is made and how `check-store` checks the cluster.
#include "etcd_kind.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "config_schema/option_rules.hpp"
#include "auth_line.hpp"
#include "etcd_option_rows.hpp"
#include "etcd_store.hpp"
#include "etcd_wire.hpp"
#include "http_client.hpp"
#include "member_status.hpp"
#include "store/check_lines.hpp"
#include "etcd_settings.hpp"

namespace baton {
namespace {

// Rules name this kind's options by its own rows.
using rules = option_rules_of<etcd_option_rows>;

using etcd_detail::http_client;

// --- options -----------------------------------------------------------------

void fill_etcd_defaults(config& cfg, option_origins* origins) {
  auto& e = etcd_settings_of(cfg);
  if (e.command_timeout.count() == 0) {
    e.command_timeout = derived_command_timeout(cfg);
    rules::note_derived(cfg, origins, e.command_timeout,
                 "default: min(1s, lease.renew_interval / 2)");
  }
}

void check_etcd_form(const config& cfg) {
  const auto& e = etcd_settings_of(cfg);
  if (e.prefix.empty()) {
    throw config_error(rules::option_name(cfg, e.prefix), "\"\"",
                       "must not be empty: every key of every election would share the root");
  }
  rules::require_positive(cfg, e.connect_timeout);
  rules::require_positive(cfg, e.command_timeout);
  rules::require_one_word(cfg, e.username);
  for (const auto* text : {&e.prefix, &e.username, &e.password_file, &e.tls_ca_file,
                           &e.tls_cert_file, &e.tls_key_file}) {
    rules::require_utf8(cfg, *text);
  }
}

// A URL is named by its place in the list, never shown: it may carry a
// password by mistake.
void validate_etcd(const config& cfg) {
  const auto& e = etcd_settings_of(cfg);
  const std::string option = rules::option_name(cfg, e.endpoints);
  if (e.endpoints.empty()) {
    throw config_error::with_message(
        option, option + " is required for store.kind etcd: give the members' client URLs");
  }
  std::optional<std::string> scheme;
  for (std::size_t i = 0; i < e.endpoints.size(); ++i) {
    const std::string entry = option + ": entry " + std::to_string(i + 1);
    if (e.endpoints[i].find('@') != std::string::npos) {
      throw config_error::with_message(
          option, entry + " carries a user or password: use etcd.username and "
                          "etcd.password_file, never a URL");
    }
    auto parsed = etcd_detail::parse_endpoint(e.endpoints[i]);
    if (const auto* problem = std::get_if<std::string>(&parsed)) {
      throw config_error::with_message(option, entry + ": " + *problem);
    }
    const auto& ep = std::get<etcd_detail::endpoint>(parsed);
    if (scheme && *scheme != ep.scheme) {
      throw config_error::with_message(option,
                                       option + " mixes http:// and https://: use one for all");
    }
    scheme = ep.scheme;
  }
  const std::string* tls_set = !e.tls_ca_file.empty()     ? &e.tls_ca_file
                               : !e.tls_cert_file.empty() ? &e.tls_cert_file
                               : !e.tls_key_file.empty()  ? &e.tls_key_file
                                                          : nullptr;
  if (tls_set != nullptr && scheme != "https") {
    throw config_error::with_message(
        rules::option_name(cfg, *tls_set),
        rules::option_name(cfg, *tls_set) +
            " is set but etcd.endpoints are not https:// URLs: TLS settings apply only to "
            "https:// (write https:// to use TLS)");
  }
  if (e.tls_cert_file.empty() != e.tls_key_file.empty()) {
    const auto& set = e.tls_cert_file.empty() ? e.tls_key_file : e.tls_cert_file;
    const auto& missing = e.tls_cert_file.empty() ? e.tls_cert_file : e.tls_key_file;
    throw config_error::with_message(rules::option_name(cfg, missing),
                                     rules::option_name(cfg, set) + " is set but " +
                                         rules::option_name(cfg, missing) +
                                         " is not: a client certificate needs both");
  }
  if (e.username.empty() != e.password_file.empty()) {
    const auto& missing = e.username.empty() ? e.username : e.password_file;
    const auto& set = e.username.empty() ? e.password_file : e.username;
    throw config_error::with_message(rules::option_name(cfg, missing),
                                     rules::option_name(cfg, set) + " is set but " +
                                         rules::option_name(cfg, missing) + " is not: give both or neither");
  }
  for (const auto* path : {&e.tls_ca_file, &e.tls_cert_file, &e.tls_key_file, &e.password_file}) {
    rules::require_readable(cfg, *path, false);
  }
}

// The password is read from its file at every authentication: nothing to
// resolve at start, and nothing of it is kept in the config.
void resolve_etcd_secrets(config&, const environment&, const option_origins&) {}

// --- the store ---------------------------------------------------------------

etcd_store_options store_options(const config& cfg) {
  const auto& e = etcd_settings_of(cfg);
  etcd_store_options o;
  o.endpoints = e.endpoints;
  o.prefix = e.prefix;
  o.connect_timeout = e.connect_timeout;
  o.command_timeout = e.command_timeout;
  o.identity = store_identity_of(cfg);
  o.username = e.username;
  o.password_file = e.password_file;
  o.tls_ca_file = e.tls_ca_file;
  o.tls_cert_file = e.tls_cert_file;
  o.tls_key_file = e.tls_key_file;
  return o;
}

std::unique_ptr<lease_store> make_etcd_store(boost::asio::io_context& io, const config& cfg) {
  return std::make_unique<etcd_store>(io, store_options(cfg));
}

milliseconds etcd_call_bound(const config& cfg) {
  const auto& e = etcd_settings_of(cfg);
  // An authentication, a read, a grant and the txn: an acquire is up to
  // three calls after the connect and the authentication.
  return e.connect_timeout + 4 * e.command_timeout;
}

// --- check-store -------------------------------------------------------------

// The questions, one after the other on one client: status (reachable,
// version, leader, latency), the members, and the smallest lease the
// cluster grants against the ttl; then every endpoint's own status, each on
// a connection of its own (etcd.endpoints lists members the store may move
// to, and each should be fit to serve).
struct etcd_check : std::enable_shared_from_this<etcd_check> {
  boost::asio::io_context* io = nullptr;
  std::shared_ptr<http_client> client;
  etcd_detail::http_options connection;
  check_report report;
  std::function<void(check_report)> done;
  milliseconds ttl{0};
  std::string where;
  // Each endpoint's own status line, asked of every endpoint at once.
  std::vector<check_line> per_endpoint;
  std::size_t endpoints_left = 0;

  void add(check_verdict v, std::string topic, std::string text) {
    report.lines.push_back({v, std::move(topic), std::move(text)});
  }
  void finish() {
    client->close();
    probe_endpoints();
  }

  // One status call per endpoint, each on a connection to it alone: its
  // version, whether it leads, raft term and index, and latency.
  void probe_endpoints() {
    const auto& all = connection.endpoints;
    per_endpoint.assign(all.size(), {});
    endpoints_left = all.size();
    if (all.empty()) return report_done();
    for (std::size_t i = 0; i < all.size(); ++i) {
      auto one = connection;
      one.endpoints = {all[i]};
      one.on_outcome = nullptr;
      auto probe = http_client::create(*io, std::move(one));
      // The first call pays for the connection and, with a user, for the
      // password's check (bcrypt on the server: tens to hundreds of ms on
      // a busy host); the line times the second, what a lease call costs.
      probe->post("/v3/maintenance/status", "{}",
                  [self = shared_from_this(), probe, i](store_error e, nlohmann::json answer) {
                    if (e) return self->endpoint_done(probe, i, e, answer, {});
                    const auto sent = std::chrono::steady_clock::now();
                    probe->post("/v3/maintenance/status", "{}",
                                [self, probe, i, sent](store_error again, nlohmann::json status) {
                                  self->endpoint_done(probe, i, again, status,
                                                      std::chrono::steady_clock::now() - sent);
                                });
                  });
    }
  }

  void endpoint_done(const std::shared_ptr<http_client>& probe, std::size_t i, const store_error& e,
                     const nlohmann::json& answer, std::chrono::nanoseconds took) {
    auto line =
        etcd_detail::endpoint_line(connection.endpoints[i].redacted(), e, answer, took, ttl);
    if (connection.endpoints.size() > 1) line.topic += " " + std::to_string(i + 1);
    per_endpoint[i] = std::move(line);
    probe->close();
    if (--endpoints_left == 0) report_done();
  }

  void report_done() {
    for (auto& line : per_endpoint) report.lines.push_back(std::move(line));
    auto report_copy = std::move(report);
    auto callback = std::move(done);
    callback(std::move(report_copy));
  }

  void start() {
    client->post("/v3/maintenance/status", "{}",
                 [self = shared_from_this()](store_error e, nlohmann::json answer) {
                   self->on_status(std::move(e), answer);
                 });
  }

  void on_status(store_error e, const nlohmann::json& answer) {
    if (e) {
      add(check_verdict::failure, "reachable", where + ": " + e.message());
      finish();
      return;
    }
    add(check_verdict::ok, "reachable",
        where + (where.starts_with("https") ? " (TLS, the certificate verified)" : ""));
    const std::string version = answer.value("version", std::string("unknown"));
    add(version.starts_with("3.") ? check_verdict::ok : check_verdict::hazard, "version",
        "etcd " + version + (version.starts_with("3.") ? "" : ": baton is tested on etcd 3.4"));
    // Member ids are uint64 (above int64's range), as decimal strings.
    std::string leader;
    if (answer.contains("leader") && answer["leader"].is_string()) {
      leader = answer["leader"].get<std::string>();
    } else if (answer.contains("leader") && answer["leader"].is_number_unsigned()) {
      leader = std::to_string(answer["leader"].get<std::uint64_t>());
    }
    if (leader.empty() || leader == "0") {
      add(check_verdict::failure, "leader", "the member knows no leader: no write can succeed");
    } else {
      // In hex, as etcdctl prints member ids.
      add(check_verdict::ok, "leader", "member id " + etcd_detail::member_id_text(leader));
    }
    // The call above paid for the connection and, with a user, for the
    // password's check (bcrypt on the server): time a second one.
    const auto sent = std::chrono::steady_clock::now();
    client->post("/v3/maintenance/status", "{}",
                 [self = shared_from_this(), sent](store_error error, nlohmann::json) {
                   self->on_latency(std::move(error), std::chrono::steady_clock::now() - sent);
                 });
  }

  void on_latency(store_error e, std::chrono::nanoseconds took) {
    if (e) {
      add(check_verdict::failure, "latency", "a second status call: " + e.message());
      finish();
      return;
    }
    const auto latency = std::chrono::duration_cast<milliseconds>(took);
    const bool slow = latency * 10 > ttl;
    add(slow ? check_verdict::hazard : check_verdict::ok, "latency",
        store_check_detail::ms_text(took) + " for a status call" +
            (slow ? ": more than a tenth of lease.ttl" : ""));
    client->post("/v3/cluster/member/list", "{}",
                 [self = shared_from_this()](store_error error, nlohmann::json members) {
                   self->on_members(std::move(error), members);
                 });
  }

  void on_members(store_error e, const nlohmann::json& answer) {
    if (e) {
      add(check_verdict::failure, "members", e.message());
      finish();
      return;
    }
    const auto n = answer.contains("members") ? answer["members"].size() : 0;
    add(n >= 3 ? check_verdict::ok : check_verdict::note, "members",
        std::to_string(n) + (n == 1 ? " member" : " members") +
            (n >= 3 ? "" : ": fewer than 3 members survive no member's loss"));
    // Grant the smallest lease and give it back: what the cluster grants
    // for 1 s is its smallest TTL (1.5 election timeouts, rounded up).
    client->post("/v3/lease/grant", etcd_detail::grant_request(1),
                 [self = shared_from_this()](store_error error, nlohmann::json grant) {
                   self->on_grant(std::move(error), grant);
                 });
  }

  void on_grant(store_error e, const nlohmann::json& answer) {
    if (e) {
      add(check_verdict::failure, "lease", "a lease grant failed: " + e.message());
      finish();
      return;
    }
    etcd_detail::grant_answer grant;
    try {
      grant = etcd_detail::read_grant(answer);
    } catch (const std::exception& bad) {
      add(check_verdict::failure, "lease", std::string("the grant's answer: ") + bad.what());
      finish();
      return;
    }
    const auto wanted = (ttl.count() + 999) / 1000;
    const bool fits = grant.ttl_seconds <= wanted;
    add(fits ? check_verdict::ok : check_verdict::failure, "lease",
        "the smallest lease granted is " + std::to_string(grant.ttl_seconds) + " s; lease.ttl " +
            std::to_string(ttl.count()) + " ms asks for " + std::to_string(wanted) + " s" +
            (fits ? "" : ": raise lease.ttl or lower the members' election timeout"));
    client->post("/v3/lease/revoke", etcd_detail::lease_id_request(grant.id),
                 [self = shared_from_this()](store_error, nlohmann::json) { self->finish(); });
  }
};

void check_etcd(boost::asio::io_context& io, const config& cfg,
                std::function<void(check_report)> done) {
  const auto& e = etcd_settings_of(cfg);
  auto check = std::make_shared<etcd_check>();
  check->done = std::move(done);
  check->ttl = cfg.lease.ttl;
  check->where = e.endpoints.empty() ? "" : e.endpoints.front();
  check->io = &io;
  try {
    check->connection = etcd_detail::connection_options(store_options(cfg));
    check->client = http_client::create(io, check->connection);
  } catch (const std::exception& bad) {
    check->report.lines.push_back({check_verdict::failure, "settings", bad.what()});
    auto callback = std::move(check->done);
    callback(std::move(check->report));
    return;
  }
  check->report.lines.push_back(
      etcd_detail::auth_line(e.username, check->connection.endpoints));
  check->start();
}

constexpr std::string_view etcd_sections[] = {"etcd"};

}  // namespace

const store_kind etcd_kind{
    .name = "etcd",
    .label = "etcd",
    .options = etcd_option_rows,
    .sections = etcd_sections,
    .fill_derived_defaults = fill_etcd_defaults,
    .check_form = check_etcd_form,
    .validate = validate_etcd,
    .resolve_secrets = resolve_etcd_secrets,
    .make_store = make_etcd_store,
    .check = check_etcd,
    .call_bound = etcd_call_bound,
    .peer_confirmed_leadership = true,
};

}  // namespace baton
