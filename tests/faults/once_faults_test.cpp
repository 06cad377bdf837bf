// `baton once` on a real Redis: a job that cron or a systemd timer starts on
// every host at the same moment runs on one of them. Each test starts real
// `baton once` daemons (one per "host" and tick) supervising a test_worker
// that logs its work to a shared event log, the ground truth of who ran the
// job and when: two timers firing together run it once (the other daemon
// exits 75 naming the holder and its token); the exit status is the job's;
// a holder's crash mid-job lets the next tick run it once the ttl has
// passed; a SIGTERM mid-job stops the job before the lease goes to a
// waiting tick; --wait takes the lease when the holder releases within it;
// a store that cannot be reached gives 69.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fault_cluster.hpp"
#include "scenario.hpp"
#include "support/baton_process.hpp"
#include "support/event_log.hpp"
#include "support/free_port.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds once_ttl{2000};
// Long beside any job here: a daemon that has not exited by then hangs.
constexpr std::chrono::milliseconds exit_bound{20s};

// One election on its own redis-server, and the `baton once` daemons of its
// ticks, each with its own log; what it starts goes with it.
class once_election {
 public:
  explicit once_election(std::string name) : name_(std::move(name)) {
    // A fresh Redis has no fencing counter, which baton takes for lost data
    // and answers with a ttl's hold-back: an operator's init-store, in short.
    redis_.command({"SET", "baton:{" + name_ + "}:token", "1", "NX"});
  }
  ~once_election() {
    ticks_.clear();  // the daemons first, then whatever job they left
    kill_leftover_workers(log());
  }

  /// `baton once` as node `node` with `flags`, running a test_worker named
  /// after the node with `worker_args`.
  baton_process& tick(const std::string& node, std::vector<std::string> flags,
                      std::vector<std::string> worker_args = {}) {
    std::vector<std::string> args{"once", "--election", name_, "--node-id", node, "--ttl",
                                  std::to_string(once_ttl.count()) + "ms", "--redis-url",
                                  redis_.url(), "--stop-timeout", "3s", "--log-level", "debug"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", test_worker_binary().string(), "--log", events().string(),
                             "--name", node});
    args.insert(args.end(), worker_args.begin(), worker_args.end());
    const auto log = dir_ / (node + "-" + std::to_string(ticks_.size()) + ".log");
    ticks_.push_back(std::make_unique<baton_process>(args, env_list{}, log));
    return *ticks_.back();
  }

  std::filesystem::path events() const { return dir_ / "events.log"; }
  event_log log() const { return event_log::read(events()); }
  redis_server& redis() { return redis_; }
  const std::string& name() const { return name_; }

  /// Every daemon's log, for failure messages.
  std::string logs() const {
    std::string all;
    for (const auto& t : ticks_) all += "--- " + t->log_path().string() + "\n" + t->log_text();
    return all;
  }

 private:
  std::string name_;
  redis_server redis_;
  temp_dir dir_{"bo-"};
  std::vector<std::unique_ptr<baton_process>> ticks_;
};

// The exit code, or a failure naming what hung.
int exit_of(baton_process& p, const once_election& e) {
  const auto code = p.wait_exit(exit_bound);
  EXPECT_TRUE(code) << p.log_path() << " did not exit\n" << e.logs();
  return code.value_or(-1);
}

// The one worker of node `name` in the log, if it started once exactly.
std::optional<interval> only_worker_of(const event_log& log, const std::string& name) {
  std::optional<interval> found;
  for (const auto& i : log.intervals()) {
    if (i.name != name) continue;
    if (found) return std::nullopt;
    found = i;
  }
  return found;
}

void expect_no_overlap(const once_election& e) {
  const auto log = e.log();
  EXPECT_TRUE(log.overlaps().empty()) << "TWO JOBS RAN AT ONCE:\n"
                                      << to_string(log.overlaps()) << e.logs();
  EXPECT_TRUE(log.bad_lines().empty());
}

