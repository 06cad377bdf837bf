// The store side of a campaign, one world per kind: the real servers
// (from tests/support/servers), the flags that point a daemon at them, and
// the store and member faults of that kind (the classes classes_of() lists
// for it). Every server a world starts is its own child, stopped by its
// fixture's destructor; a world thaws what it froze before that.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "campaign/fault_schedule.hpp"

namespace baton::campaign {

class store_world {
 public:
  virtual ~store_world() = default;

  /// The baton flags of this kind (`--store-kind K ...`).
  virtual std::vector<std::string> store_flags() const = 0;
  /// The one port every candidate reaches the store on, where there is one
  /// (a single server): the link faults put a proxy in front of it.
  virtual std::optional<unsigned short> store_port() const { return std::nullopt; }
  /// The flags with the store's port replaced by `port` (a proxy's).
  virtual std::vector<std::string> store_flags_via(unsigned short port) const {
    (void)port;
    return store_flags();
  }
  /// Prepares the election's keys as a long-lived store would hold them
  /// (the Redis kinds' token counter), so a first start is not held back.
  virtual void seed_election(const std::string& election) { (void)election; }
  /// Called once the first app works: a backup for store-restore-old.
  /// Returns whether taking it restarted the store (PostgreSQL's copy of
  /// its data directory is taken shut down): the run records that as a
  /// fault of its own, `store-backup`.
  virtual bool take_backup() { return false; }

  /// Begins store or member fault `id` (`f.what` one of this kind's store
  /// classes); returns what it hit ("master 7001", "member 2"), or nullopt
  /// when it cannot now (that server is already down or frozen).
  virtual std::optional<std::string> begin(int id, const fault& f) = 0;
  /// Ends fault `id` (restarts or thaws what it took), if it began.
  virtual void end(int id) = 0;
  /// Ends every fault still on: before the world is destroyed, so that no
  /// server is left stopped (a stopped backend outlives its killed
  /// PostgreSQL postmaster).
  virtual void end_all() = 0;
  /// Whether the fault requires the leadership to move (see applied_fault).
  virtual bool forcing(const fault& f, long long ttl_ms) const;

  /// Log tails, for a failure report.
  virtual std::string diagnostics() const { return {}; }
};

/// The world of `kind` (one of campaign_kinds()) with `members` servers (3
/// or 5: an ensemble, for zookeeper and etcd); throws std::invalid_argument
/// for another, std::runtime_error when a server does not come up.
std::unique_ptr<store_world> make_store_world(const std::string& kind, int members = 1);

}  // namespace baton::campaign
