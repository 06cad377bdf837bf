// What the lease-store contract suite (lease_store_contract.hpp) needs from a
// store kind: its io_context, a way to make candidates' stores in one
// election, a way to make the store lose its data the kind's own way, and, if
// the kind can, a way to make it unreachable. One small file per kind
// implements it (memory_contract_test.cpp, redis_contract_test.cpp) and
// instantiates the suite with it.
#pragma once

#include <utility>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton::contract {

/// Who a store works for, as a case asks for it: what the harness puts into
/// the kind's store_identity (the election is the harness's own).
struct candidate_spec {
  std::string node_id;
  milliseconds ttl{0};
  int priority = 0;
  /// lease.failsafe peers: the address its registration publishes; "" =
  /// the mode is off (store_identity::peer_address).
  std::string peer_address{};
};

/// One test's world of one store kind: made fresh for every test (a Redis
/// harness starts its own redis-server), destroyed after the test's stores.
class contract_harness {
 public:
  virtual ~contract_harness() = default;

  /// The kind as store.kind spells it ("memory", "redis"); also what the
  /// stores' status().kind must say.
  virtual std::string name() const = 0;
  /// Where every store of this harness runs its handlers; the suite runs it.
  virtual boost::asio::io_context& io() = 0;
  /// A store for `who` in the harness's one election, on the harness's
  /// io(). The election has run before: the first acquire is not held back
  /// by a reset.
  virtual std::unique_ptr<lease_store> make_candidate(const candidate_spec& who) = 0;
  std::unique_ptr<lease_store> make_store(const std::string& node_id, milliseconds lease_ttl,
                                          int priority = 0) {
    return make_candidate({node_id, lease_ttl, priority, {}});
  }
  /// The store loses its data the kind's own way (memory: the backend's
  /// reset; Redis: the server restarts empty). Stores made before may need a
  /// call or two, failing as unavailable, to notice; after that every
  /// acquisition is held back for about one ttl.
  virtual void reset_store() = 0;
  /// Whether make_unreachable() works for this kind.
  virtual bool can_make_unreachable() const = 0;
  /// From now on every call of every store fails as store_errc::unavailable.
  virtual void make_unreachable() = 0;
  /// How much later than its ttl a lease of this kind may still be held:
  /// stores whose server expires leases itself (a ZooKeeper session, an etcd
  /// lease checked every 500 ms) free them up to this long after the ttl.
  /// The cases that wait for an expiry wait this much longer.
  virtual milliseconds expiry_slack() const { return milliseconds(0); }
  /// Whether this kind records a cool-down (lease_store::register_cooldown):
  /// every kind's store, and the memory fake.
  virtual bool records_cooldown() const { return false; }
  /// Whether it tells each candidate's last attempt (candidate_info): not a
  /// kind whose candidates are listed while their session lives (ZooKeeper).
  virtual bool tells_last_attempt() const { return records_cooldown(); }
  /// Extra text for failure messages (a server's log tail); "" = none.
  virtual std::string diagnostics() const { return {}; }
};

/// A parameter of the suite: the kind's name (the test name's suffix) and how
/// to make a fresh harness of it.
struct contract_kind {
  std::string name;
  std::function<std::unique_ptr<contract_harness>()> make;
};

inline void PrintTo(const contract_kind& kind, std::ostream* os) {
  *os << kind.name;
}

}  // namespace baton::contract
