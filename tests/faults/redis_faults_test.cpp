// Faults of Redis itself while a leader works: killed and restarted empty (no
// persistence: the lease and the fencing counter are gone), frozen longer than
// the ttl, and answering slowly (a Lua script that keeps the server busy, and
// a proxy adding latency below and above the command timeout).
#include <signal.h>

#include "scenario.hpp"
#include "support/fault_proxy.hpp"

namespace baton::testing::redis_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// Keeps the server busy for `busy_us` microseconds: the other clients get no
// answer meanwhile, as with a slow disk or a long command.
constexpr const char* busy_script =
    "local s = redis.call('TIME') local a = s[1] * 1000000 + s[2] "
    "while true do local t = redis.call('TIME') "
    "if t[1] * 1000000 + t[2] - a >= tonumber(ARGV[1]) then break end end return 1";

TEST(redis_faults, redis_killed_and_restarted_empty_under_a_leader_new_candidate_waits) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    c.start_node(1);
    c.start_node(2);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const std::uint64_t old_token = token_value(*leader);
    ASSERT_GT(old_token, 0u);

    const std::int64_t inject = mono_now_ns();
    c.redis().kill_and_wait();
    c.redis().restart();
    // A candidate that comes up now (a restarted pod) finds no lease at all:
    // only the data-loss fence keeps it from starting while the old leader
    // still works until its next renewal tells it the key is gone.
    c.start_node(3);

    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s))
        << "no new term after the restart\n"
        << c.logs();
    const auto next = first_started_after(log, inject);
    EXPECT_GT(token_value(*next), old_token)
        << "the fencing token went backwards across the data loss\n"
        << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LT(old->end_ns, next->start_ns) << c.logs();

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "redis: SIGKILL + restart empty", inject, leader->pid, overlaps));
  }
}

TEST(redis_faults, redis_frozen_longer_than_ttl_then_thawed) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    c.start_node(1);
    c.start_node(2);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    c.redis().signal(SIGSTOP);
    // The leader cannot renew: its app stops within the lease's validity.
    const auto gone = app.wait(ttl + 2s);
    hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
    const std::int64_t thaw = mono_now_ns();
    c.redis().signal(SIGCONT);
    ASSERT_TRUE(gone) << "the app outlived a frozen Redis\n" << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s))
        << "no leader after the thaw\n"
        << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    // Validity is counted from the last renewal sent before the freeze.
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
    const auto next = first_started_after(log, inject);
    EXPECT_GT(next->start_ns, thaw) << "someone started while Redis was frozen";
    EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();

    const auto overlaps = check_no_overlap(c);
    auto record =
        round_record(c, "redis: SIGSTOP > ttl, then SIGCONT", inject, leader->pid, overlaps);
    record_fault(record);
  }
}

TEST(redis_faults, redis_busy_for_half_a_second_the_leader_keeps_leading) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    c.start_node(1);
    c.start_node(2);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const int l = fault_cluster::index_of(*leader);

    const std::int64_t inject = mono_now_ns();
    constexpr int stalls = 3;
    for (int i = 0; i < stalls; ++i) {
      // Blocks this thread for the 0.5 s too; then 0.7 s of normal service.
      c.redis().command({"EVAL", busy_script, "0", "500000"});
      std::this_thread::sleep_for(700ms);
    }
    event_log log(c.events());
    log.refresh();
    const auto before = interval_of(log, leader->pid);
    ASSERT_TRUE(before);
    // Still the same app, still working.
    ASSERT_TRUE(wait_for(
        log,
        [&](const event_log& x) {
          auto now = interval_of(x, leader->pid);
          return now && now->ticks > before->ticks + 5;
        },
        5s))
        << c.logs();
    EXPECT_EQ(log.start_count(), 1u) << "leadership changed under a slow Redis\n" << c.logs();
    auto s = c.status(l);
    ASSERT_TRUE(s);
    EXPECT_TRUE((*s)["is_leader"].get<bool>()) << s->dump();

    const auto overlaps = check_no_overlap(c);
    auto record =
        round_record(c, "redis: busy 0.5 s (Lua script), 3 times", inject, std::nullopt, overlaps);
    record.injected = stalls;
    record.kept_working = true;
    record_fault(record);
  }
}

TEST(redis_faults, redis_slow_below_the_command_timeout_the_leader_keeps_leading) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    fault_proxy p1(c.redis().port());
    fault_proxy p2(c.redis().port());
    c.start_node(1, via_redis_url(p1.url()));
    c.start_node(2, via_redis_url(p2.url()));
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const int l = fault_cluster::index_of(*leader);

    // 100 ms each way: 200 ms round trips, under the 333 ms command timeout.
    const std::int64_t inject = mono_now_ns();
    p1.delay(100ms);
    p2.delay(100ms);
    event_log log(c.events());
    // Three renewals' worth of time.
    EXPECT_FALSE(wait_for(
        log, [](const event_log& x) { return x.start_count() > 1; }, 2500ms))
        << "leadership changed under a slow link\n"
        << c.logs();
    auto s = c.status(l);
    ASSERT_TRUE(s);
    EXPECT_TRUE((*s)["is_leader"].get<bool>()) << s->dump();
    ASSERT_TRUE(s->contains("last_renew_latency_ms")) << s->dump();
    EXPECT_GE((*s)["last_renew_latency_ms"].get<long long>(), 190) << s->dump();
    EXPECT_EQ(log.live_workers().size(), 1u);

    const auto overlaps = check_no_overlap(c);
    auto record =
        round_record(c, "redis: +100 ms each way (proxy)", inject, std::nullopt, overlaps);
    record.kept_working = true;
    record_fault(record);
  }
}

TEST(redis_faults, redis_slower_than_the_command_timeout_stops_the_app_in_time) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    fault_proxy p1(c.redis().port());
    fault_proxy p2(c.redis().port());
    c.start_node(1, via_redis_url(p1.url()));
    c.start_node(2, via_redis_url(p2.url()));
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    exit_watch app(leader->pid);

    // 600 ms each way: every reply comes after the 333 ms command timeout.
    const std::int64_t inject = mono_now_ns();
    p1.delay(600ms);
    p2.delay(600ms);
    const auto gone = app.wait(ttl + 2s);
    hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
    p1.pass();
    p2.pass();
    ASSERT_TRUE(gone) << "the app outlived its lease on a too-slow link\n" << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s))
        << "no leader after the link healed\n"
        << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "redis: +600 ms each way (proxy), > command timeout", inject,
                              leader->pid, overlaps));
  }
}

}  // namespace
}  // namespace baton::testing::redis_faults_test
