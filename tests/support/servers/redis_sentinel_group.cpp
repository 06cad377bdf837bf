// redis_sentinel: its config, port retries, restarts and signals; spawning,
// the readiness wait (the answer must come from our own child: INFO's
// process_id) and the synchronous command are redis_child's and
// redis_sync_client's, shared with redis_server. redis_sentinel_group: the
// order of start-up (replicas attached before sentinels, so a sentinel's
// first INFO of the master already lists them) and the bounded polls a test
// waits on.
#include "support/servers/redis_sentinel_group.hpp"

#include "support/free_port.hpp"
#include "support/servers/redis_child.hpp"
#include "support/servers/redis_sync_client.hpp"

#include <signal.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto link_timeout = 20s;

// A flattened list of field/value pairs (SENTINEL MASTER) as a map.
std::map<std::string, std::string> as_fields(const std::vector<std::string>& flat) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

// A flattened list of records, each a run of field/value pairs that starts
// with "name" (SENTINEL REPLICAS), one map per record.
std::vector<std::map<std::string, std::string>> as_records(const std::vector<std::string>& flat) {
  std::vector<std::map<std::string, std::string>> out;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) {
    if (flat[i] == "name" || out.empty()) out.emplace_back();
    out.back()[flat[i]] = flat[i + 1];
  }
  return out;
}

}  // namespace

// --- redis_sentinel ---------------------------------------------------------

redis_sentinel::redis_sentinel(std::vector<std::string> lines, std::string password, bool tls)
    : lines_(std::move(lines)), password_(std::move(password)), tls_(tls) {
  executable_ = find_executable("redis-server");
  if (executable_.empty())
    throw std::runtime_error(
        "redis-server is not installed (not found in PATH); the sentinel tests need it "
        "(Debian: apt-get install redis-server)");
  dir_ = make_temp_dir("/tmp/baton-sentinel-XXXXXX");
  try {
    for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
      port_ = free_loopback_port();
      if (tls_) {
        do {
          tls_port_ = free_loopback_port();
        } while (tls_port_ == port_);
      }
      std::ofstream(dir_ / "sentinel.log", std::ios::trunc).flush();
      // A fresh file each attempt: a sentinel that failed to bind may still
      // have rewritten it.
      write_config();
      if (start_once()) return;
    }
    throw std::runtime_error("redis sentinel: no free port after " +
                             std::to_string(server_port_attempts) + " attempts; log:\n" +
                             log_tail());
  } catch (...) {
    kill_and_wait();
    remove_temp_dir(dir_);
    throw;
  }
}

redis_sentinel::~redis_sentinel() {
  kill_and_wait();
  remove_temp_dir(dir_);
}

std::string redis_sentinel::url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

std::string redis_sentinel::tls_url() const {
  return tls_ ? "rediss://127.0.0.1:" + std::to_string(tls_port_) : std::string();
}

void redis_sentinel::pause() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGSTOP);
  paused_ = true;
}

void redis_sentinel::resume() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGCONT);
  paused_ = false;
}

void redis_sentinel::kill_and_wait() {
  // SIGKILL ends a stopped process too.
  kill_and_reap(pid_);
  paused_ = false;
}

void redis_sentinel::start() {
  if (running()) return;
  // The config is the sentinel's own rewrite; the port must come back, and
  // with SO_REUSEADDR it does unless another process took it meanwhile.
  for (int attempt = 0; attempt < server_port_attempts; ++attempt) {
    if (start_once()) return;
    std::this_thread::sleep_for(100ms);
  }
  throw std::runtime_error("redis sentinel: cannot restart on port " + std::to_string(port_) +
                           "; log:\n" + log_tail());
}

void redis_sentinel::write_config() const {
  std::ofstream conf(dir_ / "sentinel.conf", std::ios::trunc);
  conf << "port " << port_ << "\n"
       << "bind 127.0.0.1\n"
       << "daemonize no\n"
       << "protected-mode no\n"
       << "logfile \"\"\n"
       << "dir " << dir_.string() << "\n";
  if (tls_) conf << "tls-port " << tls_port_ << "\n";
  for (const auto& line : lines_) conf << line << "\n";
  if (!conf) throw std::runtime_error("cannot write " + config_path());
}

