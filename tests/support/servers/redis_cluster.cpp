// redis_cluster: nodes are redis_server children with cluster settings in
// their extra config; redis-cli creates the cluster (as our child, its output
// read through a pipe so a failure can show it, killed by its PID if it
// outlives its deadline); everything after that is read from CLUSTER NODES,
// whose one text line per node says who owns what and who replicates whom,
// and polled against a deadline, since Redis offers no event to wait on.
#include "support/servers/redis_cluster.hpp"

#include "support/free_port.hpp"
#include "support/servers/redis_child.hpp"
#include "support/servers/redis_sync_client.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr int slot_count = 16384;
constexpr int bus_port_attempts = 3;
constexpr int keys_per_migrate = 100;

// Runs `args` (args[0] a full path) with `env` set over our environment,
// stdout and stderr captured; kills it by its PID when it has not exited by
// `timeout`. Returns the exit status and the output.
std::pair<int, std::string> run_captured(
    const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::string>>& env,
    std::chrono::milliseconds timeout) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  child_spec spec;
  spec.argv = args;
  spec.output_fd = fds[1];
  spec.env = env;
  pid_t child = -1;
  try {
    child = spawn_child(spec);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);

  std::string output;
  auto drain = [&] {
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) output.append(buf, static_cast<size_t>(n));
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    drain();
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      pid_t victim = child;
      kill_and_reap(victim);
      drain();
      ::close(fds[0]);
      throw std::runtime_error(args.front() + " did not finish within " + ms_text(timeout) +
                               "; output:\n" + output);
    }
    std::this_thread::sleep_for(20ms);
  }
  drain();
  ::close(fds[0]);
  return {status, output};
}

std::vector<redis_cluster_node_view> parse_cluster_nodes(const std::string& text) {
  std::vector<redis_cluster_node_view> out;
  std::stringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::stringstream fields(line);
    std::string id, addr, flags, master, ping, pong, epoch, link;
    if (!(fields >> id >> addr >> flags >> master >> ping >> pong >> epoch >> link)) continue;
    redis_cluster_node_view v;
    v.id = id;
    // ip:port@busport[,hostname]
    const auto at = addr.find('@');
    const auto colon = addr.rfind(':', at);
    if (colon != std::string::npos && at != std::string::npos && at > colon + 1)
      v.port = static_cast<unsigned short>(std::stoi(addr.substr(colon + 1, at - colon - 1)));
    v.master = has_flag(flags, "master");
    v.failed = has_flag(flags, "fail");
    v.master_id = master == "-" ? "" : master;
    std::string slot;
    while (fields >> slot) {
      // [slot->-id] / [slot-<-id]: migration marks, on the node's own line.
      if (slot.empty() || slot.front() == '[') continue;
      const auto dash = slot.find('-');
      const int first = std::stoi(slot.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(slot.substr(dash + 1));
      v.slots.emplace_back(first, last);
    }
    out.push_back(std::move(v));
  }
  return out;
}

// The parts of a view every node must agree on, as one comparable string.
std::string canonical(std::vector<redis_cluster_node_view> view) {
  std::sort(view.begin(), view.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::string out;
  for (const auto& v : view) {
    out += v.id + (v.master ? " master" : " replica-of-" + v.master_id) + (v.failed ? " fail" : "");
    for (const auto& [a, b] : v.slots) out += " " + std::to_string(a) + "-" + std::to_string(b);
    out += "\n";
  }
  return out;
}

const redis_cluster_node_view* owner_in(const std::vector<redis_cluster_node_view>& view,
                                        int slot) {
  for (const auto& v : view) {
    if (!v.master) continue;
    for (const auto& [a, b] : v.slots)
      if (slot >= a && slot <= b) return &v;
  }
  return nullptr;
}

// A pointer into a temporary view would dangle.
const redis_cluster_node_view* owner_in(std::vector<redis_cluster_node_view>&& view, int slot) = delete;

}  // namespace

redis_cluster::redis_cluster() : redis_cluster(redis_cluster_options{}) {}

