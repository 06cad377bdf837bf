// The lease key vanishes while its leader works through a real eviction
// under maxmemory-policy volatile-ttl (which evicts the keys nearest to
// expiry first: the lease). A candidate that starts at that moment finds no
// lease key; the holder record holds it back until the lease would have
// ended, and the old leader, whose next renewal finds the key gone, stops
// before then. Before the record existed this gave two workers at once for
// about half a second. An operator's DEL of the key is the early_loss
// scenario of every store kind (lease_loss_scenarios_test.cpp).
#include <string>

#include "redis/lease_keys.hpp"
#include "scenario.hpp"

namespace baton::testing::early_loss_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// Runs one round: `make_the_key_vanish` removes the lease key of the working
// leader; a new candidate starts right after.
template <typename Vanish>
void round_of(int round, const std::string& kind, Vanish make_the_key_vanish) {
  fault_cluster c(round_name(round), ttl);
  c.start_node(1);
  c.start_node(2);
  std::string why;
  auto leader = c.wait_for_single_worker(15s, &why);
  ASSERT_TRUE(leader) << why;

  const std::int64_t inject = mono_now_ns();
  make_the_key_vanish(c);
  ASSERT_TRUE(c.redis().command({"EXISTS", lease_key(c.election())}).front() == "0")
      << "the lease key is still there";
  c.start_node(3);

  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s))
      << "no new term after the key vanished\n"
      << c.logs();
  const auto next = first_started_after(log, inject);
  const auto old = interval_of(log, leader->pid);
  ASSERT_TRUE(old);
  EXPECT_LT(old->end_ns, next->start_ns) << c.logs();
  EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();
  // The candidate that found the key gone said why it waited.
  EXPECT_NE(c.logs().find("held back: the lease key vanished before its expiry"), std::string::npos)
      << c.logs();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, kind, inject, leader->pid, overlaps));
}

TEST(early_loss_faults, the_lease_key_evicted_under_a_leader_a_new_candidate_waits) {
  for (int round = 1; round <= rounds; ++round) {
    round_of(round, "redis: lease key evicted (volatile-ttl)", [](fault_cluster& c) {
      auto& r = c.redis();
      // Just above what is used now, then writes of keys without a TTL: the
      // only keys that may go are those with one, the lease first.
      const auto info = r.command({"INFO", "memory"}).front();
      const auto at = info.find("used_memory:");
      const long used = std::stol(info.substr(at + 12));
      r.command({"CONFIG", "SET", "maxmemory-policy", "volatile-ttl"});
      r.command({"CONFIG", "SET", "maxmemory", std::to_string(used + 256 * 1024)});
      const std::string filler(16 * 1024, 'x');
      for (int i = 0; i < 200; ++i) {
        if (r.command({"EXISTS", lease_key(c.election())}).front() == "0") break;
        try {
          r.command({"SET", "filler:" + std::to_string(i), filler});
        } catch (const std::runtime_error&) {
          break;  // OOM: nothing with a TTL is left to evict
        }
      }
      // Room again, so that scripts may write: the eviction has happened.
      r.command({"CONFIG", "SET", "maxmemory", "0"});
    });
  }
}

}  // namespace
}  // namespace baton::testing::early_loss_faults_test
