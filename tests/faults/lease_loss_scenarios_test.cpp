// The lease gone from the store while its leader works, on every store kind
// (daemon_scenarios.hpp), deleted by an operator the kind's way (DEL of the
// Redis key, DELETE of the PostgreSQL row, `etcdctl del`, a ZooKeeper
// delete):
// - with a standby that saw the term: the leader's next renewal answers
//   lost and its app stops; the standby never starts before that, and takes
//   over with a larger token;
// - early loss, a candidate started right after the delete, which never saw
//   the holder: it finds no lease at all, and still must not start while the
//   old app may work (the Redis kinds' holder record, etcd's holder key,
//   ZooKeeper's hold-back for a term a standby never saw, the new row's
//   hold-back on PostgreSQL).
#include <functional>

#include "daemon_scenarios.hpp"

namespace baton::testing::daemon_scenarios_test {
namespace {

// What a round of either scenario saw after the delete.
struct after_the_delete {
  std::int64_t inject_ns = 0;
  std::optional<std::int64_t> gone_ns;
};

// Deletes the lease of `c`'s working `leader` on `world`, runs `then` at once
// (a newcomer's start, or nothing), and checks the promise: the old app
// stops within the ttl, and the next one starts only after it, with a larger
// token.
after_the_delete delete_under(store_world& world, fault_cluster& c, const interval& leader,
                              const std::function<void()>& then) {
  after_the_delete out;
  exit_watch app(leader.pid);
  out.inject_ns = mono_now_ns();
  world.delete_lease(c.election());
  then();
  out.gone_ns = app.wait(scenario_ttl + 2s);
  EXPECT_TRUE(out.gone_ns) << "the app outlived its deleted lease\n"
                           << c.logs() << world.diagnostics();
  if (!out.gone_ns) return out;
  EXPECT_LE(*out.gone_ns, out.inject_ns + std::chrono::nanoseconds(scenario_ttl).count())
      << c.logs();

  event_log log(c.events());
  EXPECT_TRUE(wait_for_new_term_after(log, out.inject_ns, 20s)) << "nobody led after the delete\n"
                                                                << c.logs() << world.diagnostics();
  const auto next = first_started_after(log, out.inject_ns);
  if (!next) return out;
  EXPECT_GT(next->start_ns, *out.gone_ns) << "a candidate started while the old app worked\n"
                                          << c.logs();
  EXPECT_GT(token_value(*next), token_value(leader)) << c.logs();
  std::printf("[%s] app gone %.0f ms after the delete, %s started %.0f ms after it\n",
              c.election().c_str(), ms_between(out.inject_ns, *out.gone_ns), next->name.c_str(),
              ms_between(out.inject_ns, next->start_ns));
  return out;
}

TEST_P(daemon_scenarios, operator_deletes_the_lease) {
  auto c = election("delete");
  start(*c, 1);
  start(*c, 2);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  const auto seen = delete_under(world(), *c, *leader, [] {});
  auto r = record_of(*c, "an operator's delete of the lease", seen.inject_ns, leader->pid);
  if (seen.gone_ns) r.gone_after_end_ms = ms_between(seen.inject_ns, *seen.gone_ns);
  record_fault(r);
}

TEST_P(daemon_scenarios, early_loss) {
  auto c = election("early-loss");
  start(*c, 1);
  start(*c, 2);
  const auto leader = single_leader(*c);
  ASSERT_TRUE(leader);
  const auto seen = delete_under(world(), *c, *leader, [&] { start(*c, 3); });
  auto r = record_of(*c, "the lease deleted, a new candidate started at once", seen.inject_ns,
                     leader->pid);
  if (seen.gone_ns) r.gone_after_end_ms = ms_between(seen.inject_ns, *seen.gone_ns);
  record_fault(r);
}

}  // namespace
}  // namespace baton::testing::daemon_scenarios_test
