// The zookeeper kind: an ephemeral lease node, a record and a registry of
// candidates per election (zookeeper: section). What its options mean, how
// its store is made and how `check-store` checks the ensemble.
#include "zookeeper_kind.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <memory>
#include <utility>

#include "config_schema/option_rules.hpp"
#include "four_letter_answers.hpp"
#include "lease_nodes.hpp"
#include "server_list.hpp"
#include "store/check_lines.hpp"
#include "zk_link.hpp"
#include "zookeeper_option_rows.hpp"
#include "zookeeper_store.hpp"
#include "zookeeper_settings.hpp"

namespace baton {
namespace {

// Rules name this kind's options by its own rows.
using rules = option_rules_of<zookeeper_option_rows>;

namespace asio = boost::asio;

// --- options -----------------------------------------------------------------

std::string joined(const std::vector<std::string>& servers) {
  std::string out;
  for (const auto& s : servers) out += (out.empty() ? "" : ",") + s;
  return out;
}

void fill_zookeeper_defaults(config& cfg, option_origins* origins) {
  auto& z = zookeeper_settings_of(cfg);
  if (z.command_timeout.count() == 0) {
    z.command_timeout = derived_command_timeout(cfg);
    rules::note_derived(cfg, origins, z.command_timeout,
                 "default: min(1s, lease.renew_interval / 2)");
  }
  if (z.session_timeout.count() == 0) {
    z.session_timeout = cfg.lease.ttl;
    rules::note_derived(cfg, origins, z.session_timeout, "default: lease.ttl");
  }
}

void check_zookeeper_form(const config& cfg) {
  const auto& z = zookeeper_settings_of(cfg);
  if (z.path.empty() || z.path.front() != '/' || (z.path.size() > 1 && z.path.back() == '/')) {
    throw config_error(rules::option_name(cfg, z.path), z.path,
                       "must be an absolute node path such as /baton (no trailing /)");
  }
  if (z.path == "/zookeeper" || z.path.starts_with("/zookeeper/")) {
    throw config_error(rules::option_name(cfg, z.path), z.path, "is ZooKeeper's own subtree");
  }
  rules::require_positive(cfg, z.connect_timeout);
  rules::require_positive(cfg, z.command_timeout);
  rules::require_one_word(cfg, z.username);
  if (z.username.find(':') != std::string::npos) {
    throw config_error(rules::option_name(cfg, z.username), z.username,
                       "must not hold ':' (digest credentials are user:password)");
  }
  for (const auto* text : {&z.path, &z.username, &z.password_file}) rules::require_utf8(cfg, *text);
}

void validate_zookeeper(const config& cfg) {
  const auto& z = zookeeper_settings_of(cfg);
  const std::string option = rules::option_name(cfg, z.servers);
  if (z.servers.empty()) {
    throw config_error::with_message(
        option, option + " is required for store.kind zookeeper: give the ensemble's host:port");
  }
  const auto parsed = zookeeper_detail::parse_servers(joined(z.servers));
  if (!parsed.error.empty()) throw config_error::with_message(option, option + ": " + parsed.error);
  // A session shorter than the ttl would let the server delete a working
  // leader's node before its lease ends.
  if (z.session_timeout < cfg.lease.ttl) {
    throw config_error(rules::option_name(cfg, z.session_timeout),
                       std::to_string(z.session_timeout.count()) + "ms",
                       "must be at least lease.ttl (" + std::to_string(cfg.lease.ttl.count()) +
                           "ms): the server would end a leader's session before its lease");
  }
  if (z.username.empty() != z.password_file.empty()) {
    const auto& missing = z.username.empty() ? z.username : z.password_file;
    const auto& set = z.username.empty() ? z.password_file : z.username;
    throw config_error::with_message(rules::option_name(cfg, missing),
                                     rules::option_name(cfg, set) + " is set but " +
                                         rules::option_name(cfg, missing) + " is not: give both or neither");
  }
  rules::require_readable(cfg, z.password_file, false);
}

// The password is read from its file when the store is made: nothing to
// resolve at start, and nothing of it is kept in the config.
void resolve_zookeeper_secrets(config&, const environment&, const option_origins&) {}

// --- the store ---------------------------------------------------------------

zookeeper_store_options store_options(const config& cfg) {
  const auto& z = zookeeper_settings_of(cfg);
  zookeeper_store_options o;
  o.servers = joined(z.servers);
  o.path = z.path;
  o.session_timeout = z.session_timeout;
  o.connect_timeout = z.connect_timeout;
  o.command_timeout = z.command_timeout;
  if (!z.username.empty()) o.auth_scheme = "digest";
  o.auth_user = z.username;
  o.password_file = z.password_file;
  o.identity = store_identity_of(cfg);
  return o;
}

std::unique_ptr<lease_store> make_zookeeper_store(asio::io_context& io, const config& cfg) {
  return std::make_unique<zookeeper_store>(io, store_options(cfg));
}

milliseconds zookeeper_call_bound(const config& cfg) {
  const auto& z = zookeeper_settings_of(cfg);
  // A call waits up to connect_timeout for a session, then command_timeout
  // for its answers (zookeeper_store.hpp).
  return z.connect_timeout + z.command_timeout;
}

// --- check-store -------------------------------------------------------------

// One four-letter word asked of one server (its own connection: the server
// answers and closes): the answer, or why there is none, and the time the
// answer took.
struct four_letter_probe : std::enable_shared_from_this<four_letter_probe> {
  using callback =
      std::function<void(std::string error, std::string answer, std::chrono::nanoseconds took)>;
  asio::ip::tcp::resolver resolver;
  asio::ip::tcp::socket socket;
  asio::steady_timer deadline;
  std::string word;
  std::string answer;
  std::chrono::steady_clock::time_point sent;
  callback done;

