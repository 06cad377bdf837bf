// lease.failsafe peers on the redlock kind, three candidates over three
// masters, a ttl of 2 s (docs/safety.md, "Peer-confirmed leadership";
// docs/stores/redlock.md):
//
// - All three masters stopped under the leader for BATON_FAILSAFE_OUTAGE_S
//   seconds (15 by default) and started again, once on their data (an
//   append-only file written at every command) and once empty: with the
//   mode, the same app and token throughout; the leader runs on its peers'
//   confirmations and resumes its term on the masters (its lease lapsed
//   meanwhile, and on empty masters its record went with the data).
// - Without the mode, today's behaviour: the app stops at the renew
//   deadline.
//
// Every round checks the event log for overlaps.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "failsafe_checks.hpp"
#include "scenario.hpp"

namespace baton::testing::failsafe_redlock_faults_test {
namespace {

constexpr auto ttl = 2000ms;

std::chrono::seconds redlock_outage() { return failsafe_outage(15s); }

// Three masters, the election's counter seeded on each (a fresh master
// would fence itself for a ttl). `keep_data`: an append-only file synced at
// every write, so that a restart comes back with the data.
class failsafe_masters {
 public:
  failsafe_masters(const std::string& election, bool keep_data) : election_(election) {
    redis_server_options o;
    if (keep_data) o.extra_config = {"appendonly yes", "appendfsync always"};
    for (int i = 0; i < 3; ++i) {
      servers_.push_back(std::make_unique<redis_server>(o));
      servers_.back()->command({"SET", "baton:{" + election_ + "}:token", "1", "NX"});
    }
  }

  void stop_all() {
    for (auto& s : servers_) s->kill_and_wait();
  }
  // Started again on the same ports: on their data, or empty.
  void start_all() {
    for (auto& s : servers_) s->restart();
  }
  std::string record(std::size_t i) const {
    const auto got = servers_[i]->command({"GET", "baton:{" + election_ + "}:failsafe"});
    return got.empty() ? std::string() : got[0];
  }
  // Every master's log since its restart says it loaded its data.
  bool loaded_their_data() const {
    for (const auto& s : servers_) {
      if (s->log_tail().find("loaded from append only file") == std::string::npos) return false;
    }
    return true;
  }
  std::string logs() const {
    std::string out;
    for (const auto& s : servers_) {
      out += "redis-server :" + std::to_string(s->port()) + " log:\n" + s->log_tail();
    }
    return out;
  }

  // A candidate of the redlock kind over these masters; with the mode, on
  // its own peer port and the shared secret.
  node_options options(failsafe_peer_ports* peers, int index) const {
    std::string urls;
    for (const auto& s : servers_) urls += (urls.empty() ? "" : ",") + s->url();
    node_options o;
    o.redis_url = servers_.front()->url();  // unused by the redlock kind
    o.baton_args = {"--store-kind", "redlock", "--redlock-masters", urls};
    if (peers != nullptr) {
      const auto flags = peers->flags(index);
      o.baton_args.insert(o.baton_args.end(), flags.begin(), flags.end());
    }
    return o;
  }

 private:
  std::string election_;
  std::vector<std::unique_ptr<redis_server>> servers_;
};

// Every master stopped under a leader for the outage, then started again:
// the leader keeps its app and token, and resumes its term.
void stopped_and_started(bool keep_data) {
  fault_cluster c(round_name(1), ttl, false);
  failsafe_masters m(c.election(), keep_data);
  failsafe_peer_ports peers(c);
  for (int n = 1; n <= 3; ++n) c.start_node(n, m.options(&peers, n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << c.logs();
  const int l = fault_cluster::index_of(*leader);
  // Every master's record lists both standbys (the leader's renewals write
  // it where the lease is theirs): whom its rounds ask.
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(record_lists_the_standbys(
        l, [&] { return m.record(i); },
        [](const std::string& node) { return "\n" + node + " "; }, 10s))
        << "master " << i + 1 << "\n"
        << c.logs();
  }
  const std::uint64_t token = token_value(*leader);

  const std::int64_t inject = mono_now_ns();
  m.stop_all();
  // Half-way: the leader runs on its peers' confirmations.
  hold_fault_until(inject + std::chrono::nanoseconds(redlock_outage()).count() / 2);
  expect_on_confirmations(c, l);
  hold_fault_until(inject + std::chrono::nanoseconds(redlock_outage()).count());
  m.start_all();
  const std::int64_t back = mono_now_ns();

  ASSERT_TRUE(c.node(l).wait_for_log("resumed term " + std::to_string(token), 10s))
      << c.logs() << m.logs();
  // At most the log's poll later than the resume itself.
  const double resumed_ms = ms_between(back, mono_now_ns());
  expect_same_app_throughout(c, l, *leader, token, 10s);
  if (keep_data) {
    EXPECT_TRUE(m.loaded_their_data()) << m.logs();
  }
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(m.record(i).rfind(std::to_string(token) + " ", 0), 0u)
        << "master " << i + 1 << "'s record is not the term's: " << m.record(i);
  }
  const auto overlaps = check_no_overlap(c);
  const std::string data = keep_data ? "on their data" : "empty";
  auto record = round_record(c,
                             "redlock: 3 masters stopped " +
                                 std::to_string(redlock_outage().count()) + " s, started " + data +
                                 " (failsafe peers)",
                             inject, std::nullopt, overlaps);
  record.kept_working = true;
  record_fault(record);
  std::printf(
      "failsafe on redlock: 3 masters stopped %lld s, started %s; the leader resumed within "
      "%.0f ms of the masters being back\n",
      static_cast<long long>(redlock_outage().count()), data.c_str(), resumed_ms);
}

TEST(failsafe_redlock_faults, masters_stopped_and_started_on_their_data_the_leader_keeps_its_app) {
  stopped_and_started(true);
}

TEST(failsafe_redlock_faults, masters_stopped_and_started_empty_the_leader_keeps_its_app) {
  stopped_and_started(false);
}

TEST(failsafe_redlock_faults, without_the_mode_the_leader_stops_at_its_renew_deadline) {
  fault_cluster c(round_name(1), ttl, false);
  failsafe_masters m(c.election(), false);
  for (int n = 1; n <= 3; ++n) c.start_node(n, m.options(nullptr, n));
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  ASSERT_TRUE(leader) << why << "\n" << c.logs();
  exit_watch app(leader->pid);

  const std::int64_t inject = mono_now_ns();
  m.stop_all();
  const auto gone = app.wait(ttl + 2s);
  ASSERT_TRUE(gone) << "the app outlived its lease without the mode\n" << c.logs();
  // Stopped within the lease's validity, counted from the last renewal
  // before the outage.
  EXPECT_LE(*gone, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
  std::printf("failsafe off on redlock: the app stopped %.0f ms after the masters did\n",
              ms_between(inject, *gone));
  hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
  m.start_all();
  event_log log(c.events());
  ASSERT_TRUE(wait_for_new_term_after(log, inject, 20s)) << c.logs() << m.logs();
  const auto overlaps = check_no_overlap(c);
  record_fault(round_record(c, "redlock: 3 masters stopped 3 s, started empty (failsafe off)",
                            inject, leader->pid, overlaps));
}

}  // namespace
}  // namespace baton::testing::failsafe_redlock_faults_test
