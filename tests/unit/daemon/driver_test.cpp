// The driver over a strict scripted store, with no server: the paths that only
// integration tests reached before (late replies, a reset during an acquire,
// announcements while renewing, shutdown in each state). No app command and
// no hooks, no socket, no HTTP, no signal handlers: only the driver's own
// turning of actions into store calls and of answers into machine events.
//
// The lease is short (ttl 600 ms) so that timer-driven paths complete in well
// under a second; every wait is bounded and asserts on events, not on time.
#include "daemon/driver.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "support/fakes/scripted_lease_store.hpp"
#include "baton/config_load.hpp"
#include "baton/redis_settings.hpp"

namespace baton {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::scripted_lease_store;
namespace answers = testing::answers;

config test_config() {
  config c = default_config();
  c.election = "jobs";
  c.node_id = "node-a";
  c.lease.ttl = 600ms;
  c.lease.renew_interval = 200ms;
  c.lease.renew_deadline = 400ms;
  c.lease.retry_interval = 100ms;
  c.lease.resign_cooldown = 600ms;
  c.child.stop_timeout = 1s;
  redis_settings_of(c).command_timeout = 100ms;
  return c;
}

// Runs `io` until `done()` holds or `limit` passes; false on time-out.
bool run_until(asio::io_context& io, const std::function<bool()>& done,
               milliseconds limit = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (io.stopped()) io.restart();
    io.run_one_for(std::min<std::chrono::steady_clock::duration>(deadline - now, 50ms));
  }
  return true;
}

class driver_test : public ::testing::Test {
 protected:
  driver_test() {
    store_status s;
    s.kind = "scripted";
    s.label = "Scripted";
    s.endpoint = "scripted";
    s.link = link_state::connected;
    s.wakeups = wakeup_state::subscribed;
    store.set_status(s);
  }

  // Starts the driver; the first acquire is expected. The store tells what
  // its status says about wake-ups, as a real one does once it watches.
  void start() {
    store.expect_acquire();
    ASSERT_TRUE(election.start(false));
    store.emit(store_events::wakeups{store.status().wakeups == wakeup_state::subscribed, {}});
    ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }));
  }

  // Starts and wins the first term with `token`: the app (none) starts and
  // the node leads.
  void lead(std::uint64_t token = 7) {
    start();
    store.answer_acquire(answers::acquired(token));
    ASSERT_TRUE(run_until(io, [&] { return election.status().value("is_leader", false); }));
  }

  state current() const { return election.machine().current(); }

  asio::io_context io;
  scripted_lease_store store{io, {"jobs", "node-a", 600ms}};
  driver election{io, test_config(), store};
};

TEST_F(driver_test, start_watches_the_store_and_acquires_once) {
  start();
  EXPECT_EQ(store.watch_calls(), 1);
  EXPECT_EQ(store.acquire_calls(), 1);
  EXPECT_EQ(current(), state::acquiring);
  store.verify_expectations();
}

TEST_F(driver_test, a_won_term_renews_on_time_and_keeps_leading) {
  lead(7);
  EXPECT_EQ(election.status()["token"], 7);
  store.expect_renew();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_renews() == 1; }));
  EXPECT_EQ(current(), state::renewing);
  store.answer_renew(renew_answer::renewed);
  ASSERT_TRUE(run_until(io, [&] { return current() == state::working; }));
  EXPECT_TRUE(election.status()["is_leader"]);
  EXPECT_EQ(store.acquire_calls(), 1);
}

TEST_F(driver_test, a_busy_standby_names_the_holder_and_retries_after_its_expiry) {
  start();
  store.answer_acquire(answers::held("node-b", 4, 150ms));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  EXPECT_EQ(election.status()["leader"], "node-b");
  EXPECT_EQ(election.status()["token"], 4);
  EXPECT_FALSE(election.status()["is_leader"]);
  // The next attempt comes just after the holder's 150 ms (wakeups trusted).
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 2s));
}

