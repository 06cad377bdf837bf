// The plumbing every store kind shares, held as one member of the kind's
// implementation, so that a kind writes only its protocol:
// - its life: guard() for completions, retire() first in the destructor, so
//   that nothing runs after destruction;
// - close(): after it every call the kind rejects with reject_if_closed()
//   completes with operation_aborted, posted (never inline), and no event
//   reaches the listener;
// - the listener: set_listener() replaces it, emit() calls a copy of it, so
//   that a listener may replace or clear itself, or close or destroy the
//   store, while it runs;
// - wake-ups: set_wakeups() says store_events::wakeups only when what it
//   says changed;
// - the record status() shows: the last failure (note_failure), its kind
//   and time, and the last reset (report_reset, note_reset).
// Single-threaded, like the stores: everything runs on the store's executor.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "baton/lease_store.hpp"

namespace baton::store_detail {

class store_shell {
 public:
  explicit store_shell(boost::asio::io_context& io);
  store_shell(const store_shell&) = delete;
  store_shell& operator=(const store_shell&) = delete;

  // --- life ----------------------------------------------------------------

  /// Expires once the store is gone (retire()): every completion the kind
  /// hands to its connections holds one and does nothing once it expired.
  std::weak_ptr<void> guard() const { return alive_; }
  /// The store is being destroyed: no guarded completion runs from now on.
  /// First in the kind's destructor, before it closes its connections, whose
  /// closing may complete calls at once.
  void retire() { alive_.reset(); }

  // --- close ---------------------------------------------------------------

  /// The error every call meets after close().
  static store_error aborted();
  bool closed() const { return closed_; }
  /// Marks the store closed and drops the listener; false when it was
  /// closed already (the kind then has nothing more to stop).
  bool close();
  /// After close(): posts `handler(aborted(), Answer{})` (never inline, and
  /// not after destruction) and answers true, so that the kind sends
  /// nothing; before close(): false, and `handler` is untouched.
  template <typename Answer>
  bool reject_if_closed(std::function<void(store_error, Answer)>& handler) {
    if (!closed_) return false;
    post_guarded([handler = std::move(handler)] { handler(aborted(), Answer{}); });
    return true;
  }

  /// Posts `handler(e, Answer{})` (never inline, not after destruction):
  /// a call the kind answers without asking its server.
  template <typename Answer>
  void fail_later(std::function<void(store_error, Answer)> handler, store_error e) {
    post_guarded([handler = std::move(handler), e = std::move(e)] { handler(e, Answer{}); });
  }

  /// When `why` is not empty, the call's input is refused before anything
  /// is sent: posts `handler(invalid_argument: why, Answer{})` and answers
  /// true; otherwise false, and `handler` is untouched.
  template <typename Answer>
  bool reject_input(const std::string& why, std::function<void(store_error, Answer)>& handler) {
    if (why.empty()) return false;
    fail_later(std::move(handler),
               store_error{std::make_error_code(std::errc::invalid_argument), why});
    return true;
  }

  // --- events --------------------------------------------------------------

  /// Replaces the listener (an empty one clears it); false after close(),
  /// when it is dropped.
  bool set_listener(lease_store::event_listener listener);
  /// Whether an event would reach a listener now: a listener is set and the
  /// store is not closed.
  bool listening() const { return !closed_ && static_cast<bool>(listener_); }
  /// Calls the listener with `e`, unless the store is closed or nobody
  /// listens. It calls a copy: the listener may replace itself, or close or
  /// destroy the store, while it runs.
  void emit(const store_event& e);

  /// Says store_events::wakeups{trusted, why} unless that is what was said
  /// last (at first: untrusted, no reason): a watch's state is news only
  /// when it changes, and a failure is told once per distinct reason.
  void set_wakeups(bool trusted, std::string why);
  /// The same for a change of trust alone: while untrusted the reason said
  /// last stands, so a watch failure told already is not told again, without
  /// one, when the watch's state moves on.
  void set_wakeups_trust(bool trusted);
  /// What was said last.
  bool wakeups_trusted() const { return wakeups_trusted_; }

  // --- status --------------------------------------------------------------

  /// Remembers a failure for status() (its message, its store_error_kind,
  /// now on the monotonic clock), and hands it back: each call's handler
  /// gets its own error, status() shows the latest.
  store_error note_failure(store_error e);
  /// Remembers why the store reset for status(), without telling watchers
  /// (one reset seen twice is told once).
  void note_reset(std::string why);
  /// Remembers the reset's reason and tells the listener.
  void report_reset(store_events::reset r);
  /// Fills `s`'s last_error, last_error_kind, last_error_at and last_reset.
  void fill_status(store_status& s) const;

 private:
  void post_guarded(std::function<void()> fn);

  boost::asio::io_context& io_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  bool closed_ = false;
  lease_store::event_listener listener_;
  bool wakeups_trusted_ = false;
  std::string wakeups_why_;
  std::string last_error_;
  std::string last_error_kind_;
  std::optional<time_point> last_error_at_;
  std::string last_reset_;
};

}  // namespace baton::store_detail