bool redis_sentinel::start_once() {
  paused_ = false;
  // Appended: the log spans restarts, which keep the sentinel's own config.
  pid_ = start_redis_child({.executable = executable_,
                            .args = {config_path(), "--sentinel"},
                            .log = dir_ / "sentinel.log",
                            .append_log = true,
                            .port = port_,
                            .password = password_,
                            .label = "redis sentinel"});
  return pid_ > 0;
}

std::vector<std::string> redis_sentinel::command(std::initializer_list<std::string> args) const {
  return command(std::vector<std::string>(args));
}

std::vector<std::string> redis_sentinel::command(const std::vector<std::string>& args) const {
  return sync_command(port_, password_, args, 2000ms, "sentinel");
}

std::string redis_sentinel::log_tail() const {
  return baton::testing::log_tail(dir_ / "sentinel.log");
}

// --- redis_sentinel_group ---------------------------------------------------

redis_sentinel_group::redis_sentinel_group()
    : redis_sentinel_group(redis_sentinel_group_options{}) {}

redis_sentinel_group::redis_sentinel_group(redis_sentinel_group_options options)
    : options_(std::move(options)) {
  if (options_.replicas < 0 || options_.sentinels < 1 || options_.quorum < 1)
    throw std::invalid_argument("redis_sentinel_group: bad replica, sentinel or quorum count");

  const auto& tls = options_.tls;
  // Lines both kinds of process take for TLS between them.
  std::vector<std::string> tls_peer_lines;
  if (tls.enabled()) {
    tls_peer_lines.push_back("tls-replication yes");
    if (!tls.client_cert_file.empty()) {
      tls_peer_lines.push_back("tls-client-cert-file " + tls.client_cert_file);
      tls_peer_lines.push_back("tls-client-key-file " + tls.client_key_file);
    }
  }

  redis_server_options data;
  data.requirepass = options_.requirepass;
  if (tls.enabled()) {
    data.tls_cert_file = tls.cert_file;
    data.tls_key_file = tls.key_file;
    data.tls_ca_file = tls.ca_file;
    data.extra_config = tls_peer_lines;
  }
  // Any node may become a replica of any other after a failover.
  if (!options_.requirepass.empty())
    data.extra_config.push_back("masterauth \"" + options_.requirepass + "\"");
  // Redis waits 5 s before a diskless full sync by default.
  data.extra_config.push_back("repl-diskless-sync-delay 0");
  data.extra_config.insert(data.extra_config.end(), options_.extra_config.begin(),
                           options_.extra_config.end());

  nodes_.push_back(std::make_unique<redis_server>(data));
  const std::string master = std::to_string(reported_port(*nodes_.front()));
  auto replica = data;
  replica.extra_config.push_back("replicaof 127.0.0.1 " + master);
  for (int i = 0; i < options_.replicas; ++i)
    nodes_.push_back(std::make_unique<redis_server>(replica));
  // Attached before any sentinel starts: a sentinel's first INFO of the
  // master then lists them, where otherwise it would learn of them only at
  // the next INFO, 10 s later.
  for (std::size_t i = 1; i < nodes_.size(); ++i)
    wait_for_link_up(reported_port(*nodes_[i]), reported_port(*nodes_.front()),
                     options_.ready_timeout);
  poll_until(
      "redis_sentinel_group: the master lists its replicas", options_.ready_timeout,
      [&]() -> std::string {
        const auto info = nodes_.front()->command({"INFO", "replication"});
        const auto n = info_field(info.front(), "connected_slaves");
        return n == std::to_string(options_.replicas) ? "" : "connected_slaves:" + n;
      },
      [&] { return log_tails(); });

  const std::string& name = options_.master_name;
  std::vector<std::string> lines = {
      "sentinel resolve-hostnames no",
      "sentinel monitor " + name + " 127.0.0.1 " + master + " " + std::to_string(options_.quorum),
      "sentinel down-after-milliseconds " + name + " " +
          std::to_string(options_.down_after.count()),
      "sentinel failover-timeout " + name + " " + std::to_string(options_.failover_timeout.count()),
      "sentinel parallel-syncs " + name + " 1",
  };
  if (!options_.requirepass.empty())
    lines.push_back("sentinel auth-pass " + name + " \"" + options_.requirepass + "\"");
  // With no sentinel-pass configured, a sentinel authenticates to the others
  // with its own requirepass, so one password serves both directions.
  if (!options_.sentinel_requirepass.empty())
    lines.push_back("requirepass \"" + options_.sentinel_requirepass + "\"");
  if (tls.enabled()) {
    lines.push_back("tls-cert-file " + tls.cert_file);
    lines.push_back("tls-key-file " + tls.key_file);
    lines.push_back("tls-ca-cert-file " + tls.ca_file);
    lines.push_back(std::string("tls-auth-clients ") +
                    (tls.sentinels_demand_client_certs ? "yes" : "no"));
    lines.insert(lines.end(), tls_peer_lines.begin(), tls_peer_lines.end());
  }
  lines.insert(lines.end(), options_.sentinel_extra_config.begin(),
               options_.sentinel_extra_config.end());
  for (int i = 0; i < options_.sentinels; ++i)
    sentinels_.push_back(std::make_unique<redis_sentinel>(lines, options_.sentinel_requirepass,
                                                          tls.enabled()));

  wait_until_ready(options_.ready_timeout);
}