TEST(once_faults, two_timers_firing_together_run_the_job_once) {
  for (int round = 0; round < rounds; ++round) {
    once_election e(round_name(round));
    // Both "hosts" fire at the same moment; the job exits 3 after a while.
    auto& a = e.tick("host-a", {}, {"--exit-after-ms", "800", "--exit-code", "3"});
    auto& b = e.tick("host-b", {}, {"--exit-after-ms", "800", "--exit-code", "3"});
    const int code_a = exit_of(a, e);
    const int code_b = exit_of(b, e);
    const auto log = e.log();
    ASSERT_EQ(log.start_count(), 1u) << "the job ran " << log.start_count() << " times\n"
                                     << e.logs();
    const auto& ran = log.intervals().front();
    const bool a_ran = ran.name == "host-a";
    EXPECT_EQ(a_ran ? code_a : code_b, 3) << "the job's own status\n" << e.logs();
    EXPECT_EQ(a_ran ? code_b : code_a, 75) << "the other is held\n" << e.logs();
    const auto& held = a_ran ? b : a;
    const std::string line =
        "once: not running the command: the lease is held by " + ran.name + " (token " +
        ran.token + "); exit 75";
    EXPECT_NE(held.log_text().find(line), std::string::npos)
        << "wanted: " << line << "\n" << e.logs();
    // The job ran to its end and its lease was given back.
    EXPECT_TRUE(ran.ended);
    EXPECT_EQ(e.redis().command({"EXISTS", "baton:{" + e.name() + "}:lease"}),
              std::vector<std::string>{"0"});
  }
}

TEST(once_faults, a_holder_crash_mid_job_lets_the_next_tick_run_it_after_the_ttl) {
  once_election e(round_name(0));
  auto& first = e.tick("host-a", {});
  event_log log(e.events());
  ASSERT_TRUE(wait_for(
      log, [](const event_log& x) { return x.start_count() == 1 && x.intervals()[0].ticks > 0; },
      10s))
      << e.logs();
  // The host dies: its daemon is SIGKILLed (the keeper stops the job, at
  // the latest at the lease's end).
  const auto kept_until = [&] {
    const auto pttl = std::stoll(e.redis().command({"PTTL", "baton:{" + e.name() + "}:lease"}).at(0));
    return mono_now_ns() + pttl * 1'000'000;
  }();
  ASSERT_TRUE(first.signal_group(SIGKILL));
  ASSERT_EQ(first.wait_exit(5s), 128 + SIGKILL);
  // A tick right away: the dead host's lease is still there.
  auto& early = e.tick("host-b", {});
  EXPECT_EQ(exit_of(early, e), 75) << e.logs();
  EXPECT_NE(early.log_text().find("the lease is held by host-a"), std::string::npos) << e.logs();
  // The next tick, willing to wait up to two ttls, runs the job once the
  // lease has expired.
  auto& next = e.tick("host-c", {"--wait", "5s"}, {"--exit-after-ms", "300", "--exit-code", "0"});
  EXPECT_EQ(exit_of(next, e), 0) << e.logs();
  const auto done = e.log();
  const auto crashed = only_worker_of(done, "host-a");
  const auto took_over = only_worker_of(done, "host-c");
  ASSERT_TRUE(crashed && took_over) << e.logs();
  EXPECT_FALSE(only_worker_of(done, "host-b")) << "a held tick never runs the job";
  EXPECT_GE(took_over->start_ns, kept_until) << "started before the crashed lease could expire";
  EXPECT_GT(took_over->start_ns, crashed->end_ns);
  EXPECT_TRUE(took_over->ended);
  expect_no_overlap(e);
}