TEST_F(driver_test, an_acquire_answer_after_the_renew_deadline_is_given_back) {
  start();
  // Hold the answer past renew_deadline (400 ms after the acquire was sent).
  run_until(io, [] { return false; }, 450ms);
  store.expect_release();
  store.answer_acquire(answers::acquired(9));
  ASSERT_TRUE(run_until(io, [&] { return store.pending_releases() == 1; }));
  EXPECT_EQ(current(), state::releasing);
  EXPECT_FALSE(election.status()["is_leader"]);
  store.answer_release(release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
}

TEST_F(driver_test, a_reset_during_an_acquire_holds_the_node_back_without_a_leader) {
  start();
  store.emit(store_events::reset{"token counter missing", false, {}});
  store.answer_acquire(answers::held_back(300ms));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  auto s = election.status();
  EXPECT_TRUE(s["leader"].is_null()) << s.dump();
  EXPECT_FALSE(s["is_leader"]);
  // It tries again once the hold-back is over, not before.
  const auto answered = std::chrono::steady_clock::now();
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 3s));
  EXPECT_GE(std::chrono::steady_clock::now() - answered, 290ms);
}

TEST_F(driver_test, without_trusted_wakeups_a_standby_polls_at_the_retry_interval) {
  auto s = store.status();
  s.wakeups = wakeup_state::disconnected;
  store.set_status(s);
  start();
  // A holder with 5 s left: with wake-ups it would wait 5 s; without, it
  // polls every retry_interval (100 ms, jittered).
  store.answer_acquire(answers::held("node-b", 4, 5s));
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 2s));
}

// The log lines an operator reads: captured from spdlog's default logger.
class captured_log {
 public:
  captured_log() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
  }
  ~captured_log() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }
  std::size_t count(const std::string& needle) const {
    const auto all = text();
    std::size_t n = 0;
    for (auto at = all.find(needle); at != std::string::npos; at = all.find(needle, at + 1)) ++n;
    return n;
  }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(driver_test, a_standby_says_once_per_change_who_leads) {
  captured_log log;
  start();
  store.answer_acquire(answers::held("node-b", 4, 150ms));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 2s));
  store.answer_acquire(answers::held("node-b", 4, 150ms));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  EXPECT_EQ(log.count("standing by: node-b leads with token 4"), 1U) << log.text();
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 2s));
  store.answer_acquire(answers::held("node-c", 5, 5s));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  EXPECT_EQ(log.count("standing by: node-c leads with token 5"), 1U) << log.text();
}

