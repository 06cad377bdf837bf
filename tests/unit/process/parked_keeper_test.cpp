// A standby's parked keeper (child.park): prepare() starts a keeper whose
// command is forked but waits before its exec; start() then only writes the
// start line. The command must never run before start(), must get the term's
// token and reason, and a parked keeper that goes away (discarded, killed,
// told to stop, or its controller destroyed) leaves nothing running.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include "process/proc_children.hpp"
#include "process_test_util.hpp"

namespace baton {
namespace {

using namespace process_test;

// The small keeper program, as installed next to baton.
app_controller_options small_keeper() {
  app_controller_options options;
  options.keeper_program = BATON_KEEPER_BINARY;
  return options;
}

// A command that records that it ran, with the term it was given, then waits.
const char* recording_command =
    "echo \"$BATON_TOKEN $BATON_REASON $BATON_EVENT\" > \"$DIR/ran.tmp\"; "
    "mv \"$DIR/ran.tmp\" \"$DIR/ran\"\n"
    "exec sleep 100";

// Waits (bounded) until the parked keeper has forked its waiting command.
pid_t waiting_command_of(pid_t keeper) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    auto children = children_of(keeper);
    if (children.size() == 1) return children.front();
    std::this_thread::sleep_for(5ms);
  }
  return 0;
}

struct parked_fixture {
  temp_dir dir;
  boost::asio::io_context io;
  recorder rec;
  app_controller app;
  explicit parked_fixture(app_controller_options options = small_keeper(), bool park = true)
      : app(io, hooks_config{}, child(dir.script("cmd.sh", recording_command), park),
            rec.listener(), std::move(options)) {}

  static child_config child(std::string script, bool park) {
    auto c = make_child({std::move(script)});
    c.park = park;
    return c;
  }
};

TEST(parked_keeper, the_command_waits_until_start_then_gets_the_terms_token_and_reason) {
  for (auto options : {small_keeper(), keeper_options()}) {
    SCOPED_TRACE(options.keeper_program);
    parked_fixture f(options);
    f.app.prepare(make_context());
    const pid_t parked = f.app.parked_pid();
    ASSERT_GT(parked, 0);
    const pid_t waiting = waiting_command_of(parked);
    ASSERT_GT(waiting, 0) << "the parked keeper forks its command at once";
    run_for(f.io, 200ms);
    EXPECT_TRUE(temp_dir::read(f.dir.file("ran")).empty()) << "nothing of the command ran";
    EXPECT_EQ(f.app.child_pid(), 0);

    auto term = make_context("acquired");
    term.token = 9001;
    f.app.start(term);
    ASSERT_TRUE(run_until(f.io, [&] { return f.rec.started == 1; }));
    EXPECT_EQ(f.app.child_pid(), parked) << "the parked keeper became the child's keeper";
    EXPECT_EQ(f.app.parked_pid(), 0);
    std::string ran;
    ASSERT_TRUE(run_until(f.io, [&] { return !(ran = temp_dir::read(f.dir.file("ran"))).empty(); }));
    EXPECT_EQ(ran, "9001 acquired start\n");
    EXPECT_EQ(f.app.command_pid(), waiting) << "the waiting process is the one that exec'd";

    f.app.stop(make_context("shutdown"));
    ASSERT_TRUE(run_until(f.io, [&] { return f.rec.stopped == 1; }));
    EXPECT_TRUE(wait_dead(waiting));
  }
}

TEST(parked_keeper, a_second_prepare_keeps_the_same_keeper_and_park_false_parks_nothing) {
  parked_fixture f;
  f.app.prepare(make_context());
  const pid_t parked = f.app.parked_pid();
  ASSERT_GT(parked, 0);
  f.app.prepare(make_context());
  EXPECT_EQ(f.app.parked_pid(), parked);

  parked_fixture off(small_keeper(), false);
  off.app.prepare(make_context());
  EXPECT_EQ(off.app.parked_pid(), 0);
  off.app.start(make_context());
  ASSERT_TRUE(run_until(off.io, [&] { return off.rec.started == 1; }));
  EXPECT_TRUE(run_until(off.io, [&] { return !temp_dir::read(off.dir.file("ran")).empty(); }));
}

TEST(parked_keeper, destroying_the_controller_ends_the_parked_keeper_and_runs_nothing) {
  pid_t parked = 0;
  pid_t waiting = 0;
  std::string ran_file;
  {
    parked_fixture f;
    ran_file = f.dir.file("ran");
    f.app.prepare(make_context());
    parked = f.app.parked_pid();
    ASSERT_GT(parked, 0);
    waiting = waiting_command_of(parked);
    ASSERT_GT(waiting, 0);
  }
  EXPECT_FALSE(alive(parked));
  EXPECT_TRUE(wait_dead(waiting));
}

TEST(parked_keeper, a_term_for_another_ttl_discards_it_and_starts_a_fresh_keeper) {
  parked_fixture f;
  f.app.prepare(make_context());
  const pid_t parked = f.app.parked_pid();
  ASSERT_GT(parked, 0);
  const pid_t waiting = waiting_command_of(parked);
  ASSERT_GT(waiting, 0);
  auto term = make_context();
  term.lease_ttl = milliseconds(20000);  // a reload changed it since
  f.app.start(term);
  ASSERT_TRUE(run_until(f.io, [&] { return f.rec.started == 1; }));
  EXPECT_NE(f.app.child_pid(), parked);
  EXPECT_TRUE(run_until(f.io, [&] { return !temp_dir::read(f.dir.file("ran")).empty(); }));
  EXPECT_TRUE(wait_dead(waiting)) << "the discarded keeper's command never runs";
  EXPECT_TRUE(run_until(f.io, [&] { return !alive(parked); }));
}

TEST(parked_keeper, a_parked_keeper_that_dies_is_replaced_at_the_start) {
  parked_fixture f;
  f.app.prepare(make_context());
  const pid_t parked = f.app.parked_pid();
  ASSERT_GT(parked, 0);
  ASSERT_GT(waiting_command_of(parked), 0);
  ASSERT_EQ(::killpg(parked, SIGKILL), 0);
  ASSERT_TRUE(run_until(f.io, [&] { return f.app.parked_pid() == 0; }));
  // Not re-parked at once (it failed), but the start works all the same.
  f.app.prepare(make_context());
  EXPECT_EQ(f.app.parked_pid(), 0);
  f.app.start(make_context());
  ASSERT_TRUE(run_until(f.io, [&] { return f.rec.started == 1; }));
  EXPECT_TRUE(run_until(f.io, [&] { return !temp_dir::read(f.dir.file("ran")).empty(); }));
}

TEST(parked_keeper, a_stop_signal_to_the_parked_group_ends_it_without_running_the_command) {
  parked_fixture f;
  f.app.prepare(make_context());
  const pid_t parked = f.app.parked_pid();
  ASSERT_GT(parked, 0);
  const pid_t waiting = waiting_command_of(parked);
  ASSERT_GT(waiting, 0);
  ASSERT_EQ(::killpg(parked, SIGTERM), 0);
  ASSERT_TRUE(run_until(f.io, [&] { return f.app.parked_pid() == 0; }));
  EXPECT_TRUE(wait_dead(waiting));
  run_for(f.io, 100ms);
  EXPECT_TRUE(temp_dir::read(f.dir.file("ran")).empty());
}

}  // namespace
}  // namespace baton