redis_sentinel_group::~redis_sentinel_group() {
  // Sentinels first: a sentinel outliving the data nodes would only log.
  for (auto& s : sentinels_) s->kill_and_wait();
  for (auto& n : nodes_) n->kill_and_wait();
}

redis_sentinel& redis_sentinel_group::sentinel(std::size_t index) { return *sentinels_.at(index); }

const redis_sentinel& redis_sentinel_group::sentinel(std::size_t index) const {
  return *sentinels_.at(index);
}

std::vector<unsigned short> redis_sentinel_group::sentinel_ports() const {
  std::vector<unsigned short> out;
  for (const auto& s : sentinels_) out.push_back(s->port());
  return out;
}

std::vector<std::string> redis_sentinel_group::sentinel_urls() const {
  std::vector<std::string> out;
  for (const auto& s : sentinels_) out.push_back(options_.tls.enabled() ? s->tls_url() : s->url());
  return out;
}

unsigned short redis_sentinel_group::reported_port(const redis_server& n) const {
  return options_.tls.enabled() ? n.tls_port() : n.port();
}

std::vector<unsigned short> redis_sentinel_group::data_ports() const {
  std::vector<unsigned short> out;
  for (const auto& n : nodes_) out.push_back(reported_port(*n));
  return out;
}

redis_server& redis_sentinel_group::node(unsigned short port) {
  for (auto& n : nodes_)
    if (n->port() == port || (n->tls_port() != 0 && n->tls_port() == port)) return *n;
  throw std::out_of_range("redis_sentinel_group: no data node on port " + std::to_string(port));
}

const redis_server& redis_sentinel_group::node(unsigned short port) const {
  return const_cast<redis_sentinel_group*>(this)->node(port);
}

