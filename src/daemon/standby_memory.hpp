// When a standby gives back the pages its start-up used (startup_pages.hpp):
// at each leader (or term) it hears of once start-up's work is done, when it
// has reached the store, parked its keeper and waits. A second later, not at
// once: a new leader's start is a burst on the machine (its app starting,
// every standby hearing of it), and reading the page map and dropping pages
// take 1-3 ms of a CPU, which should not compete with it. Each new leader
// moves the time on. Nor near this standby's next attempt: that is when the
// lease may end, when the old leader's keeper stops its app and a standby
// takes over. A short ttl may leave no such quiet moment; then the pages stay.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>

#include "baton/time.hpp"

namespace baton {

class standby_memory {
 public:
  /// `standing_by`: this node waits as a standby that knows who leads, its
  /// app not active. `attempt_due_within(w)`: one of the machine's timers
  /// fires within `w` from now. `ttl` is lease.ttl.
  standby_memory(boost::asio::io_context& io, milliseconds ttl, std::function<bool()> standing_by,
                 std::function<bool(milliseconds)> attempt_due_within);

  /// Start-up's one-off work is over: from now on give_back_soon() acts.
  void startup_work_done();
  /// A standby heard of a new leader or term: give the pages back a second
  /// from now, if it still stands by then.
  void give_back_soon(int postponed = 0);
  /// The daemon exits: no more give-backs.
  void cancel() { timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
  milliseconds ttl_;
  std::function<bool()> standing_by_;
  std::function<bool(milliseconds)> attempt_due_within_;
  bool startup_work_done_ = false;
};

}  // namespace baton