redis_cluster::redis_cluster(redis_cluster_options options) : options_(std::move(options)) {
  if (options_.masters < 3)
    throw std::invalid_argument("redis_cluster: at least 3 masters (redis-cli refuses fewer)");
  if (options_.replicas_per_master < 0)
    throw std::invalid_argument("redis_cluster: negative replica count");

  redis_server_options base;
  base.requirepass = options_.requirepass;
  if (!options_.requirepass.empty())
    base.extra_config.push_back("masterauth \"" + options_.requirepass + "\"");
  if (tls()) {
    base.tls_cert_file = options_.tls_cert_file;
    base.tls_key_file = options_.tls_key_file;
    base.tls_ca_file = options_.tls_ca_file;
    if (!options_.tls_client_cert_file.empty()) {
      base.extra_config.push_back("tls-client-cert-file " + options_.tls_client_cert_file);
      base.extra_config.push_back("tls-client-key-file " + options_.tls_client_key_file);
    }
    base.extra_config.push_back("tls-cluster yes");
    base.extra_config.push_back("tls-replication yes");
  }
  base.extra_config.push_back("cluster-enabled yes");
  // Relative to the node's own directory (redis.conf's `dir`), where it
  // survives restart(): a restarted node rejoins under its ID.
  base.extra_config.push_back("cluster-config-file nodes.conf");
  base.extra_config.push_back("cluster-node-timeout " +
                              std::to_string(options_.node_timeout.count()));
  // Redis waits 5 s before a diskless full sync by default.
  base.extra_config.push_back("repl-diskless-sync-delay 0");
  base.extra_config.insert(base.extra_config.end(), options_.extra_config.begin(),
                           options_.extra_config.end());

  const int count = options_.masters * (1 + options_.replicas_per_master);
  for (int i = 0; i < count; ++i) {
    // redis_server retries a taken data port by itself, but not a taken bus
    // port, which is ours to choose.
    for (int attempt = 1;; ++attempt) {
      auto o = base;
      o.extra_config.push_back("cluster-port " + std::to_string(free_loopback_port()));
      try {
        nodes_.push_back(std::make_unique<redis_server>(o));
        break;
      } catch (const std::runtime_error&) {
        if (attempt == bus_port_attempts) throw;
      }
    }
  }
  create_cluster();
  for (const auto& n : nodes_) ids_[n->port()] = n->command({"CLUSTER", "MYID"}).front();
}

redis_cluster::~redis_cluster() {
  for (auto& n : nodes_) n->kill_and_wait();
}

void redis_cluster::create_cluster() {
  const auto cli = find_executable("redis-cli");
  if (cli.empty())
    throw std::runtime_error(
        "redis-cli is not installed (not found in PATH); the cluster tests need it "
        "(Debian: apt-get install redis-tools)");
  std::vector<std::string> args = {cli, "--cluster", "create"};
  for (const auto& n : nodes_) args.push_back("127.0.0.1:" + std::to_string(n->port()));
  args.insert(args.end(), {"--cluster-replicas", std::to_string(options_.replicas_per_master),
                           "--cluster-yes"});
  // In the environment, not on the command line, so it stays out of `ps`.
  std::vector<std::pair<std::string, std::string>> env;
  if (!options_.requirepass.empty()) env.emplace_back("REDISCLI_AUTH", options_.requirepass);

  const auto started = std::chrono::steady_clock::now();
  std::pair<int, std::string> result;
  try {
    result = run_captured(args, env, options_.ready_timeout);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string(e.what()) + "\n" + log_tails());
  }
  const auto& [status, output] = result;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("redis-cli --cluster create failed (status " + std::to_string(status) +
                             "); output:\n" + output + "\n" + log_tails());
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  wait_until_consistent(std::max(options_.ready_timeout - spent, std::chrono::milliseconds(1000)));
}

std::chrono::milliseconds redis_cluster::or_default(std::chrono::milliseconds timeout) const {
  return timeout.count() > 0 ? timeout : options_.ready_timeout;
}

std::vector<unsigned short> redis_cluster::ports() const {
  std::vector<unsigned short> out;
  for (const auto& n : nodes_) out.push_back(n->port());
  return out;
}

std::vector<std::string> redis_cluster::seed_urls() const {
  std::vector<std::string> out;
  for (const auto& n : nodes_) out.push_back(n->url());
  return out;
}