  four_letter_probe(asio::io_context& io, std::string w, callback cb)
      : resolver(io), socket(io), deadline(io), word(std::move(w)), done(std::move(cb)) {}

  void start(const zookeeper_detail::server_address& s, milliseconds timeout) {
    deadline.expires_after(timeout);
    deadline.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->fail("no answer within the timeout");
    });
    resolver.async_resolve(s.host, std::to_string(s.port),
                           [self = shared_from_this()](boost::system::error_code ec,
                                                       asio::ip::tcp::resolver::results_type r) {
                             if (ec) return self->fail("cannot resolve it: " + ec.message());
                             asio::async_connect(self->socket, r,
                                                 [self](boost::system::error_code e, const auto&) {
                                                   if (e) return self->fail(e.message());
                                                   self->ask();
                                                 });
                           });
  }

  void ask() {
    sent = std::chrono::steady_clock::now();
    asio::async_write(socket, asio::buffer(word),
                      [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                        if (ec) return self->fail(ec.message());
                        self->read();
                      });
  }

  void read() {
    // The server writes its answer and closes: read to the end.
    asio::async_read(socket, asio::dynamic_buffer(answer, 64 * 1024),
                     [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                       if (ec && ec != asio::error::eof) return self->fail(ec.message());
                       self->end({}, std::chrono::steady_clock::now() - self->sent);
                     });
  }

  void fail(const std::string& why) { end(why, {}); }

  void end(std::string error, std::chrono::nanoseconds took) {
    if (!done) return;
    deadline.cancel();
    boost::system::error_code ignored;
    socket.close(ignored);
    auto finish = std::move(done);
    done = nullptr;
    // Read before the error is moved into the call: argument order is unspecified.
    std::string heard = error.empty() ? std::move(answer) : std::string();
    finish(std::move(error), std::move(heard), took);
  }
};

// What one server answered: its lines (srvr, then conf's figures), whether
// it serves clients (srvr answered, and not "not currently serving"), and
// its conf (nullopt when conf was refused or unanswered).
struct server_answers {
  std::vector<check_line> lines;
  bool serving = false;
  std::optional<zookeeper_detail::server_conf> conf;
};