TEST(once_faults, sigterm_mid_job_stops_it_before_a_waiting_tick_gets_the_lease) {
  once_election e(round_name(0));
  auto& holder = e.tick("host-a", {});
  event_log log(e.events());
  ASSERT_TRUE(wait_for(log, [](const event_log& x) { return x.start_count() == 1; }, 10s))
      << e.logs();
  // Another host's tick waits for the lease meanwhile.
  auto& waiting = e.tick("host-b", {"--wait", "15s"}, {"--exit-after-ms", "200", "--exit-code", "5"});
  ASSERT_TRUE(waiting.wait_for_log("standing by: host-a leads", 10s)) << e.logs();
  ASSERT_TRUE(holder.signal(SIGTERM));
  EXPECT_EQ(exit_of(holder, e), 143) << e.logs();
  EXPECT_EQ(exit_of(waiting, e), 5) << e.logs();
  const auto done = e.log();
  const auto stopped = only_worker_of(done, "host-a");
  const auto next = only_worker_of(done, "host-b");
  ASSERT_TRUE(stopped && next) << e.logs();
  EXPECT_EQ(stopped->terms, 1u) << "the job was told to stop";
  EXPECT_TRUE(stopped->ended) << "it stopped by itself, not by a SIGKILL";
  EXPECT_GT(next->start_ns, stopped->end_ns) << "the waiting tick started before the stop";
  // The release woke the waiting tick: well before the lease's expiry.
  EXPECT_LT(ms_between(stopped->end_ns, next->start_ns), once_ttl.count() / 2.0) << e.logs();
  EXPECT_NE(holder.log_text().find("once: interrupted by a signal"), std::string::npos);
  expect_no_overlap(e);
}

TEST(once_faults, wait_takes_the_lease_when_the_holder_releases_within_it) {
  once_election e(round_name(0));
  auto& holder = e.tick("host-a", {}, {"--exit-after-ms", "1000", "--exit-code", "0"});
  event_log log(e.events());
  ASSERT_TRUE(wait_for(log, [](const event_log& x) { return x.start_count() == 1; }, 10s))
      << e.logs();
  auto& waiting = e.tick("host-b", {"--wait", "10s"}, {"--exit-after-ms", "100", "--exit-code", "0"});
  EXPECT_EQ(exit_of(holder, e), 0) << e.logs();
  EXPECT_EQ(exit_of(waiting, e), 0) << e.logs();
  const auto done = e.log();
  const auto first = only_worker_of(done, "host-a");
  const auto second = only_worker_of(done, "host-b");
  ASSERT_TRUE(first && second) << e.logs();
  EXPECT_GT(second->start_ns, first->end_ns);
  EXPECT_LT(ms_between(first->end_ns, second->start_ns), once_ttl.count() / 2.0)
      << "the release, not the expiry, woke it\n" << e.logs();
  EXPECT_NE(waiting.log_text().find("standing by: host-a leads"), std::string::npos);
  expect_no_overlap(e);
}

TEST(once_faults, a_wait_that_runs_out_exits_held_without_running_the_job) {
  once_election e(round_name(0));
  auto& holder = e.tick("host-a", {});
  event_log log(e.events());
  ASSERT_TRUE(wait_for(log, [](const event_log& x) { return x.start_count() == 1; }, 10s))
      << e.logs();
  const auto started = std::chrono::steady_clock::now();
  auto& waiting = e.tick("host-b", {"--wait", "1500ms"});
  EXPECT_EQ(exit_of(waiting, e), 75) << e.logs();
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1500ms);
  EXPECT_FALSE(only_worker_of(e.log(), "host-b"));
  ASSERT_TRUE(holder.signal(SIGTERM));
  EXPECT_EQ(exit_of(holder, e), 143) << e.logs();
}

TEST(once_faults, a_store_that_cannot_be_reached_gives_69) {
  temp_dir dir("bo-");
  const auto port = free_loopback_port();
  baton_process p({"once", "--election", "unreachable", "--redis-url",
                   "redis://127.0.0.1:" + std::to_string(port), "--wait", "1s", "--", "/bin/true"},
                  env_list{}, dir / "once.log");
  const auto code = p.wait_exit(exit_bound);
  ASSERT_TRUE(code) << p.log_text();
  EXPECT_EQ(*code, 69) << p.log_text();
  EXPECT_NE(p.log_text().find("once: not running the command: the store gave no lease"),
            std::string::npos)
      << p.log_text();
}

}  // namespace
}  // namespace baton::testing