std::vector<std::string> redis_cluster::tls_seed_urls() const {
  std::vector<std::string> out;
  if (tls())
    for (const auto& n : nodes_) out.push_back(n->tls_url());
  return out;
}

redis_server& redis_cluster::node(unsigned short port) {
  for (auto& n : nodes_)
    if (n->port() == port) return *n;
  throw std::out_of_range("redis_cluster: no node on port " + std::to_string(port));
}

const redis_server& redis_cluster::node(unsigned short port) const {
  return const_cast<redis_cluster*>(this)->node(port);
}

std::vector<std::string> redis_cluster::command(unsigned short port,
                                                std::initializer_list<std::string> args) const {
  return node(port).command(args);
}

std::vector<std::string> redis_cluster::command(unsigned short port,
                                                const std::vector<std::string>& args) const {
  return node(port).command(args);
}

unsigned short redis_cluster::first_running() const {
  for (const auto& n : nodes_)
    if (n->running()) return n->port();
  throw std::runtime_error("redis_cluster: no node is running");
}

std::vector<redis_cluster_node_view> redis_cluster::view_from(unsigned short port) const {
  return parse_cluster_nodes(node(port).command({"CLUSTER", "NODES"}).front());
}

int redis_cluster::key_slot(const std::string& key) const {
  return std::stoi(node(first_running()).command({"CLUSTER", "KEYSLOT", key}).front());
}

unsigned short redis_cluster::master_port_for_slot(int slot) const {
  const auto view = view_from(first_running());
  const auto* owner = owner_in(view, slot);
  if (owner == nullptr)
    throw std::runtime_error("redis_cluster: no master owns slot " + std::to_string(slot) +
                             " in the view of port " + std::to_string(first_running()));
  return owner->port;
}

