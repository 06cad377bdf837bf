// Faults of etcd's connections under etcd_store: the watch connection
// reset or silenced (a fault proxy between one store and etcd), compaction
// past the watch's revision, a reset keepalive connection. One member per
// test.
#include <gtest/gtest.h>

#include "etcd_fault_fixture.hpp"

namespace baton::testing {
namespace {

using namespace etcd_fault_fixture;

// The watch connection reset: wake-ups untrusted at once, then trusted again
// once the link is back, and the next term is heard.
TEST_F(etcd_faults, a_reset_watch_connection_is_untrusted_then_armed_again) {
  fault_proxy proxy(etcd_.client_port());
  auto a = store("node-a", 2000ms);
  auto b = store("node-b", 2000ms, "http://127.0.0.1:" + std::to_string(proxy.port()));
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); }));

  const auto reset_at = clock::now();
  proxy.reset();
  ASSERT_TRUE(run_until(io_, [&] { return !b_heard->trusted(); })) << "the reset went unnoticed";
  FIGURE("watch connection reset: untrusted after %lld ms", ms_since(reset_at));
  EXPECT_EQ(b->status().wakeups, wakeup_state::disconnected);
  const auto back_at = clock::now();
  proxy.pass();
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); })) << "the watch never came back";
  FIGURE("watch connection reset: trusted again %lld ms after the link was back",
         ms_since(back_at));
  EXPECT_GE(b_heard->released, 1) << "a watch armed again must say a release may have been missed";

  const auto won = acquire(io_, *a);
  ASSERT_TRUE(won.value.acquired());
  EXPECT_TRUE(run_until(io_, [&] {
    for (const auto t : b_heard->terms)
      if (t == won.value.token) return true;
    return false;
  })) << "b never heard the term after the watch came back";
}

// A silent watch connection (the proxy swallows everything, nothing is
// reset): the watch's check read notices within a ping interval and a
// command timeout, and wake-ups are no longer trusted.
TEST_F(etcd_faults, a_silent_watch_connection_is_found_by_its_check) {
  fault_proxy proxy(etcd_.client_port());
  auto b = store("node-b", 2000ms, "http://127.0.0.1:" + std::to_string(proxy.port()));
  auto b_heard = watch(*b);
  ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); }));
  const auto silenced = clock::now();
  proxy.blackhole();
  ASSERT_TRUE(run_until(
      io_, [&] { return !b_heard->trusted(); }, 5s))
      << "a silent watch stayed trusted";
  FIGURE(
      "silent watch connection (check every 300 ms, command timeout 500 ms): untrusted after %lld "
      "ms",
      ms_since(silenced));
  EXPECT_LT(clock::now() - silenced, 2s);
}

// The member's current revision (etcdctl endpoint status), for a compaction.
std::int64_t current_revision(const etcd_server& etcd) {
  const auto out = etcd.etcdctl("endpoint status -w json");
  const auto at = out.find("\"revision\":");
  if (at == std::string::npos) throw std::runtime_error("no revision in: " + out);
  return std::stoll(out.substr(at + 11));
}

// Compacts the member's history up to its current revision: every watch
// asked from an older revision is cancelled.
std::int64_t compact_to_now(const etcd_server& etcd) {
  const auto revision = current_revision(etcd);
  etcd.etcdctl("compact " + std::to_string(revision) + " --physical");
  return revision;
}

// One term of `s` begun and ended (so that the history moves on).
void one_term(asio::io_context& io, lease_store& s) {
  ASSERT_TRUE(acquire(io, s).value.acquired());
  ASSERT_EQ(call<release_answer>(io, [&](auto h) { s.async_release(h); }).value,
            release_answer::released);
}

