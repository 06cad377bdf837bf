// stop() and kill(): the order child-SIGTERM -> on_stop -> stopped, process
// groups, escalation, hooks never overlapping, and idempotence.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>

#include "process_test_util.hpp"

namespace baton {
namespace {

using namespace process_test;

// A child that notes its SIGTERM in the marker, then exits.
const char* polite_child =
    "trap 'echo child-term >> \"$MARK\"; exit 0' TERM\n"
    "echo child-up >> \"$MARK\"\n"
    "while :; do sleep 1 & wait $!; done";

TEST(app_controller_stop, terminates_child_then_runs_on_stop_then_reports_stopped) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  std::string marker_at_stopped;
  auto l = rec.listener();
  l.stopped = [&] {
    ++rec.stopped;
    marker_at_stopped = dir.marker();
  };
  app_controller app(io, make_hooks({}, {dir.script("stop.sh", "echo on_stop $BATON_REASON >> \"$MARK\"")}),
                     make_child({dir.script("child.sh", polite_child)}), l, keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1 && dir.marker() == "child-up\n"; }));
  pid_t pid = app.child_pid();
  app.stop(make_context("lost"));
  EXPECT_TRUE(app.active());
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(marker_at_stopped, "child-up\nchild-term\non_stop lost\n");
  EXPECT_FALSE(app.active());
  EXPECT_TRUE(wait_dead(pid));  // the keeper; see stop_right_after_start_without_hooks
  EXPECT_EQ(rec.child_exited, 0);
}

TEST(app_controller_stop, stop_twice_runs_on_stop_once) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({}, {dir.script("stop.sh", "echo on_stop >> \"$MARK\"")}),
                     make_child({"sleep", "100"}), rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  app.stop(make_context("lost"));
  app.stop(make_context("shutdown"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  run_for(io, 200ms);
  EXPECT_EQ(rec.stopped, 1);
  EXPECT_EQ(dir.marker(), "on_stop\n");
}

TEST(app_controller_stop, stop_without_start_reports_stopped_and_runs_nothing) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({}, {dir.script("stop.sh", "echo on_stop >> \"$MARK\"")}),
                     make_child({"sleep", "100"}), rec.listener(), keeper_options());
  app.stop(make_context("shutdown"));
  EXPECT_EQ(rec.stopped, 0) << "posted, not inline";
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(dir.marker(), "");
  app.kill();  // nothing runs: a no-op
  run_for(io, 50ms);
  EXPECT_EQ(rec.events, (std::vector<std::string>{"stopped"}));
}

TEST(app_controller_stop, child_ignoring_sigterm_is_stopped_by_kill_and_on_stop_still_runs) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({}, {dir.script("stop.sh", "echo on_stop >> \"$MARK\"")}),
                     make_child({dir.script("child.sh",
                                            "trap '' TERM; echo child-up >> \"$MARK\"; "
                                            "exec sleep 100")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1 && dir.marker() == "child-up\n"; }));
  pid_t pid = app.child_pid();
  app.stop(make_context("lost"));
  // Nothing to await here: the point is that nothing happens.
  run_for(io, 300ms);
  EXPECT_EQ(rec.stopped, 0);
  EXPECT_TRUE(alive(pid));
  app.kill();
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(wait_dead(pid));  // the keeper; see stop_right_after_start_without_hooks
  EXPECT_EQ(dir.marker(), "child-up\non_stop\n");
  EXPECT_TRUE(log.has(spdlog::level::info, "killed by SIGKILL"));
}

TEST(app_controller_stop, grandchildren_in_the_process_group_die_with_the_child) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{},
                     make_child({dir.script("child.sh",
                                            "sleep 100 & echo $! > \"$DIR/grandchild.tmp\"; "
                                            "mv \"$DIR/grandchild.tmp\" \"$DIR/grandchild\"; wait")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return !temp_dir::read(dir.file("grandchild")).empty(); }));
  pid_t grandchild = std::stoi(temp_dir::read(dir.file("grandchild")));
  ASSERT_TRUE(alive(grandchild));
  EXPECT_EQ(::getpgid(grandchild), app.child_pid());
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(wait_dead(grandchild));
}

TEST(app_controller_stop, kill_reaches_grandchildren_too) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{},
                     make_child({dir.script("child.sh",
                                            "trap '' TERM; sleep 100 & echo $! > \"$DIR/gc.tmp\"; "
                                            "mv \"$DIR/gc.tmp\" \"$DIR/gc\"; wait")}),
                     rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return !temp_dir::read(dir.file("gc")).empty(); }));
  pid_t grandchild = std::stoi(temp_dir::read(dir.file("gc")));
  app.stop(make_context("lost"));
  app.kill();
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(wait_dead(grandchild));
}

TEST(app_controller_stop, stop_during_slow_on_start_waits_for_it_before_on_stop) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(
      io,
      make_hooks({dir.script("start.sh",
                             "trap 'sleep 0.3; echo start-end >> \"$MARK\"; exit 1' TERM\n"
                             "sleep 100 &\n"
                             "echo start-begin >> \"$MARK\"\n"
                             "wait $!")},
                 {dir.script("stop.sh", "echo stop-begin >> \"$MARK\"")}),
      make_child({dir.script("child.sh", "echo child >> \"$MARK\"; exec sleep 100")}),
      rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return dir.marker() == "start-begin\n"; }));
  EXPECT_NE(app.hook_pid(), 0);
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(dir.marker(), "start-begin\nstart-end\nstop-begin\n");
  // The interrupted start reports nothing of its own; the term ends with stopped.
  EXPECT_EQ(rec.started, 0);
  EXPECT_EQ(rec.start_failed, 0);
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"hook:on_start:failed", "hook:on_stop:ok", "stopped"}));
}