std::vector<unsigned short> redis_cluster::master_ports() const {
  std::vector<unsigned short> out;
  for (const auto& v : view_from(first_running()))
    if (v.master && !v.failed) out.push_back(v.port);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<unsigned short> redis_cluster::replica_ports_of(unsigned short master_port) const {
  const auto id = node_id(master_port);
  std::vector<unsigned short> out;
  for (const auto& v : view_from(first_running()))
    if (!v.master && v.master_id == id) out.push_back(v.port);
  std::sort(out.begin(), out.end());
  return out;
}

std::string redis_cluster::node_id(unsigned short port) const {
  if (const auto it = ids_.find(port); it != ids_.end()) return it->second;
  return node(port).command({"CLUSTER", "MYID"}).front();
}

void redis_cluster::wait_for_replication(unsigned short master_port,
                                         std::chrono::milliseconds timeout) {
  const auto info = node(master_port).command({"INFO", "replication"}).front();
  const auto target = std::stoll(info_field(info, "master_repl_offset"));
  const auto replicas = replica_ports_of(master_port);
  poll_until(
      "redis_cluster: replicas of " + std::to_string(master_port) + " reach offset " +
          std::to_string(target),
      or_default(timeout),
      [&]() -> std::string {
        for (const auto p : replicas) {
          if (!node(p).running()) continue;
          try {
            const auto r = node(p).command({"INFO", "replication"}).front();
            const auto offset = info_field(r, "slave_repl_offset");
            if (info_field(r, "master_link_status") != "up" || offset.empty() ||
                std::stoll(offset) < target)
              return "replica " + std::to_string(p) + " at offset " + offset;
          } catch (const std::exception& e) {
            return e.what();
          }
        }
        return {};
      },
      [&] { return log_tails(); });
}

void redis_cluster::kill_node(unsigned short port) { node(port).kill_and_wait(); }

void redis_cluster::restart_node(unsigned short port) {
  node(port).restart();
  wait_until_consistent();
}

unsigned short redis_cluster::failover_slot_master(int slot, std::chrono::milliseconds timeout) {
  const auto old_master = master_port_for_slot(slot);
  std::vector<unsigned short> candidates;
  for (const auto p : replica_ports_of(old_master))
    if (node(p).running()) candidates.push_back(p);
  if (candidates.empty())
    throw std::runtime_error("redis_cluster: the master of slot " + std::to_string(slot) +
                             " (port " + std::to_string(old_master) + ") has no running replica");
  kill_node(old_master);
  unsigned short promoted = 0;
  poll_until(
      "redis_cluster: failover of slot " + std::to_string(slot) + " away from port " +
          std::to_string(old_master),
      or_default(timeout),
      [&]() -> std::string {
        try {
          // The view must outlive the pointer into it.
          const auto view = view_from(first_running());
          const auto* owner = owner_in(view, slot);
          if (owner == nullptr) return "no owner of the slot";
          if (std::find(candidates.begin(), candidates.end(), owner->port) == candidates.end())
            return "slot owned by port " + std::to_string(owner->port);
          promoted = owner->port;
          return not_consistent_because();
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      [&] { return log_tails(); });
  return promoted;
}

void redis_cluster::manual_failover(unsigned short replica_port,
                                    std::chrono::milliseconds timeout) {
  const auto view = view_from(replica_port);
  const auto me = std::find_if(view.begin(), view.end(),
                               [&](const auto& v) { return v.id == node_id(replica_port); });
  if (me == view.end() || me->master)
    throw std::runtime_error("redis_cluster: port " + std::to_string(replica_port) +
                             " is not a replica");
  const auto old_master =
      std::find_if(view.begin(), view.end(), [&](const auto& v) { return v.id == me->master_id; });
  if (old_master == view.end() || old_master->slots.empty())
    throw std::runtime_error("redis_cluster: the master of port " + std::to_string(replica_port) +
                             " owns no slots");
  const int slot = old_master->slots.front().first;
  node(replica_port).command({"CLUSTER", "FAILOVER"});
  poll_until(
      "redis_cluster: manual failover to port " + std::to_string(replica_port), or_default(timeout),
      [&]() -> std::string {
        try {
          // The view must outlive the pointer into it.
          const auto view = view_from(first_running());
          const auto* owner = owner_in(view, slot);
          if (owner == nullptr || owner->port != replica_port)
            return "slot " + std::to_string(slot) + " owned by port " +
                   (owner ? std::to_string(owner->port) : std::string("none"));
          return not_consistent_because();
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      [&] { return log_tails(); });
}

void redis_cluster::migrate_slot(int slot, unsigned short to_master_port,
                                 std::chrono::milliseconds timeout) {
  begin_migration(slot, to_master_port);
  move_keys(slot);
  finish_migration(slot, timeout);
}

void redis_cluster::begin_migration(int slot, unsigned short to_master_port) {
  if (migrations_.count(slot))
    throw std::logic_error("redis_cluster: slot " + std::to_string(slot) + " is already migrating");
  const auto from = master_port_for_slot(slot);
  if (from == to_master_port)
    throw std::invalid_argument("redis_cluster: port " + std::to_string(to_master_port) +
                                " already owns slot " + std::to_string(slot));
  const auto view = view_from(first_running());
  const auto target = std::find_if(view.begin(), view.end(), [&](const auto& v) {
    return v.port == to_master_port && v.master && !v.failed;
  });
  if (target == view.end())
    throw std::invalid_argument("redis_cluster: port " + std::to_string(to_master_port) +
                                " is not a live master");
  const auto s = std::to_string(slot);
  node(to_master_port).command({"CLUSTER", "SETSLOT", s, "IMPORTING", node_id(from)});
  node(from).command({"CLUSTER", "SETSLOT", s, "MIGRATING", node_id(to_master_port)});
  migrations_[slot] = {from, to_master_port};
}

std::size_t redis_cluster::move_keys(int slot) {
  const auto it = migrations_.find(slot);
  if (it == migrations_.end())
    throw std::logic_error("redis_cluster: slot " + std::to_string(slot) +
                           " is not migrating (begin_migration first)");
  const auto [from, to] = it->second;
  // MIGRATE travels the way the cluster bus does: over TLS with tls-cluster.
  const auto target_port = std::to_string(tls() ? node(to).tls_port() : to);
  std::size_t moved = 0;
  const auto deadline = std::chrono::steady_clock::now() + options_.ready_timeout;
  for (;;) {
    const auto keys = node(from).command(
        {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), std::to_string(keys_per_migrate)});
    if (keys.empty()) return moved;
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("redis_cluster: keys of slot " + std::to_string(slot) +
                               " still on port " + std::to_string(from) + " after " +
                               ms_text(options_.ready_timeout));
    // Each MIGRATE is bounded by its own 1000 ms, inside command()'s 2 s.
    std::vector<std::string> args = {"MIGRATE", "127.0.0.1", target_port, "", "0", "1000"};
    if (!options_.requirepass.empty()) args.insert(args.end(), {"AUTH", options_.requirepass});
    args.push_back("KEYS");
    args.insert(args.end(), keys.begin(), keys.end());
    node(from).command(args);
    moved += keys.size();
  }
}

void redis_cluster::finish_migration(int slot, std::chrono::milliseconds timeout) {
  move_keys(slot);
  // Named apart, not as a structured binding: the lambda below captures `to`.
  const auto from = migrations_.at(slot).from;
  const auto to = migrations_.at(slot).to;
  const auto s = std::to_string(slot);
  const auto target_id = node_id(to);
  // Target first: once it owns the slot, the source's redirects point at an
  // owner; then the source; then everyone else, so no master keeps sending
  // clients to the source.
  node(to).command({"CLUSTER", "SETSLOT", s, "NODE", target_id});
  node(from).command({"CLUSTER", "SETSLOT", s, "NODE", target_id});
  for (const auto& v : view_from(first_running())) {
    if (!v.master || v.failed || v.port == to || v.port == from) continue;
    if (node(v.port).running()) node(v.port).command({"CLUSTER", "SETSLOT", s, "NODE", target_id});
  }
  migrations_.erase(slot);
  poll_until(
      "redis_cluster: slot " + s + " owned by port " + std::to_string(to), or_default(timeout),
      [&]() -> std::string {
        try {
          // The view must outlive the pointer into it.
          const auto view = view_from(first_running());
          const auto* owner = owner_in(view, slot);
          if (owner == nullptr || owner->port != to)
            return "owned by port " + (owner ? std::to_string(owner->port) : std::string("none"));
          return not_consistent_because();
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      [&] { return log_tails(); });
}

std::string redis_cluster::not_consistent_because() const {
  try {
    std::string reference;
    unsigned short reference_port = 0;
    std::vector<redis_cluster_node_view> view;
    for (const auto& n : nodes_) {
      if (!n->running()) continue;
      const auto where = "port " + std::to_string(n->port());
      const auto info = n->command({"CLUSTER", "INFO"}).front();
      const auto state = info_field(info, "cluster_state");
      if (state != "ok") return where + " has cluster_state:" + state;
      view = view_from(n->port());
      const auto text = canonical(view);
      if (reference_port == 0) {
        reference = text;
        reference_port = n->port();
      } else if (text != reference) {
        return where + " and port " + std::to_string(reference_port) + " disagree:\n" + text +
               "versus\n" + reference;
      }
    }
    if (reference_port == 0) return "no node is running";

    int owned = 0;
    for (const auto& v : view) {
      if (v.master && !v.failed)
        for (const auto& [a, b] : v.slots) owned += b - a + 1;
      const bool ours_running = std::any_of(nodes_.begin(), nodes_.end(), [&](const auto& n) {
        return n->port() == v.port && n->running();
      });
      if (ours_running && v.failed) return "port " + std::to_string(v.port) + " is marked failed";
      if (!ours_running && !v.failed)
        return "node " + v.id + " (port " + std::to_string(v.port) + ") not marked failed yet";
      if (ours_running && !v.master) {
        const auto info = node(v.port).command({"INFO", "replication"}).front();
        const auto link = info_field(info, "master_link_status");
        if (link != "up")
          return "replica " + std::to_string(v.port) + " has master_link_status:" + link;
      }
    }
    if (owned != slot_count)
      return std::to_string(owned) + " of " + std::to_string(slot_count) +
             " slots owned by live masters";
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

void redis_cluster::wait_until_consistent(std::chrono::milliseconds timeout) {
  poll_until(
      "redis_cluster: consistent", or_default(timeout), [&] { return not_consistent_because(); },
      [&] { return log_tails(); });
}

std::string redis_cluster::log_tails() const {
  std::string out;
  for (const auto& n : nodes_)
    out += "--- node " + std::to_string(n->port()) + (n->running() ? "" : " (killed)") + ":\n" +
           n->log_tail();
  return out;
}

}  // namespace baton::testing
