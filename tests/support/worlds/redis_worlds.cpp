// The Redis kinds' worlds: one redis-server (redis), a master watched by a
// sentinel (sentinel), a cluster of three masters (cluster) and three
// independent masters (redlock). Each election's lease is the key
// baton:{ELECTION}:lease (docs/stores/redis.md); an operator's DEL removes it
// where it lives: on the one server, on the master the sentinel names, on
// the master of its slot, or on every Redlock master.
#include <algorithm>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/servers/redis_cluster.hpp"
#include "support/servers/redis_sentinel_group.hpp"
#include "support/servers/redis_server.hpp"
#include "support/worlds/world_kinds.hpp"

namespace baton::testing::worlds {
namespace {

using namespace std::chrono_literals;

std::string redis_lease_key(const std::string& election) {
  return "baton:{" + election + "}:lease";
}

// An operator's DEL of the lease key through `command`; throws when there
// was no key to delete.
void delete_redis_lease(
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& command,
    const std::string& election) {
  const auto reply = command({"DEL", redis_lease_key(election)});
  if (reply.empty() || reply.front() != "1") {
    throw std::runtime_error("DEL " + redis_lease_key(election) + ": no such key");
  }
}

// When the lease key a server holds expires, from its PTTL (whole ms,
// rounded down, read after the clock: an answer that errs early); nullopt
// when the key is gone or the server does not answer.
std::optional<std::int64_t> redis_key_expiry(
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& command,
    const std::string& election) {
  const std::int64_t before = monotonic_ns();
  try {
    const auto reply = command({"PTTL", redis_lease_key(election)});
    if (reply.empty()) return std::nullopt;
    const long long pttl = std::stoll(reply.front());
    if (pttl < 0) return std::nullopt;
    return before + pttl * 1'000'000;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

class redis_world final : public store_world {
 public:
  std::string kind() const override { return "redis"; }
  store_options options() const override {
    return {text_option("store.kind", "redis"), text_option("redis.url", server_.url())};
  }
  void delete_lease(const std::string& election) override {
    delete_redis_lease([this](const auto& args) { return server_.command(args); }, election);
  }
  bool tells_lease_end() const override { return true; }
  std::optional<std::int64_t> lease_kept_until_ns(const std::string& election) override {
    return redis_key_expiry([this](const auto& args) { return server_.command(args); }, election);
  }
  std::string diagnostics() const override { return "redis-server log:\n" + server_.log_tail(); }

 private:
  redis_server server_;
};

// One sentinel and no replica: the scenarios fault the daemons, not the
// deployment, and a lone sentinel needs no discovery, so the group is up in
// a fraction of a second. Failovers are sentinel_faults_test.cpp's.
redis_sentinel_group_options quick_sentinel_group() {
  redis_sentinel_group_options o;
  o.replicas = 0;
  o.sentinels = 1;
  o.quorum = 1;
  o.down_after = 60s;
  return o;
}

class sentinel_world final : public store_world {
 public:
  std::string kind() const override { return "sentinel"; }
  store_options options() const override {
    return {text_option("store.kind", "sentinel"),
            list_option("sentinel.addresses", group_.sentinel_urls()),
            text_option("sentinel.master_name", group_.master_name())};
  }
  void delete_lease(const std::string& election) override {
    const auto master = group_.master_port();
    delete_redis_lease([this, master](const auto& args) { return group_.command(master, args); },
                       election);
  }
  bool tells_lease_end() const override { return true; }
  std::optional<std::int64_t> lease_kept_until_ns(const std::string& election) override {
    const auto master = group_.master_port();
    return redis_key_expiry(
        [this, master](const auto& args) { return group_.command(master, args); }, election);
  }
  std::string diagnostics() const override { return group_.log_tails(); }

 private:
  redis_sentinel_group group_{quick_sentinel_group()};
};

// Three masters without replicas: the slot of every election has a master,
// and making it takes a few seconds rather than more with replicas.
redis_cluster_options quick_cluster() {
  redis_cluster_options o;
  o.replicas_per_master = 0;
  return o;
}

class cluster_world final : public store_world {
 public:
  std::string kind() const override { return "cluster"; }
  store_options options() const override {
    return {text_option("store.kind", "cluster"),
            list_option("cluster.nodes", cluster_.seed_urls())};
  }
  void delete_lease(const std::string& election) override {
    const auto master = master_of(election);
    delete_redis_lease([this, master](const auto& args) { return cluster_.command(master, args); },
                       election);
  }
  bool tells_lease_end() const override { return true; }
  std::optional<std::int64_t> lease_kept_until_ns(const std::string& election) override {
    const auto master = master_of(election);
    return redis_key_expiry(
        [this, master](const auto& args) { return cluster_.command(master, args); }, election);
  }
  std::string diagnostics() const override { return cluster_.log_tails(); }

 private:
  unsigned short master_of(const std::string& election) const {
    return cluster_.master_port_for_slot(cluster_.key_slot(redis_lease_key(election)));
  }

  redis_cluster cluster_{quick_cluster()};
};

class redlock_world final : public store_world {
 public:
  redlock_world() {
    for (int i = 0; i < 3; ++i) masters_.push_back(std::make_unique<redis_server>());
  }
  std::string kind() const override { return "redlock"; }
  store_options options() const override {
    std::vector<std::string> urls;
    for (const auto& m : masters_) urls.push_back(m->url());
    return {text_option("store.kind", "redlock"), list_option("redlock.masters", urls)};
  }
  /// On every master. A majority must have held it: after a contested
  /// start a leader holds a bare majority until its next renewal takes the
  /// other masters too.
  void delete_lease(const std::string& election) override {
    std::size_t deleted = 0;
    for (const auto& m : masters_) {
      const auto reply = m->command({"DEL", redis_lease_key(election)});
      if (!reply.empty() && reply.front() == "1") ++deleted;
    }
    if (deleted < masters_.size() / 2 + 1) {
      throw std::runtime_error("DEL " + redis_lease_key(election) + ": held by " +
                               std::to_string(deleted) + " of " + std::to_string(masters_.size()) +
                               " masters");
    }
  }
  bool tells_lease_end() const override { return true; }
  /// The majority's: the latest time before which a majority of masters
  /// still holds the key.
  std::optional<std::int64_t> lease_kept_until_ns(const std::string& election) override {
    std::vector<std::int64_t> expiries;
    for (const auto& m : masters_) {
      redis_server& server = *m;
      if (auto e = redis_key_expiry([&server](const auto& args) { return server.command(args); },
                                    election)) {
        expiries.push_back(*e);
      }
    }
    const std::size_t majority = masters_.size() / 2 + 1;
    if (expiries.size() < majority) return std::nullopt;
    std::sort(expiries.begin(), expiries.end(), std::greater<>());
    return expiries[majority - 1];
  }
  std::string diagnostics() const override {
    std::string out;
    for (const auto& m : masters_) out += "---- " + m->url() + "\n" + m->log_tail();
    return out;
  }

 private:
  std::vector<std::unique_ptr<redis_server>> masters_;
};

}  // namespace

std::unique_ptr<store_world> make_redis_world() {
  return std::make_unique<redis_world>();
}
std::unique_ptr<store_world> make_sentinel_world() {
  return std::make_unique<sentinel_world>();
}
std::unique_ptr<store_world> make_cluster_world() {
  return std::make_unique<cluster_world>();
}
std::unique_ptr<store_world> make_redlock_world() {
  return std::make_unique<redlock_world>();
}

}  // namespace baton::testing::worlds
