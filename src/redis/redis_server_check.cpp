// One Redis server's checks, run one after the other on a single connection
// (plus a second, short one for SUBSCRIBE). The permission probe is a script
// that tries each command baton's scripts use on a key of the election's own
// namespace (baton:{ELECTION}:check-store, never the lease) and returns the
// ones the server refused: a refusal inside a script is otherwise reported
// without the command's name.
#include "redis_server_check.hpp"

#include "baton/redis_settings.hpp"
#include "baton/store_kind.hpp"

#include <algorithm>
#include <boost/asio/ip/address.hpp>
#include <chrono>
#include <deque>
#include <memory>
#include <utility>

#include "acl_gaps.hpp"
#include "store/check_lines.hpp"
#include "redis/connection.hpp"
#include "redis/lease_keys.hpp"
#include "redis/redis_reply.hpp"
#include "redis/replica_requirement.hpp"
#include "redis/scripts.hpp"

namespace baton::store_check_detail {
namespace {

namespace asio = boost::asio;
using redis_detail::command_result;
using baton::redis_reply;

constexpr std::string_view probe_source = R"lua(
local refused = {}
local function try(...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then
    refused[#refused + 1] = {string.lower((...)), r.err}
  end
  return r
end
try('TIME')
try('SET', KEYS[1], 'check-store', 'PX', '5000')
try('GET', KEYS[1])
try('PEXPIRE', KEYS[1], '5000')
try('PTTL', KEYS[1])
try('EXISTS', KEYS[1])
try('DEL', KEYS[1])
try('INCR', KEYS[1])
try('DEL', KEYS[1])
try(ARGV[2] or 'PUBLISH', ARGV[1], 'check-store probe')
return refused
)lua";



class server_check : public std::enable_shared_from_this<server_check> {
 public:
  server_check(asio::io_context& io, redis_server_settings settings,
               std::function<void(std::vector<check_line>)> done)
      : io_(io), settings_(std::move(settings)), done_(std::move(done)) {}

  void start() {
    redis_detail::connection_options o;
    o.endpoint = settings_.endpoint;
    o.password_file = settings_.password_file;
    o.connect_timeout = settings_.connect_timeout;
    o.command_timeout = settings_.command_timeout;
    conn_ = redis_detail::connection::create(io_, o);
    options_ = o;
    const auto sent = std::chrono::steady_clock::now();
    exec({"PING"}, [this, sent](const command_result& r) {
      if (r.ec) {
        add(check_verdict::failure, "reachable", r.detail);
        finish();
        return;
      }
      note_refusal("ping", r.reply);
      add(check_verdict::ok, "reachable",
          settings_.endpoint.redacted() + " answered in " +
              ms_text(std::chrono::steady_clock::now() - sent) + " (connect and log-in included)");
      tls_line();
      whoami();
    });
  }

 private:
  void exec(std::vector<std::string> args, std::function<void(const command_result&)> then) {
    conn_->async_exec(std::move(args), [self = shared_from_this(), then = std::move(then)](
                                           command_result r) { then(r); });
  }

  // An error reply that is an ACL refusal of `command` counts as a gap.
  void note_refusal(std::string_view command, const redis_reply& r) {
    if (r.kind == redis_reply::type::error) gaps_.note(command, r.str);
  }

  void add(check_verdict v, std::string topic, std::string text) {
    lines_.push_back({v, std::move(topic), std::move(text)});
  }

  void tls_line() {
    const bool password = !settings_.endpoint.password.empty() || !settings_.password_file.empty();
    lines_.push_back(store_check_detail::tls_line(settings_.endpoint, password));
  }

  void whoami() {
    exec({"ACL", "WHOAMI"}, [this](const command_result& r) {
      user_ = settings_.endpoint.username.empty() ? "default" : settings_.endpoint.username;
      if (!r.ec && r.reply.kind == redis_reply::type::string) {
        user_ = r.reply.str;
        add(check_verdict::ok, "user", "authenticated as " + r.reply.str);
      } else if (!r.ec && r.reply.kind == redis_reply::type::error) {
        add(check_verdict::note, "user",
            "ACL WHOAMI refused (" + r.reply.str + "); logged in as " +
                (settings_.endpoint.username.empty() ? std::string("the default user")
                                                     : settings_.endpoint.username));
      } else if (r.ec) {
        return lost(r);
      }
      info();
    });
  }

  void info() {
    exec({"INFO"}, [this](const command_result& r) {
      if (r.ec) return lost(r);
      note_refusal("info", r.reply);
      if (r.reply.kind == redis_reply::type::string) {
        if (settings_.replica_ack == 0) return recorded_replicas(r.reply.str);
        server_lines(r.reply.str);
      }
      probe();
    });
  }

  // replica_ack all counts the most replicas recorded for the election
  // (replicas_key), as the scripts do: read it before weighing the role.
  void recorded_replicas(std::string info) {
    exec({"GET", replicas_key(settings_.identity.election)},
         [this, info = std::move(info)](const command_result& r) {
           if (r.ec) return lost(r);
           if (r.reply.kind == redis_reply::type::string) {
             recorded_replicas_ = std::atoi(r.reply.str.c_str());
           }
           server_lines(info);
           probe();
         });
  }

  // A located master, or any master with redis.replica_ack: its replicas
  // against redis.replica_ack, by the scripts' rule (replicas_required).
  check_line replicated_role_line(const std::string& role, const std::string& replicas_text) const {
    const int replicas = replicas_text.empty() ? 0 : std::atoi(replicas_text.c_str());
    const int ack = settings_.replica_ack;
    const std::string has = "a master with " + std::to_string(replicas) + " replica(s)";
    if (role == "slave") {
      return {check_verdict::failure, "role",
              "a replica: the " + std::string(settings_.cluster ? "slot map" : "sentinels") +
                  " named a server that is not a master"};
    }
    const int needed = replicas_required(ack, recorded_replicas_, replicas);
    if (ack >= 0 && replicas < needed) {
      return {check_verdict::failure, "role",
              has + ": " +
                  replica_shortfall(replicas, needed, ack == 0 ? "all" : std::to_string(ack),
                                    replicas_key(settings_.identity.election)) +
                  (ack == 0 ? " (or, after removing a replica for good, lower the count: SET " +
                                  replicas_key(settings_.identity.election) + " " +
                                  std::to_string(std::max(replicas, 1)) + ")"
                            : std::string())};
    }
    if (replicas == 0) {
      return {check_verdict::hazard, "role",
              has + ": a failover has nothing to promote, and nothing holds a copy of the lease"};
    }
    if (ack < 0) {
      return {check_verdict::hazard, "role",
              has + ", redis.replica_ack off: a failover can lose the latest grant; the "
                    "hold-back covers a master that died, not one cut off with its leader "
                    "(README: replica acknowledgement)"};
    }
    if (ack > 0 && ack < replicas) {
      return {check_verdict::hazard, "role",
              has + ", redis.replica_ack " + std::to_string(ack) +
                  ": an old master cut off with that many replicas still acknowledges its "
                  "leader (only all closes that window)"};
    }
    return {check_verdict::ok, "role",
            has + ", every grant and renewal acknowledged by all of them (a replica down means "
                  "no leader" +
                (ack == 0 ? "; all counts " + std::to_string(needed) +
                                ", the most this election's master has had"
                          : std::string()) +
                ")"};
  }

  void server_lines(const std::string& info) {
    const auto version = info_field(info, "redis_version");
    const int major = version.empty() ? 0 : std::atoi(version.c_str());
    if (major >= 5) {
      add(check_verdict::ok, "version", "Redis " + version);
    } else {
      add(check_verdict::failure, "version",
          "Redis " + (version.empty() ? std::string("of unknown version") : version) +
              ": baton needs 5 or newer (its scripts read TIME before they write)");
    }
    const auto role = info_field(info, "role");
    const auto replicas = info_field(info, "connected_slaves");
    if (settings_.located || (settings_.replica_ack >= 0 && role != "slave" &&
                              info_field(info, "cluster_enabled") != "1")) {
      lines_.push_back(replicated_role_line(role, replicas));
    } else if (info_field(info, "cluster_enabled") == "1") {
      add(check_verdict::failure, "role",
          "a Redis Cluster node: this store kind needs a standalone server (scripts on other "
          "nodes' slots fail with MOVED)");
    } else if (role == "slave") {
      add(check_verdict::failure, "role",
          "a replica (read-only): point the URL at the master");
    } else if (!replicas.empty() && replicas != "0") {
      add(check_verdict::hazard, "role",
          settings_.redlock_master
              ? "a master with " + replicas +
                    " replica(s): a Redlock master should stand alone, a promoted replica "
                    "may lack the latest grant"
              : "a master with " + replicas +
                    " replica(s): replication is asynchronous, so a failover can lose the "
                    "latest lease write (see README: Store caveats)");
    } else {
      add(check_verdict::ok, "role", "master, no replicas");
    }
    long long maxmemory = 0;
    try {
      maxmemory = std::stoll(info_field(info, "maxmemory"));
    } catch (const std::exception&) {
    }
    lines_.push_back(eviction_line(info_field(info, "maxmemory_policy"), maxmemory));
    if (info_field(info, "aof_enabled") == "1") {
      add(check_verdict::ok, "persistence", "AOF on: a restart keeps the lease and the token counter");
    } else {
      add(check_verdict::note, "persistence",
          "AOF off: after a restart that loses the data every acquisition waits one ttl (the "
          "data-loss fence); RDB snapshots, if configured, narrow that");
    }
  }

  void probe() {
    const auto& id = settings_.identity;
    const std::string key = "baton:{" + id.election + "}:check-store";
    const std::string channel = events_channel(id.election);
    std::vector<std::string> eval{"EVAL", std::string(probe_source), "1", key, channel};
    // A Cluster's announcements are sharded (SPUBLISH, SSUBSCRIBE).
    if (settings_.cluster) eval.push_back("SPUBLISH");
    auto evalsha = eval;
    evalsha[0] = "EVALSHA";
    evalsha[1] = redis_detail::sha1_hex(probe_source);
    exec(std::move(eval),
         [this, evalsha = std::move(evalsha)](const command_result& r) {
           if (r.ec) return lost(r);
           if (r.reply.kind == redis_reply::type::error &&
               classify_acl_refusal(r.reply.str) != acl_refusal::none) {
             note_refusal("eval", r.reply);
           } else if (r.reply.kind == redis_reply::type::array) {
             // {command, the error redis.pcall got} for each refused call.
             for (const auto& e : r.reply.elements) {
               if (e.elements.size() == 2) gaps_.note(e.elements[0].str, e.elements[1].str);
             }
           } else if (r.reply.kind == redis_reply::type::error) {
             add(check_verdict::failure, "scripts", "EVAL: " + r.reply.str);
           }
           exec(evalsha, [this](const command_result& r2) {
             if (r2.ec) return lost(r2);
             note_refusal("evalsha", r2.reply);
             probe_commands(located_commands(), 0);
           });
         });
  }

  // What the located kinds send outside scripts, as {command, its ACL name}:
  // ROLE confirms every new connection reached a master, WAIT counts the
  // replicas that acknowledged (replica_ack), and a Cluster's slot map and
  // ASK redirects need CLUSTER and ASKING.
  std::vector<std::pair<std::vector<std::string>, std::string>> located_commands() const {
    std::vector<std::pair<std::vector<std::string>, std::string>> out;
    if (!settings_.located) return out;
    out.push_back({{"ROLE"}, "role"});
    if (settings_.replica_ack >= 0) out.push_back({{"WAIT", "0", "1"}, "wait"});
    if (settings_.cluster) {
      out.push_back({{"CLUSTER", "SHARDS"}, "cluster"});
      out.push_back({{"ASKING"}, "asking"});
    }
    return out;
  }

  void probe_commands(std::vector<std::pair<std::vector<std::string>, std::string>> commands,
                      std::size_t next) {
    if (next == commands.size()) return subscribe();
    auto command = commands[next].first;
    exec(std::move(command), [this, commands = std::move(commands), next](const command_result& r) {
      if (r.ec) return lost(r);
      note_refusal(commands[next].second, r.reply);
      probe_commands(std::move(commands), next + 1);
    });
  }

  void subscribe() {
    watch_ = redis_detail::connection::create(io_, options_);
    const std::string subscribe = settings_.cluster ? "SSUBSCRIBE" : "SUBSCRIBE";
    watch_->async_exec({subscribe, events_channel(settings_.identity.election)},
                       [self = shared_from_this(), subscribe](command_result r) {
                         if (!r.ec) {
                           self->note_refusal(subscribe == "SSUBSCRIBE" ? "ssubscribe" : "subscribe",
                                              r.reply);
                         }
                         self->watch_->close();
                         self->acl_line();
                         self->latency(0);
                       });
  }

  void acl_line() {
    if (gaps_.empty()) {
      add(check_verdict::ok, "acl",
          "every command baton needs is allowed on baton:{" + settings_.identity.election + "}:*");
      return;
    }
    add(check_verdict::failure, "acl",
        acl_gaps_text(gaps_, settings_.identity.election, user_) +
            " (README: Managed Redis, the minimal ACL" +
            (settings_.located ? "; and what Sentinel and Cluster add, under Replica acknowledgement)"
                               : ")"));
  }

  void latency(int done) {
    constexpr int pings = 5;
    if (done == pings) {
      std::sort(rtts_.begin(), rtts_.end());
      const auto median = rtts_[pings / 2];
      const auto worst = rtts_.back();
      const std::string text = "round trip " + ms_text(median) + " median, " + ms_text(worst) +
                               " worst of " + std::to_string(pings) + " (command timeout " +
                               std::to_string(settings_.command_timeout.count()) + " ms, ttl " +
                               std::to_string(settings_.identity.ttl.count()) + " ms)";
      const bool slow = worst > settings_.command_timeout / 2;
      add(slow ? check_verdict::hazard : check_verdict::ok, "latency",
          slow ? text + ": near the command timeout, renewals may time out" : text);
      clock();
      return;
    }
    const auto sent = std::chrono::steady_clock::now();
    exec({"PING"}, [this, sent, done](const command_result& r) {
      if (r.ec) return lost(r);
      rtts_.push_back(std::chrono::steady_clock::now() - sent);
      latency(done + 1);
    });
  }

  void clock() {
    const auto sent = std::chrono::system_clock::now();
    exec({"TIME"}, [this, sent](const command_result& r) {
      if (r.ec) return lost(r);
      const auto received = std::chrono::system_clock::now();
      if (r.reply.kind == redis_reply::type::array && r.reply.elements.size() == 2) {
        const auto server = std::chrono::seconds(std::atoll(r.reply.elements[0].str.c_str())) +
                            std::chrono::microseconds(std::atoll(r.reply.elements[1].str.c_str()));
        const auto local = (sent + (received - sent) / 2).time_since_epoch();
        lines_.push_back(clock_line(std::chrono::duration_cast<milliseconds>(server - local)));
      }
      lease();
    });
  }

  void lease() {
    const auto& e = settings_.identity.election;
    exec({"GET", lease_key(e)}, [this, e](const command_result& r) {
      if (r.ec) return lost(r);
      const std::string holder = r.reply.kind == redis_reply::type::string ? r.reply.str : "";
      exec({"PTTL", lease_key(e)}, [this, e, holder](const command_result& r2) {
        if (r2.ec) return lost(r2);
        exec({"GET", token_key(e)}, [this, holder, left = r2.reply.integer](const command_result& r3) {
          if (r3.ec) return lost(r3);
          const std::string token = r3.reply.kind == redis_reply::type::string ? r3.reply.str : "";
          if (const auto reserved = reservation_in(holder)) {
            add(check_verdict::note, "lease",
                "reserved for " + reserved->to + " by a switchover from " + reserved->by +
                    " (token " + token + ", " + std::to_string(left) + " ms left)");
          } else if (!holder.empty()) {
            add(check_verdict::note, "lease",
                "held by " + holder_from_value(holder) + " (token " + token + ", " +
                    std::to_string(left) + " ms left)");
          } else if (!token.empty()) {
            add(check_verdict::note, "lease", "free (token counter at " + token + ")");
          } else {
            add(check_verdict::note, "lease",
                "no record of this election yet: its first start waits one ttl (`baton "
                "init-store` skips that for a new election)");
          }
          finish();
        });
      });
    });
  }

  // The connection broke half-way: what was learnt stays, and the loss is
  // the failure.
  void lost(const command_result& r) {
    add(check_verdict::failure, "reachable", "lost during the checks: " + r.detail);
    finish();
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    conn_->close();
    if (watch_) watch_->close();
    auto done = std::move(done_);
    done(std::move(lines_));
  }

  asio::io_context& io_;
  redis_server_settings settings_;
  std::function<void(std::vector<check_line>)> done_;
  redis_detail::connection_options options_;
  std::shared_ptr<redis_detail::connection> conn_;
  std::shared_ptr<redis_detail::connection> watch_;
  std::vector<check_line> lines_;
  acl_gaps gaps_;
  std::string user_;  // as ACL WHOAMI named it, for the ACL line to add
  // redis.replica_ack all: the count recorded in replicas_key (0 = none yet).
  int recorded_replicas_ = 0;
  std::vector<std::chrono::nanoseconds> rtts_;
  bool finished_ = false;
};

}  // namespace

const std::vector<std::string>& required_redis_commands() {
  static const std::vector<std::string> commands{
      "evalsha", "eval", "info", "subscribe", "ping", "get", "set",
      "pexpire", "pttl", "exists", "incr", "del", "time", "publish"};
  return commands;
}

check_line tls_line(const redis_endpoint& e, bool password) {
  if (e.kind == redis_endpoint::transport::unix_socket) {
    return {check_verdict::ok, "tls", "not needed: a Unix socket stays on this host"};
  }
  if (!e.tls) {
    if (is_loopback_host(e.host)) return {check_verdict::ok, "tls", "off: plain TCP on loopback"};
    // The agreed rule: a password in plain text beyond this host is a
    // hazard (AUTH sends it as it is); plain TCP without one a note.
    if (password) {
      return {check_verdict::hazard, "tls",
              "off: the password travels unencrypted to " + e.host +
                  " (AUTH sends it as it is): whoever is on the path can read it (use "
                  "rediss://)"};
    }
    return {check_verdict::note, "tls",
            "off: the lease travels unencrypted (use rediss:// where the network is not yours)"};
  }
  if (e.tls_settings.verify == tls_verify::full) {
    return {check_verdict::ok, "tls",
            "verified: the chain up to a trusted CA and the name " + e.tls_settings.server_name};
  }
  if (e.tls_settings.verify == tls_verify::ca) {
    return {check_verdict::ok, "tls",
            "verified: the chain up to a trusted CA (tls_verify ca: the name is not checked)"};
  }
  return {check_verdict::hazard, "tls",
          "not verified (tls_verify none): whoever is on the path can read the password and "
          "answer as the server"};
}

check_line eviction_line(const std::string& policy, long long maxmemory) {
  if (maxmemory == 0) {
    return {check_verdict::ok, "eviction", "no maxmemory: nothing is evicted (policy " + policy + ")"};
  }
  if (policy == "noeviction" || policy.empty()) {
    return {check_verdict::ok, "eviction", "maxmemory-policy noeviction: baton's keys are never evicted"};
  }
  if (policy.starts_with("volatile-")) {
    return {check_verdict::hazard, "eviction",
            "maxmemory-policy " + policy +
                " can evict the lease key early: baton holds other candidates back until it "
                "would have expired, but its leader loses the lease; use noeviction"};
  }
  return {check_verdict::hazard, "eviction",
          "maxmemory-policy " + policy +
              " can evict any key: the lease, its holder record and the token counter; use "
              "noeviction, or a Redis of its own for baton"};
}

void async_check_redis_server(asio::io_context& io, redis_server_settings settings,
                              std::function<void(std::vector<check_line>)> done) {
  auto check = std::make_shared<server_check>(io, std::move(settings), std::move(done));
  check->start();
}

redis_server_settings redis_server_settings_for(const config& cfg, const std::string& url) {
  const auto& redis = redis_settings_of(cfg);
  redis_server_settings s;
  s.endpoint = redis_endpoint_for(redis, url);
  if (!redis.password.empty()) s.endpoint.password = redis.password;
  s.password_file = redis.password_file;
  s.connect_timeout = redis.connect_timeout;
  s.command_timeout = redis.command_timeout;
  s.identity = store_identity_of(cfg);
  s.replica_ack = redis.replica_ack.replicas;
  return s;
}

}  // namespace baton::store_check_detail