// One server: `srvr` (reachable, version, mode, latency), then `conf` (the
// tick and the followers' limits; the ensemble's stale-follower window is
// weighed once, from every server's).
void check_server(asio::io_context& io, const zookeeper_detail::server_address& s,
                  milliseconds timeout, std::function<void(server_answers)> done) {
  const auto where = s.host + ":" + std::to_string(s.port);
  auto srvr = std::make_shared<four_letter_probe>(
      io, "srvr",
      [&io, s, where, timeout, done = std::move(done)](std::string error, std::string answer,
                                                       std::chrono::nanoseconds took) mutable {
        server_answers a;
        if (!error.empty()) {
          a.lines.push_back({check_verdict::failure, "reachable", where + ": " + error});
          return done(std::move(a));
        }
        if (zookeeper_detail::not_serving(answer)) {
          a.lines.push_back({check_verdict::failure, "reachable",
                             where + ": not serving clients (starting, or cut off from the "
                                     "quorum)"});
          return done(std::move(a));
        }
        a.lines = zookeeper_detail::srvr_lines(answer, where, took);
        a.serving = true;
        auto conf = std::make_shared<four_letter_probe>(
            io, "conf",
            [a = std::move(a), done = std::move(done)](
                std::string conf_error, std::string conf_answer, std::chrono::nanoseconds) mutable {
              if (!conf_error.empty()) {
                a.lines.push_back(
                    {check_verdict::note, "conf", "conf went unanswered (" + conf_error + ")"});
              } else {
                a.lines.push_back(zookeeper_detail::conf_line(conf_answer));
                if (!zookeeper_detail::refused_by_whitelist(conf_answer))
                  a.conf = zookeeper_detail::parse_conf(conf_answer);
              }
              done(std::move(a));
            });
        conf->start(s, timeout);
      });
  srvr->start(s, timeout);
}

// The srvr answers of every server, then (for servers given as addresses)
// one session, to read the timeout the ensemble grants against the ttl.
struct zookeeper_check : std::enable_shared_from_this<zookeeper_check> {
  std::vector<server_answers> per_server;
  std::size_t left = 0;
  check_report report;
  std::function<void(check_report)> done;
  milliseconds ttl{0};
  milliseconds asked{0};
  milliseconds connect_timeout{0};
  zookeeper_detail::lease_timing timing;
  milliseconds command_timeout{0};
  std::string hosts;  // "" = a server is a name: no session check
  std::shared_ptr<zookeeper_detail::zk_link> link;
  std::unique_ptr<asio::steady_timer> timer;

  void servers_done(asio::io_context& io) {
    std::size_t serving = 0;
    std::vector<std::optional<zookeeper_detail::server_conf>> confs;
    for (const auto& a : per_server) {
      serving += a.serving ? 1 : 0;
      confs.push_back(a.conf);
    }
    for (std::size_t i = 0; i < per_server.size(); ++i) {
      for (auto line : per_server[i].lines) {
        if (per_server.size() > 1) {
          line.topic = "server " + std::to_string(i + 1) + " " + line.topic;
          // One server down of an ensemble that serves: the session goes to
          // the others; the report fails only when none serves.
          if (line.verdict == check_verdict::failure && serving > 0) {
            line.verdict = check_verdict::hazard;
            line.text += "; the session goes to the others";
          }
        }
        report.lines.push_back(std::move(line));
      }
    }
    report.lines.push_back(zookeeper_detail::stale_follower_line(confs, timing, per_server.size()));
    report.lines.push_back(
        zookeeper_detail::stall_line(timing, command_timeout, per_server.size()));
    if (serving == 0) {
      // A session opened now could find a server that came up meanwhile,
      // and say "ok" under a report that says none serves.
      report.lines.push_back(
          {check_verdict::failure, "session", "not tried: no server serves clients (see above)"});
      return finish();
    }
    if (hosts.empty()) {
      report.lines.push_back({check_verdict::note, "session",
                              "asks for " + std::to_string(asked.count()) +
                                  " ms; the granted timeout is checked against lease.ttl at every "
                                  "connect (give addresses to have it checked here)"});
      return finish();
    }
    open_session(io);
  }