// Compaction past the revision a standby's watch needs, two ways: while its
// watch connection is down (it watches again from a fresh read, so nothing
// it needs is gone), and while its watch request is on its way after the
// read (etcd cancels the watch for compaction: the store must read again,
// watch again and say a release may have been missed). Either way the
// standby hears `released`, finds the lease free and takes it, and hears
// the next term after: no wake-up lost.
TEST_F(etcd_faults, compaction_past_the_watchs_revision_loses_no_wakeup) {
  constexpr int rounds = 3;
  // Each way over the proxy while the watch arms: the window between the
  // standby's read and its watch request reaching etcd.
  constexpr auto slow = 1500ms;
  for (int round = 1; round <= rounds; ++round) {
    for (const bool while_arming : {false, true}) {
      SCOPED_TRACE("round " + std::to_string(round) + (while_arming ? ", arming" : ", down"));
      fault_proxy proxy(etcd_.client_port());
      auto a = store("node-a", 2000ms);
      auto b =
          store("node-b", 2000ms, "http://127.0.0.1:" + std::to_string(proxy.port()), 5000ms, 60s);
      one_term(io_, *a);
      std::shared_ptr<heard> b_heard;
      std::int64_t compacted = 0;
      clock::time_point back_at;
      if (while_arming) {
        proxy.delay(slow);
        b_heard = watch(*b);
        // The second connection is the watch stream's: the read is answered,
        // the watch request held in the proxy for `slow`.
        ASSERT_TRUE(run_until(
            io_, [&] { return proxy.connections_accepted() >= 2; }, 10s));
        const auto window = clock::now();
        one_term(io_, *a);
        compacted = compact_to_now(etcd_);
        const auto used = ms_since(window);
        ASSERT_LT(used, 1100) << "too slow to compact before the watch request arrived";
        back_at = clock::now();
        proxy.pass();
        // The cancelled watch is followed by a third connection: a new stream.
        ASSERT_TRUE(run_until(
            io_, [&] { return proxy.connections_accepted() >= 3; }, 10s))
            << "the watch was never cancelled (or never armed again)";
        FIGURE(
            "compaction while arming: terms and compaction in %lld ms, within the %lld ms window",
            used, static_cast<long long>(slow.count()));
      } else {
        b_heard = watch(*b);
        ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted(); }));
        proxy.reset();
        ASSERT_TRUE(run_until(io_, [&] { return !b_heard->trusted(); }));
        one_term(io_, *a);
        one_term(io_, *a);
        compacted = compact_to_now(etcd_);
        back_at = clock::now();
        proxy.pass();
      }
      ASSERT_TRUE(run_until(io_, [&] { return b_heard->trusted() && b_heard->released > 0; }))
          << "the standby's watch never came back with a release; last error: "
          << b->status().last_error << "; wake-ups heard " << b_heard->wakeups.size()
          << ", released " << b_heard->released;
      const auto trusted_after = ms_since(back_at);
      if (while_arming) {
        EXPECT_GE(std::count(b_heard->wakeups.begin(), b_heard->wakeups.end(), false), 1)
            << "wake-ups stayed trusted while no watch was open";
      }
      // A compaction takes back nothing the election wrote: no reset.
      EXPECT_TRUE(b_heard->resets.empty()) << b_heard->resets.front();
      const auto won = acquire(io_, *b);
      ASSERT_TRUE(won.value.acquired())
          << won.error.message() << " outcome " << static_cast<int>(won.value.outcome);
      EXPECT_GT(won.value.token, static_cast<std::uint64_t>(compacted - 1));
      FIGURE(
          "compaction to revision %lld %s: trusted again %lld ms after the link was back, "
          "`released` said; the standby took token %llu",
          static_cast<long long>(compacted),
          while_arming ? "while the watch armed" : "while it was down", trusted_after,
          static_cast<unsigned long long>(won.value.token));
      ASSERT_EQ(call<release_answer>(io_, [&](auto h) { b->async_release(h); }).value,
                release_answer::released);
      const auto next = acquire(io_, *a);
      ASSERT_TRUE(next.value.acquired());
      EXPECT_TRUE(run_until(io_, [&] {
        for (const auto t : b_heard->terms)
          if (t == next.value.token) return true;
        return false;
      })) << "the standby never heard the term after";
      ASSERT_EQ(call<release_answer>(io_, [&](auto h) { a->async_release(h); }).value,
                release_answer::released);
    }
  }
}

// A renewal started and answered later, its answer kept.
std::shared_ptr<result<renew_answer>> start_renew(lease_store& s) {
  auto r = std::make_shared<result<renew_answer>>();
  s.async_renew([r](store_error e, renew_answer a) {
    r->done = true;
    r->error = std::move(e);
    r->value = a;
  });
  return r;
}