TEST(app_controller_stop, a_timed_out_hook_leaves_nothing_in_its_process_group) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  // The hook dies of SIGTERM at once; its background child ignores SIGTERM.
  app_controller app(io,
                     make_hooks({dir.script("start.sh",
                                            "(trap '' TERM; exec sleep 100) &\n"
                                            "echo $! > \"$DIR/straggler.tmp\"\n"
                                            "mv \"$DIR/straggler.tmp\" \"$DIR/straggler\"\n"
                                            "sleep 100")},
                                {}, milliseconds(300)),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.start_failed == 1; }));
  EXPECT_EQ(rec.failure, "on_start: timed out after 300ms");
  pid_t straggler = std::stoi(temp_dir::read(dir.file("straggler")));
  EXPECT_TRUE(wait_dead(straggler));
}

TEST(app_controller_stop, stop_right_after_start_without_hooks_stops_the_child) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, hooks_config{}, make_child({"sleep", "100"}), rec.listener(), keeper_options());
  app.start(make_context());
  pid_t pid = app.child_pid();
  ASSERT_GT(pid, 0);
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_EQ(rec.started, 0) << "a start result is not reported once stop() was called";
  // `pid` is the keeper: it reported the command reaped, and its group was
  // SIGKILLed before `stopped`; the keeper itself may take a moment to die.
  EXPECT_TRUE(wait_dead(pid));
}

TEST(app_controller_stop, hung_on_stop_times_out_and_stopped_is_still_reported) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io, make_hooks({}, {dir.script("stop.sh", "sleep 100")}, milliseconds(300)),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  EXPECT_TRUE(log.has(spdlog::level::err, "on_stop: timed out after 300ms; sending SIGTERM"));
  ASSERT_EQ(rec.hooks.size(), 1u);
  EXPECT_FALSE(std::get<2>(rec.hooks[0]));
}

TEST(app_controller_stop, hook_ignoring_sigterm_is_killed_after_the_grace) {
  temp_dir dir;
  log_capture log;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({}, {dir.script("stop.sh", "trap '' TERM; echo $$ > \"$DIR/pid.tmp\"; "
                                                           "mv \"$DIR/pid.tmp\" \"$DIR/pid\"; sleep 100")},
                                milliseconds(300)),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  auto begin = std::chrono::steady_clock::now();
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }));
  auto took = std::chrono::steady_clock::now() - begin;
  // timeout (300ms) + grace (min(2s, timeout) = 300ms)
  EXPECT_GE(took, 600ms);
  EXPECT_TRUE(log.has(spdlog::level::err, "on_stop: timed out after 300ms; sending SIGTERM"));
  EXPECT_TRUE(log.has(spdlog::level::err, "on_stop: still running 300ms after SIGTERM; sending SIGKILL"));
  EXPECT_TRUE(log.has(spdlog::level::err, "on_stop: timed out after 300ms"));
  pid_t hook = std::stoi(temp_dir::read(dir.file("pid")));
  EXPECT_FALSE(alive(hook));
}

TEST(app_controller_stop, kill_during_on_stop_ends_it) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app(io,
                     make_hooks({}, {dir.script("stop.sh", "trap '' TERM; echo on_stop >> \"$MARK\"; "
                                                           "sleep 100")}),
                     child_config{}, rec.listener(), keeper_options());
  app.start(make_context());
  ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
  app.stop(make_context("lost"));
  ASSERT_TRUE(run_until(io, [&] { return dir.marker() == "on_stop\n"; }));
  EXPECT_NE(app.hook_pid(), 0);
  app.kill();
  ASSERT_TRUE(run_until(io, [&] { return rec.stopped == 1; }, 5s));
  EXPECT_EQ(app.hook_pid(), 0);
}

TEST(app_controller_stop, destructor_kills_and_reaps_the_child) {
  boost::asio::io_context io;
  recorder rec;
  pid_t pid = 0;
  {
    app_controller app(io, hooks_config{},
                       make_child({"/bin/sh", "-c", "trap '' TERM; exec sleep 100"}),
                       rec.listener(), keeper_options());
    app.start(make_context());
    ASSERT_TRUE(run_until(io, [&] { return rec.started == 1; }));
    pid = app.child_pid();
    ASSERT_GT(pid, 0);
  }
  // Reaped synchronously: the pid no longer exists at all.
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  run_for(io, 50ms);
  EXPECT_EQ(rec.events, (std::vector<std::string>{"started"}));
}

TEST(app_controller_stop, destructor_kills_and_reaps_a_running_hook) {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  pid_t pid = 0;
  {
    app_controller app(io,
                       make_hooks({dir.script("start.sh", "echo up >> \"$MARK\"; sleep 100")}, {}),
                       child_config{}, rec.listener(), keeper_options());
    app.start(make_context());
    ASSERT_TRUE(run_until(io, [&] { return dir.marker() == "up\n"; }));
    pid = app.hook_pid();
    ASSERT_GT(pid, 0);
  }
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  run_for(io, 50ms);
  EXPECT_TRUE(rec.events.empty());
}

TEST(app_controller_stop, no_callback_after_destruction) {
  boost::asio::io_context io;
  recorder rec;
  {
    app_controller app(io, hooks_config{}, child_config{}, rec.listener(), keeper_options());
    app.start(make_context());
  }
  run_for(io, 50ms);
  EXPECT_TRUE(rec.events.empty());
}

}  // namespace
}  // namespace baton
