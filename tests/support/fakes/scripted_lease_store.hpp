// A strict scripted lease store for driver tests: every call is recorded and
// held pending until the test answers it, oldest first per kind. A call the
// test did not allow (expect_acquire(), expect_renew(), expect_release(), or
// allow_any()) fails the test with ADD_FAILURE naming the call; the call is
// still recorded and held, so the test can go on and see what followed.
//
// Like any store: answers and events reach their handlers through
// asio::post on the io_context, never inline; close() aborts every pending
// call once with operation_aborted and later calls too; no handler runs after
// destruction. watch(), status() and close() are always allowed (counted).
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton::testing {

/// Answers a test commonly gives.
namespace answers {
/// Acquired with `token`.
acquire_answer acquired(std::uint64_t token);
/// Held by `holder` with its `token`, for `remaining`.
acquire_answer held(std::string holder, std::uint64_t token, milliseconds remaining);
/// Held back by a reset for `remaining`, no holder named.
acquire_answer held_back(milliseconds remaining, std::uint64_t token = 0);
}  // namespace answers

class scripted_lease_store final : public lease_store {
 public:
  /// The identity defaults to election "jobs", node "node-a", ttl 5 s.
  explicit scripted_lease_store(boost::asio::io_context& io,
                                store_identity identity = {"jobs", "node-a", milliseconds{5000}});
  ~scripted_lease_store() override;
  scripted_lease_store(const scripted_lease_store&) = delete;
  scripted_lease_store& operator=(const scripted_lease_store&) = delete;

  // --- what the test allows ---------------------------------------------------
  /// Allows `times` more calls of that kind.
  void expect_acquire(int times = 1);
  void expect_renew(int times = 1);
  void expect_release(int times = 1);
  /// While on, every call is allowed.
  void allow_any(bool on = true);
  /// Fails the test (ADD_FAILURE) for every allowed call that was not made,
  /// then forgets them.
  void verify_expectations();

  // --- answering: the oldest pending call of the kind ---------------------------
  /// ADD_FAILURE when none is pending.
  void answer_acquire(store_error error, acquire_answer answer);
  void answer_acquire(acquire_answer answer) { answer_acquire(store_error{}, std::move(answer)); }
  void answer_renew(store_error error, renew_answer answer);
  void answer_renew(renew_answer answer) { answer_renew(store_error{}, answer); }
  void answer_release(store_error error, release_answer answer);
  void answer_release(release_answer answer) { answer_release(store_error{}, answer); }

  std::size_t pending_acquires() const { return acquires_.size(); }
  std::size_t pending_renews() const { return renews_.size(); }
  std::size_t pending_releases() const { return releases_.size(); }

  // --- what the code under test did -----------------------------------------------
  int acquire_calls() const { return acquire_calls_; }
  int renew_calls() const { return renew_calls_; }
  int release_calls() const { return release_calls_; }
  int watch_calls() const { return watch_calls_; }
  int close_calls() const { return close_calls_; }
  /// Every call in order: "acquire", "renew", "release", "create_record",
  /// "watch", "close".
  const std::vector<std::string>& calls() const { return calls_; }
  bool watching() const { return static_cast<bool>(listener_); }
  bool closed() const { return closed_; }

  // --- events and status ----------------------------------------------------------
  /// Posts `event` to the watcher. ADD_FAILURE when nobody watches (unless
  /// closed: a closed store reports nothing).
  void emit(store_event event);
  /// What status() returns from now on (default: kind, label and endpoint
  /// "scripted", link connected, wakeups off). watch() sends no event of its
  /// own: the test emits wakeups{true} when it wants the driver to trust them.
  void set_status(store_status status);

  // --- lease_store ------------------------------------------------------------------
  const store_identity& identity() const override { return identity_; }
  void async_acquire(acquire_handler handler) override;
  void async_renew(renew_handler handler) override;
  void async_release(release_handler handler) override;
  /// Never expected of a driver: fails the test unless allow_any; answers
  /// existed.
  void async_create_record(record_handler handler) override;
  /// A hand-over is never expected unless allow_any (it answers not_ours);
  /// candidates are always allowed, not recorded, and answer an empty list.
  void async_hand_over(const std::string& to_node, milliseconds window,
                       release_handler handler) override;
  void async_candidates(candidates_handler handler) override;
  /// Allowed, not recorded: the identity's card changes.
  void update_card(std::string card) override { identity_.card = std::move(card); }
  /// Counted in looks, never refused; answers `look_answer`, posted.
  void async_look(look_handler handler) override;
  int looks = 0;
  lease_holder look_answer;
  void watch(event_listener listener) override;
  store_status status() const override { return status_; }
  void close() override;

 private:
  // Whether a call of `kind` is allowed; ADD_FAILURE names it when not.
  bool allowed(const char* kind, int& budget);
  template <typename Handler, typename... Args>
  void post(Handler handler, Args... args);

  boost::asio::io_context& io_;
  store_identity identity_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  bool closed_ = false;
  bool allow_any_ = false;
  int acquires_allowed_ = 0;
  int renews_allowed_ = 0;
  int releases_allowed_ = 0;
  std::deque<acquire_handler> acquires_;
  std::deque<renew_handler> renews_;
  std::deque<release_handler> releases_;
  event_listener listener_;
  store_status status_;
  int acquire_calls_ = 0;
  int renew_calls_ = 0;
  int release_calls_ = 0;
  int watch_calls_ = 0;
  int close_calls_ = 0;
  std::vector<std::string> calls_;
};

}  // namespace baton::testing