// The holder's renewal connection reset (a fault proxy between store and
// etcd) while idle, while the keepalive is on its way to etcd, and while
// etcd's answer is on its way back: a renewal whose answer did not arrive
// fails (never `renewed`), the next one goes on a new connection and
// renews. Validity counts from the send time of the last renewal answered:
// nobody else takes the lease before one ttl after that send.
TEST_F(etcd_faults, a_reset_keepalive_connection_never_reports_an_unacknowledged_renewal) {
  constexpr int rounds = 3;
  constexpr auto ttl = 2000ms;
  // Each way over the proxy, for the resets in mid-call.
  constexpr auto slow = 400ms;
  enum class when { idle, request_on_its_way, answer_on_its_way };
  fault_proxy proxy(etcd_.client_port());
  auto a = store("node-a", ttl, "http://127.0.0.1:" + std::to_string(proxy.port()), 3000ms);
  auto b = store("node-b", ttl);
  for (int round = 1; round <= rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    proxy.pass();
    ASSERT_TRUE(acquire(io_, *a).value.acquired());
    auto last_sent = clock::now();
    for (const auto fault : {when::idle, when::request_on_its_way, when::answer_on_its_way}) {
      const char* name = fault == when::idle                 ? "idle"
                         : fault == when::request_on_its_way ? "request on its way"
                                                             : "answer on its way";
      proxy.pass();
      const auto before = clock::now();
      ASSERT_EQ(renew(io_, *a).value, renew_answer::renewed) << name;
      last_sent = before;
      const auto accepted = proxy.connections_accepted();
      result<renew_answer> cut;
      if (fault == when::idle) {
        proxy.reset();
        pass(io_, 100ms);
        proxy.pass();
        cut = renew(io_, *a);
      } else {
        proxy.delay(slow);
        const auto sent = clock::now();
        auto pending = start_renew(*a);
        pass(io_, fault == when::request_on_its_way ? slow / 2 : slow * 3 / 2);
        ASSERT_FALSE(pending->done) << name << ": answered before the reset";
        proxy.reset();
        ASSERT_TRUE(run_until(io_, [&] { return pending->done; }));
        cut = *pending;
        if (!cut.error && cut.value == renew_answer::renewed) last_sent = sent;
        proxy.pass();
      }
      FIGURE("keepalive connection reset, %s: the renewal %s", name,
             cut.error ? ("failed: " + cut.error.message()).c_str()
                       : (cut.value == renew_answer::renewed ? "renewed" : "said lost"));
      if (fault != when::idle) {
        EXPECT_TRUE(cut.error) << name << ": a renewal whose answer was cut said "
                               << (cut.value == renew_answer::renewed ? "renewed" : "lost");
      }
      EXPECT_NE(cut.value, renew_answer::lost) << name << ": the term is etcd's still";
      const auto again_sent = clock::now();
      const auto again = renew(io_, *a);
      ASSERT_FALSE(again.error) << name << ": " << again.error.message();
      ASSERT_EQ(again.value, renew_answer::renewed) << name;
      last_sent = again_sent;
      EXPECT_GT(proxy.connections_accepted(), accepted) << name << ": no new connection";
    }
    // The holder goes silent; the standby takes the lease no earlier than
    // one ttl after the last answered renewal was sent.
    result<acquire_answer> taken;
    const auto give_up = clock::now() + 15s;
    while (clock::now() < give_up) {
      taken = acquire(io_, *b);
      if (!taken.error && taken.value.acquired()) break;
      pass(io_, 50ms);
    }
    ASSERT_TRUE(taken.value.acquired()) << taken.error.message();
    FIGURE(
        "keepalive connection resets, round %d: the standby took the lease %lld ms after the "
        "holder's last answered renewal was sent (ttl 2 s)",
        round, ms_since(last_sent));
    EXPECT_GE(clock::now() - last_sent, ttl);
    EXPECT_EQ(renew(io_, *a).value, renew_answer::lost);
    ASSERT_EQ(call<release_answer>(io_, [&](auto h) { b->async_release(h); }).value,
              release_answer::released);
  }
}

}  // namespace
}  // namespace baton::testing
