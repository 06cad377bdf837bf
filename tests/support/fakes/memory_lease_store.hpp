// A strict in-memory lease store for tests: the `memory` kind behind the port
// (baton/lease_store.hpp), with the semantics of the Redis kind and no server.
//
// memory_lease_backend is the shared "server" of one test: per election the
// lease (holder node id, expiry on the steady clock, its token), the token
// counter, the hold-back fence and the watching stores. memory_lease_store is
// one candidate's view of it, made on an io_context with a store_identity.
//
// What it mirrors of the Redis kind (src/redis/scripts.cpp):
// - acquire takes the lease when it is free or ours (the counter always moves
//   on, so a re-acquire of our own lease gets a new, larger token, as the
//   Redis acquire script's INCR does); a free lease taken is announced as
//   store_events::acquired to every watcher, the acquirer's too;
// - held names the holder's node id, its token and its remaining time;
// - reset() drops every lease, sets the fence for one ttl (only ever
//   lengthened) and tells every store (store_events::reset); while the fence
//   stands every acquire answers held_back, the remaining time covering both
//   the fence and any lease still there; tokens never go back;
// - renew and release act only on our own lease; a release is announced as
//   store_events::released to every watcher but those of the releasing node;
// - a switchover (async_hand_over) leaves the free lease reserved for its
//   target for the window: any other node's acquire answers held, naming the
//   target; every acquire and renewal registers its store as a candidate for
//   two ttls (async_candidates), and register_cooldown marks it cooling down
//   until its next one;
// - a lease is identified by node id, as a Redis lease value is by node id
//   plus a nonce fixed per process: two stores with the same node id on one
//   backend act on the same lease.
//
// Like any store: completions are always posted (never inline), each after
// the backend's latency (so a test can catch a call in flight); the backend
// applies a call when its latency has passed. close() aborts every call in
// flight once with operation_aborted; no handler runs after destruction.
// set_unavailable(true) makes calls fail with memory_errc::unavailable
// (== store_errc::unavailable) and takes the watches down, as a lost server.
//
// Single-threaded: the backend and its stores belong to one io_context's
// thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton::testing {

/// Why a memory store call failed.
enum class memory_errc {
  unavailable = 1,  ///< the backend was made unavailable (set_unavailable)
};

/// The category of memory_errc ("baton.memory"); unavailable maps onto
/// store_errc::unavailable.
const std::error_category& memory_store_category() noexcept;
std::error_code make_error_code(memory_errc e) noexcept;

class memory_lease_store;

/// What the backend holds for one election, for tests to inspect.
struct memory_lease_view {
  /// Node id of the holder ("" = free or expired).
  std::string holder;
  /// The holder's token (0 when free).
  std::uint64_t token = 0;
  /// The holder's remaining lease (0 when free).
  milliseconds remaining{0};
  /// The last token handed out (0 = none yet).
  std::uint64_t counter = 0;
  /// Time left of the hold-back fence (0 = none).
  milliseconds hold_back{0};
};

/// The shared "server" of one test. Stores keep its state alive, so either
/// may go first.
class memory_lease_backend {
 public:
  /// `latency`: how long every call takes before the backend applies it and
  /// its handler runs (0 = the next turn of the io_context).
  explicit memory_lease_backend(milliseconds latency = milliseconds{0});
  ~memory_lease_backend();
  memory_lease_backend(const memory_lease_backend&) = delete;
  memory_lease_backend& operator=(const memory_lease_backend&) = delete;

  /// Applies to calls made from now on.
  void set_latency(milliseconds latency);

  /// The store lost its data: every lease is dropped (without announcement),
  /// and every election is held back for `hold_back` (default: the longest
  /// ttl of any store made for it; only ever lengthened). Every store notes
  /// `why` in status().last_reset and its watcher hears
  /// store_events::reset{why}.
  void reset(std::string why, std::optional<milliseconds> hold_back = std::nullopt);

  /// While true, calls fail with memory_errc::unavailable (no change to the
  /// lease), links are disconnected and the watches are down (watchers hear
  /// wakeups{false}; announcements are lost). Back to false: the watches
  /// resubscribe and their watchers hear wakeups{true} and, as after a Redis
  /// resubscribe, store_events::released.
  void set_unavailable(bool unavailable);
  bool unavailable() const;

  /// The lease of `election` expires now (no announcement), as if its ttl
  /// had run out.
  void expire(const std::string& election);

  /// The state of `election` now.
  memory_lease_view view(const std::string& election) const;

  struct state;

 private:
  friend class memory_lease_store;
  std::shared_ptr<state> state_;
};

/// One candidate's store on a memory_lease_backend.
class memory_lease_store final : public lease_store {
 public:
  /// Throws std::invalid_argument when the election or node id is empty or
  /// the ttl is not positive (as redis_store does).
  memory_lease_store(boost::asio::io_context& io, memory_lease_backend& backend,
                     store_identity identity);
  ~memory_lease_store() override;
  memory_lease_store(const memory_lease_store&) = delete;
  memory_lease_store& operator=(const memory_lease_store&) = delete;

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
  /// kind "memory", label "in-memory", endpoint "memory"; link connected
  /// unless the backend is unavailable or the store closed.
  store_status status() const override;
  void close() override;

  /// Calls made and not completed yet.
  std::size_t in_flight() const;

  struct impl;

 private:
  std::unique_ptr<impl> impl_;
};

}  // namespace baton::testing

template <>
struct std::is_error_code_enum<baton::testing::memory_errc> : std::true_type {};
