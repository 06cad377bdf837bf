// One store kind's world for daemon-level tests: the real servers the kind
// needs (started through the fixtures of support/servers/), and what a user
// writes to point a candidate at them, as option names and values
// (`store.kind`, `zookeeper.servers`, ...) rendered as a YAML file or as
// BATON_* variables. A daemon started from that text goes through the
// loader, the kind's descriptor and make_lease_store, so the config → store
// wiring is part of every scenario run in the world; no settings struct of
// baton's is named here. Each world also does the kind's own faults that a
// kind-neutral scenario asks for by name: an operator deleting the lease
// (DEL in Redis, DELETE in PostgreSQL, etcdctl del, a ZooKeeper delete).
//
// A world is made fresh per test process and may serve several elections
// one after the other (its scenarios fault the daemons, not its servers).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/baton_process.hpp"

namespace baton::testing {

/// One option as the configuration reference names it: its YAML key
/// ("section.name") and its value as a user writes it. A list (the URL
/// lists: sentinel.addresses, cluster.nodes, redlock.masters,
/// etcd.endpoints, zookeeper.servers) is a YAML sequence in a file and its
/// elements separated by commas in a variable or a flag.
struct store_option {
  std::string key;
  std::vector<std::string> values;  ///< one, unless `list`
  bool list = false;
};
/// A single value.
inline store_option text_option(std::string key, std::string value) {
  return {std::move(key), {std::move(value)}, false};
}
/// A list of values.
inline store_option list_option(std::string key, std::vector<std::string> values) {
  return {std::move(key), std::move(values), true};
}
using store_options = std::vector<store_option>;

class store_world {
 public:
  virtual ~store_world() = default;

  /// The kind, as store.kind spells it.
  virtual std::string kind() const = 0;
  /// What points a candidate at this world's servers: store.kind first,
  /// then the kind's own options.
  virtual store_options options() const = 0;
  /// Deletes `election`'s lease in the store by hand, as an operator would
  /// (the key, row or node that says who holds it; nothing else). Throws
  /// std::runtime_error when the store does not answer or there was no
  /// lease to delete.
  virtual void delete_lease(const std::string& election) = 0;
  /// CLOCK_MONOTONIC ns before which the store cannot let `election`'s
  /// lease go, from what it says now (its own remaining time, read after
  /// the clock, so the answer errs early); nullopt when nobody holds it or
  /// the kind does not tell (etcd's lease ttl is whole seconds, ZooKeeper's
  /// session has none to read).
  virtual std::optional<std::int64_t> lease_kept_until_ns(const std::string& election) {
    (void)election;
    return std::nullopt;
  }
  /// Whether lease_kept_until_ns answers for a held lease (the Redis kinds'
  /// PTTL, PostgreSQL's expires_at), so a scenario can insist on an answer.
  virtual bool tells_lease_end() const { return false; }
  /// The servers' log tails, for failure messages.
  virtual std::string diagnostics() const { return {}; }
};

/// Every kind a world can be made of, as store.kind spells them.
const std::vector<std::string>& store_world_kinds();

/// A world of `kind` with its servers up. Throws std::invalid_argument for
/// a kind not in store_world_kinds(), std::runtime_error when a server does
/// not come up.
std::unique_ptr<store_world> make_store_world(const std::string& kind);

/// `options` as a YAML document: one mapping per section, in the order the
/// sections first appear, every value a double-quoted string (a list's in
/// a flow sequence).
std::string yaml_of(const store_options& options);

/// `options` as the environment variables the configuration reference
/// gives them: BATON_ and the key in capitals, its dot an underscore
/// (store.kind: BATON_STORE_KIND).
env_list environment_of(const store_options& options);

}  // namespace baton::testing