TEST_F(driver_test, without_an_app_the_log_speaks_of_no_app_and_no_sigkill) {
  captured_log log;
  lead(7);
  store.expect_release();
  election.shutdown("SIGTERM");
  ASSERT_TRUE(run_until(io, [&] { return store.pending_releases() == 1; }));
  const auto text = log.text();
  EXPECT_NE(text.find("leading with token 7 (no command or hooks"), std::string::npos) << text;
  EXPECT_NE(text.find("stepping down (shutdown)"), std::string::npos) << text;
  EXPECT_EQ(text.find("starting the app"), std::string::npos) << text;
  EXPECT_EQ(text.find("SIGKILL"), std::string::npos) << text;
  store.answer_release(release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
}

TEST_F(driver_test, a_reset_for_a_missing_record_names_both_causes_and_the_way_out) {
  captured_log log;
  start();
  store.emit(store_events::reset{"token counter missing", true, {}});
  store.emit(store_events::reset{"run_id changed from a to b", false, {}});
  store.answer_acquire(answers::held_back(300ms));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  const auto text = log.text();
  EXPECT_NE(text.find("Scripted has no record of election jobs (token counter missing)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("first start"), std::string::npos) << text;
  EXPECT_NE(text.find("baton init-store"), std::string::npos) << text;
  EXPECT_NE(text.find("Scripted lost its data or failed over (run_id changed from a to b): holding every"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("standing by: no leader known yet"), std::string::npos) << text;
}

// A store that knows what happened (a ZooKeeper session the ensemble
// expired) says it, and neither guesses at lost data nor promises a wait
// the candidate may not get.
TEST_F(driver_test, a_reset_that_says_what_happened_is_logged_as_it_is) {
  captured_log log;
  start();
  store.emit(store_events::reset{"the ZooKeeper session expired", false, {},
                                 "ZooKeeper expired this node's session"});
  store.answer_acquire(answers::held_back(300ms));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  const auto text = log.text();
  EXPECT_NE(text.find("ZooKeeper expired this node's session (the ZooKeeper session expired): "
                      "the store holds acquisitions back for one ttl"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("from when each candidate first sees the hold"), std::string::npos) << text;
  EXPECT_EQ(text.find("lost its data"), std::string::npos) << text;
}

// One master of a quorum that reset holds back only its own grants: the log
// must not claim that every acquisition waits.
TEST_F(driver_test, a_reset_of_one_master_names_it_and_says_the_others_decide) {
  captured_log log;
  start();
  store.emit(store_events::reset{"master redis://b:6379: run_id changed from a to b", false,
                                 "redis://b:6379"});
  store.emit(store_events::reset{"master redis://c:6379: token counter missing", true,
                                 "redis://c:6379"});
  store.answer_acquire(answers::held("node-b", 4, 5s));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  const auto text = log.text();
  EXPECT_NE(text.find("Scripted master redis://b:6379 lost its data (master redis://b:6379: run_id "
                      "changed from a to b): it refuses grants for one ttl"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the other masters decide meanwhile"), std::string::npos) << text;
  EXPECT_NE(text.find("Scripted master redis://c:6379 has no record of the election"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("holding every acquisition back"), std::string::npos) << text;
}

TEST_F(driver_test, a_release_announcement_wakes_a_standby_at_once) {
  start();
  store.answer_acquire(answers::held("node-b", 4, 5s));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  store.expect_acquire();
  store.emit(store_events::released{});
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 1s));
  EXPECT_EQ(current(), state::acquiring);
}

TEST_F(driver_test, announcements_while_renewing_change_nothing_but_the_known_leader_news) {
  lead(7);
  store.expect_renew();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_renews() == 1; }));
  store.emit(store_events::released{});
  store.emit(store_events::acquired{"node-a", 7});
  store.emit(store_events::wakeups{false, {}});
  run_until(io, [] { return false; }, 50ms);
  EXPECT_EQ(current(), state::renewing);
  EXPECT_EQ(store.acquire_calls(), 1);
  store.answer_renew(renew_answer::renewed);
  ASSERT_TRUE(run_until(io, [&] { return current() == state::working; }));
  EXPECT_TRUE(election.status()["is_leader"]);
}

TEST_F(driver_test, a_lost_renewal_stops_the_app_and_competes_again_without_a_release) {
  lead(7);
  store.expect_renew();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_renews() == 1; }));
  // The lease is no longer ours: nothing to release (the strict store fails
  // the test on a release), the app stops, the node competes again.
  store.expect_acquire();
  store.answer_renew(renew_answer::lost);
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 3s));
  EXPECT_FALSE(election.status()["is_leader"]);
  EXPECT_EQ(store.release_calls(), 0);
}

TEST_F(driver_test, failing_renewals_stop_the_app_at_the_renew_deadline) {
  lead(7);
  store.allow_any();
  // Every renewal fails; by renew_deadline the node must step down.
  ASSERT_TRUE(run_until(io, [&] {
    while (store.pending_renews() > 0) {
      store.answer_renew({make_error_code(std::errc::timed_out), "renew: timed out"},
                         renew_answer::renewed);
    }
    while (store.pending_releases() > 0) store.answer_release(release_answer::released);
    return current() == state::idle || current() == state::acquiring;
  }));
  EXPECT_GE(store.release_calls(), 1);
  EXPECT_FALSE(election.status()["is_leader"]);
}