  void open_session(asio::io_context& io) {
    zookeeper_detail::zk_link_options o;
    o.hosts = hosts;
    o.session_timeout = asked;
    o.owner = shared_from_this();
    o.on_state = [weak = weak_from_this()](int) {
      if (auto self = weak.lock()) self->on_state();
    };
    std::string error;
    link = zookeeper_detail::zk_link::open(io, std::move(o), error);
    if (!link) {
      report.lines.push_back({check_verdict::failure, "session", error});
      return finish();
    }
    timer = std::make_unique<asio::steady_timer>(io, connect_timeout);
    // The timer's wait holds the check alive until the session answers or
    // the time is up (finish() cancels it).
    timer->async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || !self->done) return;
      self->report.lines.push_back({check_verdict::failure, "session",
                                    "no session within zookeeper.connect_timeout (" +
                                        std::to_string(self->connect_timeout.count()) + " ms)"});
      self->finish();
    });
  }

  void on_state() {
    if (!done || !link || !link->connected()) return;
    const auto granted = link->negotiated_timeout();
    check_line line{check_verdict::ok, "session",
                    "granted " + std::to_string(granted.count()) + " ms (asked " +
                        std::to_string(asked.count()) + " ms; lease.ttl " +
                        std::to_string(ttl.count()) + " ms)"};
    // The words of the daemon's own acquire error.
    if (const auto problem = zookeeper_detail::session_timeout_problem(granted, ttl)) {
      line.verdict = check_verdict::failure;
      line.text += ": baton refuses to lead: " + *problem;
    } else if (const auto long_one =
                   zookeeper_detail::session_timeout_too_long(granted, asked, ttl)) {
      line.verdict = check_verdict::hazard;
      line.text += ": " + *long_one;
    }
    report.lines.push_back(std::move(line));
    finish();
  }

  void finish() {
    if (!done) return;
    if (timer) timer->cancel();
    if (link) link->close();
    auto callback = std::move(done);
    done = nullptr;
    callback(std::move(report));
  }
};

void check_zookeeper(asio::io_context& io, const config& cfg,
                     std::function<void(check_report)> done) {
  auto check = std::make_shared<zookeeper_check>();
  check->done = std::move(done);
  const auto& z = zookeeper_settings_of(cfg);
  check->ttl = cfg.lease.ttl;
  check->asked = z.session_timeout;
  check->connect_timeout = z.connect_timeout;
  check->report.lines.push_back(zookeeper_detail::auth_line(z.username));
  check->report.lines.push_back(
      {check_verdict::note, "tls",
       "none: Debian's ZooKeeper C client has no TLS; keep the client port on a private "
       "network"});
  const auto parsed = zookeeper_detail::parse_servers(joined(z.servers));
  if (!parsed.error.empty() || parsed.servers.empty()) {
    check->report.lines.push_back({check_verdict::failure, "servers", parsed.error});
    check->finish();
    return;
  }
  bool numeric = true;
  for (const auto& s : parsed.servers) numeric = numeric && s.numeric;
  if (numeric) check->hosts = zookeeper_detail::client_hosts(parsed.servers);
  check->timing = {cfg.lease.ttl, cfg.lease.renew_interval, cfg.lease.renew_deadline};
  check->command_timeout = z.command_timeout;
  check->per_server.resize(parsed.servers.size());
  check->left = parsed.servers.size();
  for (std::size_t i = 0; i < parsed.servers.size(); ++i) {
    check_server(io, parsed.servers[i], z.connect_timeout + z.command_timeout,
                 [check, i, &io](server_answers answers) {
                   check->per_server[i] = std::move(answers);
                   if (--check->left == 0) check->servers_done(io);
                 });
  }
}

constexpr std::string_view zookeeper_sections[] = {"zookeeper"};

}  // namespace

const store_kind zookeeper_kind{
    .name = "zookeeper",
    .label = "ZooKeeper",
    .options = zookeeper_option_rows,
    .sections = zookeeper_sections,
    .fill_derived_defaults = fill_zookeeper_defaults,
    .check_form = check_zookeeper_form,
    .validate = validate_zookeeper,
    .resolve_secrets = resolve_zookeeper_secrets,
    .make_store = make_zookeeper_store,
    .check = check_zookeeper,
    .call_bound = zookeeper_call_bound,
    .peer_confirmed_leadership = true,
};

}  // namespace baton