unsigned short redis_sentinel_group::ask_master(const redis_sentinel& s, std::string& error) const {
  try {
    const auto addr = s.command({"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
    if (addr.size() != 2) {
      error = "sentinel " + std::to_string(s.port()) + " does not know " + options_.master_name;
      return 0;
    }
    return static_cast<unsigned short>(std::stoi(addr[1]));
  } catch (const std::exception& e) {
    error = e.what();
    return 0;
  }
}

unsigned short redis_sentinel_group::master_port_from(std::size_t index) const {
  std::string error;
  const auto port = ask_master(sentinel(index), error);
  if (port == 0) throw std::runtime_error("redis_sentinel_group: " + error);
  return port;
}

unsigned short redis_sentinel_group::master_port() const {
  std::string errors;
  for (const auto& s : sentinels_) {
    if (!s->running() || s->paused()) continue;
    std::string error;
    if (const auto port = ask_master(*s, error); port != 0) return port;
    errors += "\n  " + error;
  }
  throw std::runtime_error("redis_sentinel_group: no sentinel reports the master" +
                           (errors.empty() ? std::string(" (none running)") : errors));
}

std::string redis_sentinel_group::role_of(unsigned short port) const {
  const auto role = node(port).command({"ROLE"});
  return role.empty() ? std::string() : role.front();
}

std::vector<std::string> redis_sentinel_group::command(
    unsigned short port, std::initializer_list<std::string> args) const {
  return command(port, std::vector<std::string>(args));
}

std::vector<std::string> redis_sentinel_group::command(unsigned short port,
                                                       const std::vector<std::string>& args) const {
  for (const auto& s : sentinels_)
    if (s->port() == port) return s->command(args);
  return node(port).command(args);
}

unsigned short redis_sentinel_group::kill_master() {
  const auto port = master_port();
  auto& master = node(port);
  if (!master.running())
    throw std::runtime_error("redis_sentinel_group: the reported master (port " +
                             std::to_string(port) + ") is not running");
  master.kill_and_wait();
  return port;
}

void redis_sentinel_group::kill_node(unsigned short port) { node(port).kill_and_wait(); }

unsigned short redis_sentinel_group::wait_for_failover(unsigned short old_port,
                                                       std::chrono::milliseconds timeout) {
  unsigned short promoted = 0;
  poll_until(
      "redis_sentinel_group: failover away from port " + std::to_string(old_port), timeout,
      [&]() -> std::string {
        std::string seen;
        for (const auto& s : sentinels_) {
          if (!s->running() || s->paused()) continue;
          std::string error;
          const auto port = ask_master(*s, error);
          seen += " " + (port == 0 ? error : std::to_string(port));
          if (port == 0 || port == old_port) continue;
          try {
            if (node(port).running() && role_of(port) == "master") {
              promoted = port;
              return {};
            }
          } catch (const std::exception& e) {
            seen += " (" + std::string(e.what()) + ")";
          }
        }
        return "sentinels report:" + seen;
      },
      [&] { return log_tails(); });
  return promoted;
}

unsigned short redis_sentinel_group::wait_until_sentinels_agree(std::chrono::milliseconds timeout) {
  unsigned short agreed = 0;
  poll_until(
      "redis_sentinel_group: sentinels agree on the master", timeout,
      [&]() -> std::string {
        std::vector<unsigned short> seen;
        std::string text;
        for (const auto& s : sentinels_) {
          if (!s->running() || s->paused()) continue;
          std::string error;
          seen.push_back(ask_master(*s, error));
          text += " " + (seen.back() == 0 ? error : std::to_string(seen.back()));
        }
        if (seen.empty()) return "no sentinel running";
        if (seen.front() == 0 ||
            std::any_of(seen.begin(), seen.end(), [&](auto p) { return p != seen.front(); }))
          return "sentinels report:" + text;
        try {
          if (!node(seen.front()).running() || role_of(seen.front()) != "master")
            return "port " + std::to_string(seen.front()) + " is not a running master";
        } catch (const std::exception& e) {
          return e.what();
        }
        agreed = seen.front();
        return {};
      },
      [&] { return log_tails(); });
  return agreed;
}

void redis_sentinel_group::wait_for_link_up(unsigned short replica, unsigned short master,
                                            std::chrono::milliseconds timeout) const {
  poll_until(
      "redis_sentinel_group: replica " + std::to_string(replica) + " syncs from " +
          std::to_string(master),
      timeout,
      [&]() -> std::string {
        try {
          const auto info = node(replica).command({"INFO", "replication"}).front();
          if (info_field(info, "role") != "slave") return "role:" + info_field(info, "role");
          if (info_field(info, "master_port") != std::to_string(master))
            return "master_port:" + info_field(info, "master_port");
          const auto link = info_field(info, "master_link_status");
          return link == "up" ? "" : "master_link_status:" + link;
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      [&] { return node(replica).log_tail(); });
}

void redis_sentinel_group::wait_for_replication(unsigned short master_port,
                                                std::chrono::milliseconds timeout) const {
  const auto info = node(master_port).command({"INFO", "replication"}).front();
  const auto target = std::stoll(info_field(info, "master_repl_offset"));
  poll_until(
      "redis_sentinel_group: replicas of " + std::to_string(master_port) + " reach offset " +
          std::to_string(target),
      timeout,
      [&]() -> std::string {
        for (const auto& n : nodes_) {
          if (!n->running() || reported_port(*n) == master_port) continue;
          try {
            const auto r = n->command({"INFO", "replication"}).front();
            if (info_field(r, "master_port") != std::to_string(master_port)) continue;
            const auto offset = info_field(r, "slave_repl_offset");
            if (info_field(r, "master_link_status") != "up" || offset.empty() ||
                std::stoll(offset) < target)
              return "replica " + std::to_string(reported_port(*n)) + " at offset " + offset;
          } catch (const std::exception& e) {
            return e.what();
          }
        }
        return {};
      },
      [&] { return log_tails(); });
}

void redis_sentinel_group::restart_node(unsigned short port, restart_role role) {
  auto& n = node(port);
  n.restart();
  if (role == restart_role::replica_of_current_master) {
    const auto master = master_port();
    if (master == port)
      throw std::runtime_error("redis_sentinel_group: the sentinels still name port " +
                               std::to_string(port) + " as master; wait_for_failover first");
    n.command({"REPLICAOF", "127.0.0.1", std::to_string(master)});
    wait_for_link_up(port, master, link_timeout);
  }
}

void redis_sentinel_group::kill_sentinel(std::size_t index) { sentinel(index).kill_and_wait(); }
void redis_sentinel_group::start_sentinel(std::size_t index) { sentinel(index).start(); }
void redis_sentinel_group::pause_sentinel(std::size_t index) { sentinel(index).pause(); }
void redis_sentinel_group::resume_sentinel(std::size_t index) { sentinel(index).resume(); }

void redis_sentinel_group::kill_all_sentinels() {
  for (auto& s : sentinels_) s->kill_and_wait();
}

void redis_sentinel_group::start_all_sentinels() {
  for (auto& s : sentinels_) s->start();
  wait_until_ready(options_.ready_timeout);
}

void redis_sentinel_group::pause_all_sentinels() {
  for (auto& s : sentinels_) s->pause();
}

void redis_sentinel_group::resume_all_sentinels() {
  for (auto& s : sentinels_) s->resume();
}

std::string redis_sentinel_group::not_ready_because() const {
  try {
    std::vector<const redis_sentinel*> live;
    for (const auto& s : sentinels_)
      if (s->running() && !s->paused()) live.push_back(s.get());
    if (live.empty()) return "no sentinel running";
    std::string error;
    const auto master = ask_master(*live.front(), error);
    if (master == 0) return error;
    for (const auto* s : live) {
      const auto other = ask_master(*s, error);
      if (other != master)
        return "sentinel " + std::to_string(s->port()) + " reports " +
               (other == 0 ? error : std::to_string(other)) + ", not " + std::to_string(master);
    }
    if (!node(master).running() || role_of(master) != "master")
      return "port " + std::to_string(master) + " is not a running master";

    std::vector<unsigned short> replicas;
    for (const auto& n : nodes_) {
      if (!n->running() || reported_port(*n) == master) continue;
      replicas.push_back(reported_port(*n));
      const auto info = n->command({"INFO", "replication"}).front();
      if (info_field(info, "master_port") != std::to_string(master) ||
          info_field(info, "master_link_status") != "up")
        return "node " + std::to_string(reported_port(*n)) + " is not an attached replica of " +
               std::to_string(master);
    }

    const auto others = std::to_string(sentinels_.size() - 1);
    for (const auto* s : live) {
      const auto where = "sentinel " + std::to_string(s->port());
      const auto m = as_fields(s->command({"SENTINEL", "MASTER", options_.master_name}));
      const auto flags = m.count("flags") ? m.at("flags") : "";
      if (flags != "master") return where + " sees the master as " + flags;
      const auto n = m.count("num-other-sentinels") ? m.at("num-other-sentinels") : "";
      if (n != others) return where + " knows " + n + " other sentinels, not " + others;
      const auto listed = as_records(s->command({"SENTINEL", "REPLICAS", options_.master_name}));
      for (const auto r : replicas) {
        const auto it = std::find_if(listed.begin(), listed.end(), [&](const auto& rec) {
          return rec.count("port") && rec.at("port") == std::to_string(r);
        });
        if (it == listed.end()) return where + " does not list replica " + std::to_string(r);
        const auto rflags = it->count("flags") ? it->at("flags") : "";
        if (!has_flag(rflags, "slave") || has_flag(rflags, "s_down") ||
            has_flag(rflags, "disconnected"))
          return where + " sees replica " + std::to_string(r) + " as " + rflags;
      }
    }
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

void redis_sentinel_group::wait_until_ready(std::chrono::milliseconds timeout) {
  poll_until(
      "redis_sentinel_group: ready for a failover", timeout, [&] { return not_ready_because(); },
      [&] { return log_tails(); });
}

std::string redis_sentinel_group::log_tails() const {
  std::string out;
  for (const auto& n : nodes_)
    out += "--- data node " + std::to_string(reported_port(*n)) + (n->running() ? "" : " (killed)") +
           ":\n" + n->log_tail();
  for (const auto& s : sentinels_)
    out += "--- sentinel " + std::to_string(s->port()) +
           (!s->running() ? " (killed)"
            : s->paused() ? " (paused)"
                          : "") +
           ":\n" + s->log_tail();
  return out;
}

}  // namespace baton::testing