TEST_F(driver_test, an_acquire_error_is_kept_in_the_status_and_retried) {
  auto s = store.status();
  s.last_error = "AUTH: WRONGPASS invalid username-password pair";
  s.last_error_kind = "auth";
  store.set_status(s);
  start();
  store.answer_acquire({make_error_code(std::errc::permission_denied), s.last_error},
                       acquire_answer{});
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  EXPECT_EQ(election.status()["store"]["last_error_kind"], "auth");
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 3s));
}

TEST(driver_app_check, a_command_that_vanished_stops_competing_until_it_is_back) {
  // A scratch directory holding the command; removed to make it vanish.
  char dir_template[] = "/tmp/baton-driver-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string command = dir + "/worker";
  captured_log log;
  asio::io_context io;
  scripted_lease_store store{io, {"jobs", "node-a", 600ms}};
  auto cfg = test_config();
  cfg.child.command = {command};
  driver election{io, cfg, store};
  store.expect_acquire();
  ASSERT_TRUE(election.start(false));
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }));
  // The command is missing when the term starts: the start fails, the lease
  // goes back, and the node stops competing instead of churning terms.
  store.expect_release();
  store.answer_acquire(answers::acquired(7));
  ASSERT_TRUE(run_until(io, [&] { return store.pending_releases() == 1; }));
  store.answer_release(release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return election.machine().app_blocked(); }));
  ASSERT_TRUE(run_until(io, [&] { return log.count("not competing for the lease") == 1; }, 5s))
      << log.text();
  run_until(io, [] { return false; }, 1500ms);  // several looks: still no acquire
  EXPECT_EQ(store.acquire_calls(), 1);
  EXPECT_EQ(log.count("not competing for the lease"), 1U) << "said once, not per look";
  // The command appears: the node competes again.
  {
    std::FILE* f = std::fopen(command.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("#!/bin/sh\nexec sleep 100\n", f);
    std::fclose(f);
    ASSERT_EQ(::chmod(command.c_str(), 0755), 0);
  }
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 40s));
  EXPECT_NE(log.text().find("the app can be executed again"), std::string::npos) << log.text();
  std::remove(command.c_str());
  ::rmdir(dir.c_str());
}

// --- shutdown in each state ------------------------------------------------------

TEST_F(driver_test, shutdown_while_idle_exits_without_touching_the_store) {
  start();
  store.answer_acquire(answers::held("node-b", 4, 5s));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  election.shutdown("SIGTERM");
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
  EXPECT_EQ(*election.exit_code(), 0);
  EXPECT_TRUE(store.closed());
  EXPECT_EQ(store.release_calls(), 0);
}

TEST_F(driver_test, shutdown_while_acquiring_gives_a_late_win_straight_back) {
  start();
  election.shutdown("SIGTERM");
  store.expect_release();
  store.answer_acquire(answers::acquired(8));
  ASSERT_TRUE(run_until(io, [&] { return store.pending_releases() == 1; }));
  EXPECT_FALSE(election.status()["is_leader"]);
  store.answer_release(release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
  EXPECT_EQ(*election.exit_code(), 0);
  EXPECT_TRUE(run_until(io, [&] { return store.closed(); }));
}

TEST_F(driver_test, shutdown_while_working_releases_then_exits) {
  lead(7);
  store.expect_release();
  election.shutdown("SIGTERM");
  ASSERT_TRUE(run_until(io, [&] { return store.pending_releases() == 1; }));
  EXPECT_FALSE(election.exit_code().has_value()) << "exited before the release completed";
  const auto answered = std::chrono::steady_clock::now();
  store.answer_release(release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
  EXPECT_EQ(*election.exit_code(), 0);
  // Closing the store's connections makes the server end them (for
  // PostgreSQL, processes that cost milliseconds of CPU) while a successor
  // is taking over: they stay open a moment after a release that freed the
  // lease; the finished machine ignores what the store still reports.
  EXPECT_FALSE(store.closed()) << "closed at once after the release freed the lease";
  store.emit(store_events::acquired{"node-b", 8});
  ASSERT_TRUE(run_until(io, [&] { return store.closed(); }));
  EXPECT_GE(std::chrono::steady_clock::now() - answered, 40ms);
  EXPECT_EQ(current(), state::stopped);
}

TEST_F(driver_test, shutdown_while_renewing_waits_for_the_renewal_then_releases) {
  lead(7);
  store.expect_renew();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_renews() == 1; }));
  store.allow_any();
  election.shutdown("SIGTERM");
  store.answer_renew(renew_answer::renewed);
  ASSERT_TRUE(run_until(io, [&] {
    while (store.pending_renews() > 0) store.answer_renew(renew_answer::renewed);
    return store.pending_releases() == 1;
  }));
  store.answer_release(release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
  EXPECT_EQ(*election.exit_code(), 0);
}

