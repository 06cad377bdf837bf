// The port between the election and whatever stores the lease. Today Redis
// (redis_store); Sentinel, a Redlock quorum or PostgreSQL fit behind the same
// five calls. Every call completes exactly once, through its handler, on the
// caller's executor; none completes inline.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <system_error>

#include "baton/time.hpp"

namespace baton {

/// Answer to an acquire attempt.
struct acquire_reply {
  /// True when this candidate now holds the lease.
  bool acquired = false;
  /// Fencing token of the term: ours when acquired, the holder's otherwise
  /// (0 when unknown).
  std::uint64_t token = 0;
  /// Node id of the current holder when not acquired ("" when unknown).
  std::string holder;
  /// Remaining time to live of the holder's lease when not acquired;
  /// negative when unknown.
  milliseconds holder_ttl{-1};
};

/// Answer to a renew attempt.
enum class renew_reply {
  renewed,  ///< The lease is still ours and its expiry was moved to now + ttl.
  lost,     ///< The key is gone or holds another value: we are not the leader.
};

class lease_store {
 public:
  using acquire_handler = std::function<void(std::error_code, acquire_reply)>;
  using renew_handler = std::function<void(std::error_code, renew_reply)>;
  /// `released` is false when the key was no longer ours (nothing deleted).
  using release_handler = std::function<void(std::error_code, bool released)>;
  /// Called when a release of this election was announced by another node.
  using released_listener = std::function<void()>;

  virtual ~lease_store() = default;

  /// Take the lease for `ttl` if it is free or already ours.
  virtual void async_acquire(milliseconds ttl, acquire_handler handler) = 0;
  /// Extend our lease to `ttl` from now, only if it is still ours.
  virtual void async_renew(milliseconds ttl, renew_handler handler) = 0;
  /// Delete the lease only if it is ours, and announce the release.
  virtual void async_release(release_handler handler) = 0;
  /// Subscribe to release announcements (standbys use it to take over at
  /// once). The listener may be called any number of times.
  virtual void watch_releases(released_listener listener) = 0;
  /// Cancel everything in flight; handlers complete with operation_aborted.
  virtual void close() = 0;
};

}  // namespace baton
