// Where the master is, for stores whose master moves: Sentinel names it, a
// Cluster's slot map names the master of the election's slot. A connection
// asks on every (re)connect, through a locating transport
// (locating_transport.hpp), so a failover or a slot move is followed by the
// next reconnect; the store forces one when a server answers as a replica
// would (READONLY, MOVED) or when a locator hears of a switch.
#pragma once

#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "baton/lease_store.hpp"

namespace baton::redis_detail {

/// A master's TCP address.
struct master_address {
  std::string host;
  unsigned short port = 0;

  bool operator==(const master_address&) const = default;
  std::string text() const;
};

/// What status shows as a located store's endpoint: how the master is found
/// (`description`, the locator's describe()) and, once a connection reached
/// it, where (`peer`). A transport still asking, or asking again after the
/// master went away, names the description as its peer: that is not an
/// address, and repeating it read "master m via 1 sentinel, at master m via
/// 1 sentinel".
std::string located_endpoint_text(const std::string& description, const std::string& peer);


class master_locator {
 public:
  /// `error` names every source asked and why each failed.
  using locate_handler = std::function<void(store_error error, master_address where)>;

  virtual ~master_locator() = default;
  /// Finds the master now. Completes once, posted, never inline.
  virtual void async_locate(locate_handler handler) = 0;
  /// A server redirected us (MOVED): the next locate answers `where` without
  /// asking (once), since the redirect is fresher than any slot map.
  virtual void redirected(master_address where) { (void)where; }
  /// The located server turned out not to be a master (its ROLE said
  /// otherwise): ask another source first next time.
  virtual void not_a_master() {}
  /// Stops every connection and timer; later locates fail with
  /// operation_aborted.
  virtual void close() = 0;
  /// "Sentinel master NAME via 3 sentinels": where the lease lives, for people.
  virtual std::string describe() const = 0;
  /// Each source's state (sentinels or seed nodes), for status().
  virtual std::vector<store_member_status> sources() const = 0;

  /// Told when a source says the master moved, with who said so; the store
  /// then reconnects. Not called after close().
  void set_switch_listener(std::function<void(const std::string& why)> listener) {
    on_switch_ = std::move(listener);
  }

 protected:
  void tell_switch(const std::string& why) {
    // A copy: the listener may close the locator.
    if (auto call = on_switch_) call(why);
  }
  void forget_switch_listener() { on_switch_ = nullptr; }

 private:
  std::function<void(const std::string&)> on_switch_;
};

}  // namespace baton::redis_detail