TEST_F(driver_test, shutdown_while_releasing_exits_when_the_release_fails) {
  lead(7);
  store.expect_release();
  election.shutdown("SIGTERM");
  ASSERT_TRUE(run_until(io, [&] { return store.pending_releases() == 1; }));
  EXPECT_EQ(current(), state::releasing);
  // A second signal while releasing changes nothing about the order.
  election.shutdown("SIGTERM");
  store.answer_release({make_error_code(std::errc::connection_reset), "release: connection lost"},
                       release_answer::released);
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
  EXPECT_EQ(*election.exit_code(), 0);
  EXPECT_TRUE(store.closed());
  EXPECT_EQ(store.release_calls(), 1);
}

// Whether a standby waits for a release announcement is the store's word in
// its wakeups event, not a look at its status at the time of the answer.
TEST_F(driver_test, a_standby_polls_once_the_store_says_announcements_do_not_reach_it) {
  start();  // the status says subscribed throughout
  store.emit(store_events::wakeups{false, "SUBSCRIBE refused"});
  // A holder with 5 s left: without wake-ups the standby polls every
  // retry_interval (100 ms, jittered).
  store.answer_acquire(answers::held("node-b", 4, 5s));
  store.expect_acquire();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 2s));
}

TEST_F(driver_test, a_standby_waits_for_the_release_once_the_store_says_announcements_reach_it) {
  auto s = store.status();
  s.wakeups = wakeup_state::disconnected;
  store.set_status(s);
  start();
  store.emit(store_events::wakeups{true, {}});
  store.answer_acquire(answers::held("node-b", 4, 5s));
  ASSERT_TRUE(run_until(io, [&] { return current() == state::idle; }));
  // It waits for the holder's expiry or a release, not retry_interval.
  run_until(io, [] { return false; }, 500ms);
  EXPECT_EQ(store.acquire_calls(), 1);
  store.expect_acquire();
  store.emit(store_events::released{});
  ASSERT_TRUE(run_until(io, [&] { return store.pending_acquires() == 1; }, 1s));
}

// The signal's line says what the machine will do: while the app is being
// stopped for another reason, a first signal only adds the exit.
TEST_F(driver_test, a_signal_while_the_app_stops_says_what_it_does) {
  captured_log log;
  lead(7);
  store.expect_renew();
  ASSERT_TRUE(run_until(io, [&] { return store.pending_renews() == 1; }));
  store.answer_renew(renew_answer::lost);
  ASSERT_TRUE(run_until(io, [&] { return current() == state::pausing; }));
  election.shutdown("SIGTERM");
  ASSERT_TRUE(run_until(io, [&] { return election.exit_code().has_value(); }));
  const auto text = log.text();
  EXPECT_NE(text.find("received SIGTERM: shutting down once the app has stopped (a second signal "
                      "kills it now)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("stopping the app now"), std::string::npos) << text;
  EXPECT_EQ(*election.exit_code(), 0);
}

}  // namespace
}  // namespace baton
