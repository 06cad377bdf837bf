// The store worlds (see store_worlds.hpp). Each begin() records how to undo
// what it did under the fault's id, and keeps the name of what it took in
// `busy_`, so that two overlapping faults never take the same server twice.
#include "campaign/store_worlds.hpp"

#include <dirent.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "support/servers/etcd_cluster.hpp"
#include "support/servers/etcd_server.hpp"
#include "support/servers/postgres_server.hpp"
#include "support/servers/redis_cluster.hpp"
#include "support/servers/redis_sentinel_group.hpp"
#include "support/servers/redis_server.hpp"
#include "support/servers/zookeeper_server.hpp"

namespace baton::campaign {

using namespace std::chrono_literals;
using testing::redis_server;

bool store_world::forcing(const fault& f, long long ttl_ms) const {
  switch (f.what) {
    case fault_class::store_kill:
    case fault_class::store_restart_empty:
    case fault_class::store_restore_old:
      return true;
    case fault_class::store_freeze:
      return f.hold_ms >= ttl_ms / 3;  // see campaign_run.cpp's long_freeze
    case fault_class::store_clock_jump:
      return clock_jump_may_end_a_lease(f, ttl_ms);
    default:
      return false;
  }
}

namespace {

std::string token_key(const std::string& election) {
  return "baton:{" + election + "}:token";
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

// The direct children of `pid` (PostgreSQL's backends and helpers), from /proc.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t candidate = static_cast<pid_t>(std::atoi(entry->d_name));
    if (candidate <= 1) continue;
    std::ifstream in("/proc/" + std::to_string(candidate) + "/stat");
    std::string stat{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const auto paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    // After ") ": state, then ppid.
    std::istringstream rest(stat.substr(paren + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == pid) out.push_back(candidate);
  }
  ::closedir(proc);
  return out;
}

// The common part: undo actions by fault id, and what each fault holds.
class world_base : public store_world {
 public:
  void end(int id) override {
    const auto it = undo_.find(id);
    if (it == undo_.end()) return;
    auto undo = std::move(it->second);
    undo_.erase(it);
    busy_.erase(held_[id]);
    held_.erase(id);
    undo();
  }

  void end_all() override {
    // In id order, which is the order they began.
    while (!undo_.empty()) end(undo_.begin()->first);
  }

 protected:
  // Takes `name` for fault `id` with `undo`; false if it is taken already.
  bool take(int id, const std::string& name, std::function<void()> undo) {
    if (!busy_.insert(name).second) return false;
    held_[id] = name;
    undo_[id] = std::move(undo);
    return true;
  }
  bool is_busy(const std::string& name) const { return busy_.count(name) != 0; }

 private:
  std::map<int, std::function<void()>> undo_;
  std::map<int, std::string> held_;
  std::set<std::string> busy_;
};

testing::redis_server_options persistent_redis() {
  testing::redis_server_options o;
  // Every write on disk before the reply: a killed server comes back with
  // its data (store-kill); store-restart-empty removes the files first.
  o.extra_config = {"appendonly yes", "appendfsync always"};
  return o;
}

class redis_world final : public world_base {
 public:
  redis_world() : server_(persistent_redis()) {
    const auto reply = server_.command({"CONFIG", "GET", "dir"});
    if (reply.size() == 2) dir_ = reply[1];
  }
  std::vector<std::string> store_flags() const override { return store_flags_via(server_.port()); }
  std::optional<unsigned short> store_port() const override { return server_.port(); }
  std::vector<std::string> store_flags_via(unsigned short port) const override {
    return {"--store-kind", "redis", "--redis-url", "redis://127.0.0.1:" + std::to_string(port)};
  }
  void seed_election(const std::string& election) override {
    server_.command({"SET", token_key(election), "1", "NX"});
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    if (f.what == fault_class::store_freeze) {
      if (!take(id, "server", [this] { server_.signal(SIGCONT); })) return std::nullopt;
      server_.signal(SIGSTOP);
      return "redis-server";
    }
    const bool empty = f.what == fault_class::store_restart_empty;
    if (!take(id, "server", [this] { server_.restart(); })) return std::nullopt;
    server_.kill_and_wait();
    if (empty && !dir_.empty()) {
      for (const char* name : {"appendonlydir", "appendonly.aof", "dump.rdb"}) {
        std::filesystem::remove_all(std::filesystem::path(dir_) / name);
      }
    }
    return "redis-server";
  }
  std::string diagnostics() const override { return "redis log:\n" + server_.log_tail(); }

 private:
  redis_server server_;
  std::string dir_;
};

testing::redis_sentinel_group_options sentinel_options() {
  testing::redis_sentinel_group_options o;
  o.replicas = 2;
  o.sentinels = 3;
  o.quorum = 2;
  o.down_after = 1000ms;
  return o;
}

class sentinel_world final : public world_base {
 public:
  sentinel_world() : group_(sentinel_options()) {}
  std::vector<std::string> store_flags() const override {
    return {"--store-kind",           "sentinel",
            "--sentinel-addresses",   join(group_.sentinel_urls()),
            "--sentinel-master-name", group_.master_name()};
  }
  void seed_election(const std::string& election) override {
    group_.command(group_.master_port(), {"SET", token_key(election), "1", "NX"});
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    if (f.what == fault_class::store_kill || f.what == fault_class::store_freeze) {
      unsigned short master = 0;
      try {
        master = group_.master_port();
      } catch (const std::exception&) {
        return std::nullopt;  // no sentinel answers: nothing to aim at
      }
      const std::string name = "data " + std::to_string(master);
      if (f.what == fault_class::store_freeze) {
        if (!take(id, name, [this, master] { group_.node(master).signal(SIGCONT); })) {
          return std::nullopt;
        }
        group_.node(master).signal(SIGSTOP);
        return "master " + std::to_string(master);
      }
      if (!take(id, name, [this, master] { group_.restart_node(master); })) return std::nullopt;
      group_.kill_node(master);
      return "master " + std::to_string(master);
    }
    // A member: a data node that is not the master, or a sentinel.
    std::vector<std::string> members;
    unsigned short master = 0;
    try {
      master = group_.master_port();
    } catch (const std::exception&) {
    }
    for (const auto port : group_.data_ports()) {
      if (port != master && !is_busy("data " + std::to_string(port))) {
        members.push_back("data " + std::to_string(port));
      }
    }
    for (std::size_t s = 0; s < group_.sentinel_count(); ++s) {
      if (!is_busy("sentinel " + std::to_string(s)))
        members.push_back("sentinel " + std::to_string(s));
    }
    if (members.empty()) return std::nullopt;
    const std::string name = members[f.pick % members.size()];
    const bool kill = f.what == fault_class::member_kill;
    const auto number = static_cast<unsigned short>(std::stoul(name.substr(name.find(' ') + 1)));
    if (name.starts_with("data ")) {
      if (kill) {
        take(id, name, [this, number] { group_.restart_node(number); });
        group_.kill_node(number);
      } else {
        take(id, name, [this, number] { group_.node(number).signal(SIGCONT); });
        group_.node(number).signal(SIGSTOP);
      }
    } else if (kill) {
      take(id, name, [this, number] { group_.start_sentinel(number); });
      group_.kill_sentinel(number);
    } else {
      take(id, name, [this, number] { group_.resume_sentinel(number); });
      group_.pause_sentinel(number);
    }
    return (name.starts_with("data ") ? "replica " + name.substr(5) : name);
  }
  std::string diagnostics() const override { return group_.log_tails(); }

 private:
  testing::redis_sentinel_group group_;
};

class cluster_world final : public world_base {
 public:
  std::vector<std::string> store_flags() const override {
    return {"--store-kind", "cluster", "--cluster-nodes", join(cluster_.seed_urls())};
  }
  void seed_election(const std::string& election) override {
    slot_ = cluster_.key_slot("baton:{" + election + "}:lease");
    cluster_.command(cluster_.master_port_for_slot(slot_), {"SET", token_key(election), "1", "NX"});
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    unsigned short master = 0;
    try {
      master = cluster_.master_port_for_slot(slot_);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    unsigned short port = master;
    if (f.what == fault_class::member_kill || f.what == fault_class::member_freeze) {
      std::vector<unsigned short> others;
      for (const auto p : cluster_.ports()) {
        if (p != master && !is_busy(std::to_string(p)) && cluster_.node(p).running()) {
          others.push_back(p);
        }
      }
      if (others.empty()) return std::nullopt;
      port = others[f.pick % others.size()];
    }
    const bool kill = f.what == fault_class::store_kill || f.what == fault_class::member_kill;
    const std::string role = port == master ? "slot master " : "node ";
    if (kill) {
      if (!take(id, std::to_string(port), [this, port] { cluster_.node(port).restart(); })) {
        return std::nullopt;
      }
      cluster_.kill_node(port);
    } else {
      if (!take(id, std::to_string(port), [this, port] { cluster_.node(port).signal(SIGCONT); })) {
        return std::nullopt;
      }
      cluster_.node(port).signal(SIGSTOP);
    }
    return role + std::to_string(port);
  }
  std::string diagnostics() const override { return cluster_.log_tails(); }

 private:
  testing::redis_cluster cluster_;
  int slot_ = 0;
};

class redlock_world final : public world_base {
 public:
  redlock_world() {
    for (int i = 0; i < 3; ++i) masters_.push_back(std::make_unique<redis_server>());
  }
  std::vector<std::string> store_flags() const override {
    std::vector<std::string> urls;
    for (const auto& m : masters_) urls.push_back(m->url());
    return {"--store-kind", "redlock", "--redlock-masters", join(urls)};
  }
  void seed_election(const std::string& election) override {
    for (auto& m : masters_) m->command({"SET", token_key(election), "1", "NX"});
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    std::vector<std::size_t> free;
    for (std::size_t i = 0; i < masters_.size(); ++i) {
      if (!is_busy(std::to_string(i))) free.push_back(i);
    }
    if (free.empty()) return std::nullopt;
    const std::size_t i = free[f.pick % free.size()];
    redis_server& m = *masters_[i];
    if (f.what == fault_class::member_kill) {
      // No persistence: it comes back empty, as a restarted Redlock master does.
      take(id, std::to_string(i), [&m] { m.restart(); });
      m.kill_and_wait();
    } else {
      take(id, std::to_string(i), [&m] { m.signal(SIGCONT); });
      m.signal(SIGSTOP);
    }
    return "master " + std::to_string(m.port());
  }
  std::string diagnostics() const override {
    std::string out;
    for (const auto& m : masters_)
      out += "redis " + std::to_string(m->port()) + ":\n" + m->log_tail();
    return out;
  }

 private:
  std::vector<std::unique_ptr<redis_server>> masters_;
};

testing::postgres_server_options clock_that_can_jump() {
  testing::postgres_server_options o;
  o.fake_clock = true;  // libfaketime, at the true time until a store-clock-jump
  return o;
}

std::string signed_ms(std::int64_t ms) {
  return (ms < 0 ? "" : "+") + std::to_string(ms) + " ms";
}

class postgres_world final : public world_base {
 public:
  postgres_world() : pg_(clock_that_can_jump()) {}
  std::vector<std::string> store_flags() const override { return store_flags_via(pg_.port()); }
  std::optional<unsigned short> store_port() const override { return pg_.port(); }
  std::vector<std::string> store_flags_via(unsigned short port) const override {
    return {"--store-kind", "postgres", "--postgres-url",
            "host=127.0.0.1 port=" + std::to_string(port) + " dbname=postgres user=postgres"};
  }
  bool take_backup() override {
    pg_.save_data_copy();
    backed_up_ = true;
    return true;
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    if (f.what == fault_class::store_restore_old) {
      if (!backed_up_ || is_busy("server")) return std::nullopt;
      pg_.put_data_copy_back();
      return "postgres (backup from the start)";
    }
    if (f.what == fault_class::store_kill) {
      if (!take(id, "server", [this] { pg_.start(); })) return std::nullopt;
      pg_.kill_and_wait();
      return "postgres";
    }
    if (f.what == fault_class::store_clock_jump) {
      // The wall clock of every backend steps at once, and back to the true
      // time at the end (NTP's correction); the server keeps running, so
      // this goes with a kill or freeze of it.
      const std::int64_t step = clock_step_ms(f);
      if (!take(id, "clock", [this] { pg_.set_clock_offset(std::chrono::milliseconds(0)); })) {
        return std::nullopt;
      }
      pg_.set_clock_offset(std::chrono::milliseconds(step));
      return "postgres clock " + signed_ms(step) + ", " + signed_ms(-step) + " after the hold";
    }
    // Freeze the postmaster and every backend: the server stops answering
    // on the connections it has, as a paused VM would.
    std::vector<pid_t> frozen = children_of(pg_.pid());
    frozen.push_back(pg_.pid());
    if (!take(id, "server", [frozen] {
          for (auto it = frozen.rbegin(); it != frozen.rend(); ++it) ::kill(*it, SIGCONT);
        })) {
      return std::nullopt;
    }
    for (const pid_t p : frozen) ::kill(p, SIGSTOP);
    return "postgres (" + std::to_string(frozen.size()) + " processes)";
  }
  std::string diagnostics() const override { return "postgres log:\n" + pg_.log_tail(); }

 private:
  testing::postgres_server pg_;
  bool backed_up_ = false;
};

class zookeeper_world final : public world_base {
 public:
  std::vector<std::string> store_flags() const override { return store_flags_via(zk_.port()); }
  std::optional<unsigned short> store_port() const override { return zk_.port(); }
  std::vector<std::string> store_flags_via(unsigned short port) const override {
    return {"--store-kind", "zookeeper", "--zookeeper-servers",
            "127.0.0.1:" + std::to_string(port)};
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    if (f.what == fault_class::store_freeze) {
      if (!take(id, "server", [this] { zk_.thaw(); })) return std::nullopt;
      zk_.freeze();
      return "zookeeper";
    }
    const bool empty = f.what == fault_class::store_restart_empty;
    if (!take(id, "server", [this, empty] {
          if (empty) {
            zk_.wipe_and_restart();
          } else {
            zk_.start();
          }
        })) {
      return std::nullopt;
    }
    zk_.stop(true);
    return "zookeeper";
  }
  std::string diagnostics() const override { return "zookeeper log:\n" + zk_.log_tail(); }

 private:
  testing::zookeeper_server zk_;
};

class etcd_world final : public world_base {
 public:
  std::vector<std::string> store_flags() const override {
    return store_flags_via(etcd_.client_port());
  }
  std::optional<unsigned short> store_port() const override { return etcd_.client_port(); }
  std::vector<std::string> store_flags_via(unsigned short port) const override {
    return {"--store-kind", "etcd", "--etcd-endpoints", "http://127.0.0.1:" + std::to_string(port)};
  }
  bool take_backup() override {
    etcd_.save_snapshot("campaign");
    backed_up_ = true;
    return false;
  }
  std::optional<std::string> begin(int id, const fault& f) override {
    if (f.what == fault_class::store_restore_old) {
      if (!backed_up_ || is_busy("server")) return std::nullopt;
      etcd_.restore_snapshot("campaign");
      return "etcd (snapshot from the start)";
    }
    if (f.what == fault_class::store_kill) {
      if (!take(id, "server", [this] { etcd_.start(); })) return std::nullopt;
      etcd_.stop(true);
      return "etcd";
    }
    if (!take(id, "server", [this] { etcd_.thaw(); })) return std::nullopt;
    etcd_.freeze();
    return "etcd";
  }
  std::string diagnostics() const override { return "etcd log:\n" + etcd_.log_tail(); }

 private:
  testing::etcd_server etcd_;
  bool backed_up_ = false;
};

// An ensemble (zookeeper or etcd, 3 or 5 servers): `store` faults hit the
// member that leads it, `member` faults a follower. A quorum remains after
// any one of them, so none forces baton's leadership to move.
class ensemble_world : public world_base {
 public:
  bool forcing(const fault&, long long) const override { return false; }
  std::optional<std::string> begin(int id, const fault& f) override {
    const auto leader = leader_index();
    std::vector<int> candidates;
    const bool on_leader = f.what == fault_class::store_kill || f.what == fault_class::store_freeze;
    if (on_leader) {
      if (leader) candidates.push_back(*leader);
    } else {
      for (int i = 0; i < size(); ++i) {
        if (i != leader.value_or(-1)) candidates.push_back(i);
      }
    }
    std::vector<int> free;
    for (const int i : candidates) {
      if (!is_busy(std::to_string(i))) free.push_back(i);
    }
    if (free.empty()) return std::nullopt;
    const int i = free[f.pick % free.size()];
    const bool kill = f.what == fault_class::store_kill || f.what == fault_class::member_kill;
    if (kill) {
      take(id, std::to_string(i), [this, i] { start(i); });
      stop(i);
    } else {
      take(id, std::to_string(i), [this, i] { thaw(i); });
      freeze(i);
    }
    return (on_leader ? "leader member " : "follower member ") + std::to_string(i + 1);
  }

 protected:
  virtual int size() const = 0;
  virtual std::optional<int> leader_index() const = 0;
  virtual void stop(int i) = 0;
  virtual void start(int i) = 0;
  virtual void freeze(int i) = 0;
  virtual void thaw(int i) = 0;
};

class etcd_ensemble_world final : public ensemble_world {
 public:
  explicit etcd_ensemble_world(int members) : cluster_(members) {}
  std::vector<std::string> store_flags() const override {
    return {"--store-kind", "etcd", "--etcd-endpoints", cluster_.endpoints()};
  }
  std::string diagnostics() const override { return cluster_.log_tails(); }

 private:
  int size() const override { return cluster_.size(); }
  std::optional<int> leader_index() const override {
    // A member frozen or stopped by another fault does not answer; the
    // running ones say who leads (nullopt during an election).
    return cluster_.leader_index();
  }
  void stop(int i) override { cluster_.member(i).stop(true); }
  void start(int i) override { cluster_.member(i).start(); }
  void freeze(int i) override { cluster_.member(i).freeze(); }
  void thaw(int i) override { cluster_.member(i).thaw(); }
  mutable testing::etcd_cluster cluster_;
};

class zookeeper_ensemble_world final : public ensemble_world {
 public:
  explicit zookeeper_ensemble_world(int members)
      : members_(testing::start_zookeeper_ensemble(members)) {}
  std::vector<std::string> store_flags() const override {
    std::vector<std::string> addresses;
    for (const auto& m : members_) addresses.push_back(m->address());
    return {"--store-kind", "zookeeper", "--zookeeper-servers", join(addresses)};
  }
  std::string diagnostics() const override {
    std::string out;
    for (std::size_t i = 0; i < members_.size(); ++i) {
      out += "---- zookeeper member " + std::to_string(i + 1) + "\n" + members_[i]->log_tail();
    }
    return out;
  }

 private:
  int size() const override { return static_cast<int>(members_.size()); }
  std::optional<int> leader_index() const override {
    for (std::size_t i = 0; i < members_.size(); ++i) {
      if (!is_busy(std::to_string(i)) && members_[i]->running() &&
          members_[i]->mode() == "leader") {
        return static_cast<int>(i);
      }
    }
    return std::nullopt;
  }
  void stop(int i) override { members_[static_cast<std::size_t>(i)]->stop(true); }
  // Not waiting for it to answer: the fault loop goes on meanwhile.
  void start(int i) override { members_[static_cast<std::size_t>(i)]->start(false); }
  void freeze(int i) override { members_[static_cast<std::size_t>(i)]->freeze(); }
  void thaw(int i) override { members_[static_cast<std::size_t>(i)]->thaw(); }
  std::vector<std::unique_ptr<testing::zookeeper_server>> members_;
};

}  // namespace

std::unique_ptr<store_world> make_store_world(const std::string& kind, int members) {
  if (members != 1) {
    if (members != 3 && members != 5) {
      throw std::invalid_argument("an ensemble has 3 or 5 members, not " + std::to_string(members));
    }
    if (kind == "etcd") return std::make_unique<etcd_ensemble_world>(members);
    if (kind == "zookeeper") return std::make_unique<zookeeper_ensemble_world>(members);
    throw std::invalid_argument("only zookeeper and etcd run as an ensemble here, not " + kind);
  }
  if (kind == "redis") return std::make_unique<redis_world>();
  if (kind == "sentinel") return std::make_unique<sentinel_world>();
  if (kind == "cluster") return std::make_unique<cluster_world>();
  if (kind == "redlock") return std::make_unique<redlock_world>();
  if (kind == "postgres") return std::make_unique<postgres_world>();
  if (kind == "zookeeper") return std::make_unique<zookeeper_world>();
  if (kind == "etcd") return std::make_unique<etcd_world>();
  throw std::invalid_argument("unknown store kind '" + kind + "'");
}

}  // namespace baton::campaign
