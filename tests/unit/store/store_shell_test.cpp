// The shell every store kind holds (src/store/store_shell.hpp): calls after
// close() complete with operation_aborted, posted and never after the store
// is gone; events reach the listener through a copy, so that a listener may
// replace itself or close the store while it runs; wake-ups are said once per
// change; failures and resets fill status().
#include "store/store_shell.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "store/nonce.hpp"

namespace {

using baton::acquire_answer;
using baton::acquire_outcome;
using baton::lease_store;
using baton::mono_clock;
using baton::record_answer;
using baton::store_errc;
using baton::store_error;
using baton::store_event;
using baton::store_status;
using baton::store_detail::store_shell;
namespace store_events = baton::store_events;

bool is_aborted(const store_error& e) {
  return e.code == boost::system::error_code(boost::asio::error::operation_aborted);
}

// One line per event, for comparing sequences.
std::string describe(const store_event& e) {
  if (std::holds_alternative<store_events::released>(e)) return "released";
  if (const auto* a = std::get_if<store_events::acquired>(&e)) {
    return "acquired " + a->holder + " " + std::to_string(a->token);
  }
  if (const auto* r = std::get_if<store_events::reset>(&e)) return "reset " + r->why;
  const auto& w = std::get<store_events::wakeups>(e);
  return std::string(w.trusted ? "trusted" : "untrusted") + (w.why.empty() ? "" : " " + w.why);
}

// --- closed --------------------------------------------------------------------

TEST(store_shell_test, before_close_calls_pass_and_their_handlers_are_left_alone) {
  boost::asio::io_context io;
  store_shell shell(io);
  int ran = 0;
  lease_store::acquire_handler handler = [&](store_error, acquire_answer) { ++ran; };
  EXPECT_FALSE(shell.closed());
  EXPECT_FALSE(shell.reject_if_closed(handler));
  ASSERT_TRUE(handler) << "the handler was taken from a call that may go on";
  io.run();
  EXPECT_EQ(ran, 0);
}

TEST(store_shell_test, after_close_calls_complete_aborted_once_each_and_never_inline) {
  boost::asio::io_context io;
  store_shell shell(io);
  EXPECT_TRUE(shell.close());
  EXPECT_FALSE(shell.close()) << "a second close has nothing left to stop";
  EXPECT_TRUE(shell.closed());

  std::vector<std::string> seen;
  lease_store::acquire_handler acquire = [&](store_error e, acquire_answer a) {
    seen.push_back(std::string("acquire ") + (is_aborted(e) ? "aborted" : e.message()) +
                   (a.outcome == acquire_outcome::held && a.token == 0 ? " default" : " answer"));
  };
  lease_store::record_handler record = [&](store_error e, record_answer a) {
    seen.push_back(std::string("record ") + (is_aborted(e) ? "aborted" : e.message()) +
                   (a == record_answer::created ? " default" : " answer"));
  };
  EXPECT_TRUE(shell.reject_if_closed(acquire));
  EXPECT_TRUE(shell.reject_if_closed(record));
  EXPECT_TRUE(seen.empty()) << "completed inline";
  io.run();
  EXPECT_EQ(seen, (std::vector<std::string>{"acquire aborted default", "record aborted default"}));
}

TEST(store_shell_test, a_rejected_call_does_not_complete_once_the_store_is_gone) {
  boost::asio::io_context io;
  int ran = 0;
  {
    store_shell shell(io);
    shell.close();
    lease_store::renew_handler handler = [&](store_error, baton::renew_answer) { ++ran; };
    EXPECT_TRUE(shell.reject_if_closed(handler));
    shell.retire();
  }
  io.run();
  EXPECT_EQ(ran, 0);
}

TEST(store_shell_test, the_guard_expires_when_the_store_retires) {
  boost::asio::io_context io;
  store_shell shell(io);
  const auto guard = shell.guard();
  EXPECT_FALSE(guard.expired());
  shell.retire();
  EXPECT_TRUE(guard.expired());
}

// --- the listener --------------------------------------------------------------

TEST(store_shell_test, events_reach_the_listener_set_last_and_none_after_close) {
  boost::asio::io_context io;
  store_shell shell(io);
  std::vector<std::string> seen;
  shell.emit(store_events::released{});  // nobody listens yet
  EXPECT_FALSE(shell.listening());
  EXPECT_TRUE(
      shell.set_listener([&](const store_event& e) { seen.push_back("a " + describe(e)); }));
  EXPECT_TRUE(
      shell.set_listener([&](const store_event& e) { seen.push_back("b " + describe(e)); }));
  EXPECT_TRUE(shell.listening());
  shell.emit(store_events::acquired{"node-a", 7});
  shell.close();
  EXPECT_FALSE(shell.listening());
  shell.emit(store_events::released{});
  EXPECT_FALSE(shell.set_listener([&](const store_event&) { seen.push_back("late"); }));
  shell.emit(store_events::released{});
  EXPECT_EQ(seen, std::vector<std::string>{"b acquired node-a 7"});
}

// Counts, in statics, whether a listener's captured state was destroyed while
// that listener ran: what happens when the shell calls the listener itself
// rather than a copy, and the listener replaces itself.
struct capture_probe {
  static inline bool in_call = false;
  static inline int destroyed_during_call = 0;
  ~capture_probe() {
    if (in_call) ++destroyed_during_call;
  }
};

TEST(store_shell_test, a_listener_may_replace_itself_while_it_runs) {
  boost::asio::io_context io;
  store_shell shell(io);
  std::vector<std::string> seen;
  capture_probe::destroyed_during_call = 0;
  auto probe = std::make_shared<capture_probe>();
  shell.set_listener([&shell, &seen, probe](const store_event& e) {
    capture_probe::in_call = true;
    seen.push_back("first " + describe(e));
    shell.set_listener(
        [&seen](const store_event& next) { seen.push_back("second " + describe(next)); });
    capture_probe::in_call = false;
  });
  probe.reset();  // the listener holds the only one now

  shell.emit(store_events::released{});
  EXPECT_EQ(capture_probe::destroyed_during_call, 0)
      << "the listener's captures were destroyed while it ran";
  shell.emit(store_events::released{});
  EXPECT_EQ(seen, (std::vector<std::string>{"first released", "second released"}));
}

TEST(store_shell_test, a_listener_may_clear_itself_or_close_the_store_while_it_runs) {
  boost::asio::io_context io;
  store_shell shell(io);
  int heard = 0;
  shell.set_listener([&](const store_event&) {
    ++heard;
    shell.set_listener(nullptr);
  });
  shell.emit(store_events::released{});
  shell.emit(store_events::released{});
  EXPECT_EQ(heard, 1);

  shell.set_listener([&](const store_event&) {
    ++heard;
    shell.close();
  });
  shell.emit(store_events::released{});
  shell.emit(store_events::released{});
  EXPECT_EQ(heard, 2);
}

// --- wake-ups ------------------------------------------------------------------

TEST(store_shell_test, wakeups_are_said_once_per_change) {
  // Each step: trusted, and the reason (nullptr = a change of trust alone,
  // set_wakeups_trust); then what the listener heard ("" = nothing).
  struct step {
    bool trusted;
    const char* why;
    std::string heard;
  };
  const std::vector<step> steps{
      {false, "", ""},                              // untrusted at first: nothing new
      {false, nullptr, ""},                         // nor as a change of trust alone
      {true, "", "trusted"},                        // the watch is up
      {true, "", ""},                               // still up
      {true, nullptr, ""},                          // nor as trust alone
      {false, nullptr, "untrusted"},                // down, no reason known
      {false, "refused", "untrusted refused"},      // its failure, told once
      {false, "refused", ""},                       // the same reason again
      {false, nullptr, ""},                         // the watch's state moved on: no news
      {false, "timed out", "untrusted timed out"},  // another reason
      {true, nullptr, "trusted"},                   // up again
      {false, "refused", "untrusted refused"},      // the old reason, news again
  };
  boost::asio::io_context io;
  store_shell shell(io);
  std::vector<std::string> heard;
  shell.set_listener([&](const store_event& e) { heard.push_back(describe(e)); });
  for (std::size_t i = 0; i < steps.size(); ++i) {
    heard.clear();
    const auto& s = steps[i];
    if (s.why == nullptr) {
      shell.set_wakeups_trust(s.trusted);
    } else {
      shell.set_wakeups(s.trusted, s.why);
    }
    const auto want = s.heard.empty() ? std::vector<std::string>{} : std::vector{s.heard};
    EXPECT_EQ(heard, want) << "step " << i;
    EXPECT_EQ(shell.wakeups_trusted(), s.trusted) << "step " << i;
  }
}

// --- status --------------------------------------------------------------------

TEST(store_shell_test, note_failure_fills_the_status_fields_and_hands_the_error_back) {
  boost::asio::io_context io;
  store_shell shell(io);
  store_status s;
  shell.fill_status(s);
  EXPECT_EQ(s.last_error, "");
  EXPECT_EQ(s.last_error_kind, "");
  EXPECT_FALSE(s.last_error_at);

  const auto before = mono_clock::now();
  const auto e = shell.note_failure(
      {std::make_error_code(std::errc::connection_refused), "connect 127.0.0.1:1: refused"});
  const auto after = mono_clock::now();
  EXPECT_EQ(e.detail, "connect 127.0.0.1:1: refused");
  EXPECT_EQ(e.code, std::make_error_code(std::errc::connection_refused));
  shell.fill_status(s);
  EXPECT_EQ(s.last_error, "connect 127.0.0.1:1: refused");
  EXPECT_EQ(s.last_error_kind, "other");
  ASSERT_TRUE(s.last_error_at);
  EXPECT_LE(before, *s.last_error_at);
  EXPECT_LE(*s.last_error_at, after);

  // Without a detail, the code's own message; the kind is the store's word.
  shell.note_failure({std::make_error_code(std::errc::timed_out), {}});
  shell.fill_status(s);
  EXPECT_EQ(s.last_error, std::make_error_code(std::errc::timed_out).message());
  EXPECT_EQ(s.last_error_kind, "other");
  shell.note_failure({std::error_code(static_cast<int>(store_errc::auth), baton::store_category()),
                      "AUTH refused"});
  shell.fill_status(s);
  EXPECT_EQ(s.last_error, "AUTH refused");
}

TEST(store_shell_test, a_reset_is_kept_for_status_and_told_only_when_reported) {
  boost::asio::io_context io;
  store_shell shell(io);
  std::vector<std::string> heard;
  shell.set_listener([&](const store_event& e) { heard.push_back(describe(e)); });
  shell.report_reset(store_events::reset{"run_id changed", false, {}});
  store_status s;
  shell.fill_status(s);
  EXPECT_EQ(s.last_reset, "run_id changed");
  shell.note_reset("the same failover, seen again");
  shell.fill_status(s);
  EXPECT_EQ(s.last_reset, "the same failover, seen again");
  EXPECT_EQ(heard, std::vector<std::string>{"reset run_id changed"});
}

// --- the nonce -----------------------------------------------------------------

TEST(store_shell_test, nonces_are_128_bits_of_hex_new_per_store_fixed_per_process) {
  const auto a = baton::store_detail::new_nonce();
  const auto b = baton::store_detail::new_nonce();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(a, b);
  EXPECT_EQ(baton::store_detail::process_nonce(), baton::store_detail::process_nonce());
  EXPECT_EQ(baton::store_detail::process_nonce().size(), 32u);
  EXPECT_EQ(baton::store_detail::random_hex(2).size(), 16u);
}

}  // namespace
