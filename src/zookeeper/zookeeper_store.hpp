// The lease store on ZooKeeper: the `zookeeper` store kind behind the port
// (baton/lease_store.hpp). Per election a fixed ephemeral lease node and a
// persistent record node (lease_nodes.hpp): acquire is one multi that
// rewrites the record (the token counter, version checked) and creates the
// lease node; renew is a write (the lease node rewritten, the record's
// version checked in the same multi, so a term begun by another candidate
// fails it); release deletes the lease node with its version, and a
// hand-over does the same with a reservation for its target written into
// the record (lease_nodes.hpp says how its window is judged). Each session
// registers the store once, as an ephemeral node under
// <path>/<election>/candidates named after its priority and node id: the
// candidates a switchover picks from. An acquiring store keeps those names
// by a children watch, read again (in its next acquire's round trip) only
// once the watch fired: the count of a held answer's outranked_by.
// Wake-ups come from an exists watch on the lease node. All I/O is the
// single-threaded C client driven from the daemon's io_context (zk_link.hpp).
//
// Lease timing: a lease is valid for ttl from the send time of the last
// acknowledged acquire or renewal write, on this process's monotonic clock;
// when it runs out unrenewed the store deletes its own lease node. The
// session timeout is asked to be the ttl, and a session the server grants
// less than that is refused (the server would delete the lease node of a
// live leader early). A holder that dies loses its node when its session
// expires: about the session timeout after its last contact.
//
// Resets: an expired session, a session no server accepts again within its
// timeout (a wiped or restored ensemble refuses it without saying
// "expired"), or a missing record. The store opens a new session and holds
// every acquisition back for one ttl, writing the hold into the record so
// that every candidate is held back too.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>

#include "baton/lease_store.hpp"
#include "zookeeper_error.hpp"

namespace baton {

struct zookeeper_store_options {
  /// "host:port,host:port": the ensemble's client addresses. Names are
  /// resolved off the loop before the client sees them.
  std::string servers;
  /// The node under which every election has its own node
  /// (`<path>/<election>/lease`, `/record` and
  /// `/candidates/<priority>_<node>`); created when missing.
  std::string path = "/baton";
  /// Requested session timeout; 0 = the ttl. Must come back from the server
  /// at least as long as the ttl, or acquire fails (session_too_short).
  milliseconds session_timeout{0};
  /// How long a call waits for a session (connecting, or a new session after
  /// a lost one) before it fails as unavailable.
  milliseconds connect_timeout{2000};
  /// How long one call waits for its answers once it was sent.
  milliseconds command_timeout{1000};
  /// "" = no authentication; "digest" = user and password below. With it,
  /// the election's nodes are created with ACLs creator-all + world-read.
  std::string auth_scheme;
  std::string auth_user;
  /// A file holding the password (its first line). Read when the store is
  /// made; never logged.
  std::string password_file;
  /// Election, node id and ttl (> 0); fixed for the store's life.
  store_identity identity;
};

/// Errors reach handlers as zookeeper_errc codes (zookeeper_error.hpp maps
/// them onto store_errc), or operation_aborted after close().
class zookeeper_store final : public lease_store {
 public:
  /// Connects lazily. Throws std::invalid_argument for an empty election or
  /// node id, a ttl <= 0, an election or path that cannot be a ZooKeeper
  /// node, a bad server list, an unknown auth scheme or an unreadable
  /// password file.
  zookeeper_store(boost::asio::io_context& io, zookeeper_store_options options);
  ~zookeeper_store() override;

  const store_identity& identity() const override;
  void async_acquire(acquire_handler handler) override;
  void async_renew(renew_handler handler) override;
  void async_release(release_handler handler) override;
  void async_hand_over(const std::string& to_node, milliseconds window,
                       release_handler handler) override;
  void async_candidates(candidates_handler handler) override;
  void register_cooldown(milliseconds cooldown) override;
  void update_card(std::string card) override;
  void async_look(look_handler handler) override;
  void async_create_record(record_handler handler) override;
  void watch(event_listener listener) override;
  store_status status() const override;
  /// lease.failsafe peers (zookeeper_store_failsafe.cpp).
  failsafe_calls* failsafe() override;
  void close() override;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace baton
