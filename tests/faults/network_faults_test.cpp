// Network faults between baton and Redis.
//
// iptables (blackhole: DROP; reset: REJECT with a TCP reset) inside a private
// network namespace that each round creates, so the rules touch only the
// test's own loopback. Every node reaches Redis through its own redirected
// port (redirected_links.hpp), so that one node can be cut off while the
// others still reach Redis: the leader isolated from Redis but not from its
// work. The "all" variants cut Redis's port for everyone (INPUT
// --dport), as a Redis host dropping off the network.
//
// A fault proxy (tests/support/fault_proxy.hpp) makes the leader's link
// half-open: connections stay up, nothing comes through.
#include <signal.h>

#include "redirected_links.hpp"
#include "scenario.hpp"
#include "support/fault_proxy.hpp"
#include "support/private_network.hpp"

namespace baton::testing::network_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// Starts two nodes, each through its own redirected port.
void start_redirected_nodes(const private_network& net, fault_cluster& c) {
  for (int i = 1; i <= 2; ++i)
    c.start_node(i, via_redis_url(redirect_redis_link(net, c.redis(), i)));
}

std::vector<std::string> all_rule(const fault_cluster& c, bool reset) {
  std::vector<std::string> rule = {
      "INPUT", "-p", "tcp", "--dport", std::to_string(c.redis().port()), "-j"};
  if (reset) {
    rule.insert(rule.end(), {"REJECT", "--reject-with", "tcp-reset"});
  } else {
    rule.emplace_back("DROP");
  }
  return rule;
}

// The leader alone loses Redis; the other node takes over once the leader's
// key expired, and only after the leader's app stopped.
void leader_cut_off(bool reset, const std::string& kind) {
  for (int round = 1; round <= rounds; ++round) {
    private_network net;
    fault_cluster c(round_name(round), ttl);
    start_redirected_nodes(net, c);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const int l = fault_cluster::index_of(*leader);
    const std::string other = fault_cluster::name_of(l == 1 ? 2 : 1);
    exit_watch app(leader->pid);

    const auto rule = redis_link_cut(c.redis(), l, reset);
    const std::int64_t inject = mono_now_ns();
    net.must_iptables(with_verb("-A", rule));
    const auto expires = c.lease_expires_ns();  // the test's own link is not cut
    ASSERT_TRUE(expires) << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for(
        log, [](const event_log& x) { return x.start_count() >= 2; }, 15s))
        << "no takeover\n"
        << c.logs();
    const auto gone = app.wait(1s);
    ASSERT_TRUE(gone) << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    const auto next = first_started_after(log, inject);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->name, other);
    EXPECT_LT(old->end_ns, *expires) << "the cut-off app worked past its lease\n" << c.logs();
    EXPECT_GE(next->start_ns, *expires - 1'000'000) << c.logs();
    EXPECT_NE(c.log_of(l).find("store-unreachable"), std::string::npos) << c.log_of(l);

    // Heal: the old leader comes back as a standby.
    net.must_iptables(with_verb("-D", rule));
    EXPECT_TRUE(wait_until(
        [&] {
          auto s = c.status(l, 1s);
          return s && !(*s)["is_leader"].get<bool>() && (*s)["leader"] == other;
        },
        15s, 100ms))
        << c.log_of(l);
    log.refresh();
    EXPECT_EQ(log.start_count(leader->name), 1u) << c.logs();

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, kind, inject, leader->pid, overlaps));
  }
}

// Nobody reaches Redis for ttl + 1 s: the leader's app stops within its
// validity, nobody starts, and a leader works again after the heal.
void redis_cut_off_for_all(bool reset, const std::string& kind) {
  for (int round = 1; round <= rounds; ++round) {
    private_network net;
    fault_cluster c(round_name(round), ttl);
    start_redirected_nodes(net, c);
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    exit_watch app(leader->pid);

    const auto rule = all_rule(c, reset);
    const std::int64_t inject = mono_now_ns();
    net.must_iptables(with_verb("-A", rule));
    const auto gone = app.wait(ttl + 2s);
    hold_fault_until(inject + std::chrono::nanoseconds(ttl + 1s).count());
    event_log log(c.events());
    log.refresh();
    EXPECT_EQ(log.start_count(), 1u) << "an app started while nobody could reach Redis";
    const std::int64_t healed = mono_now_ns();
    net.must_iptables(with_verb("-D", rule));
    ASSERT_TRUE(gone) << "the app outlived its lease with Redis unreachable\n" << c.logs();

    ASSERT_TRUE(wait_for_new_term_after(log, healed, 20s)) << "no leader after the heal\n"
                                                           << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    EXPECT_LE(old->end_ns, inject + std::chrono::nanoseconds(ttl).count()) << c.logs();
    const auto next = first_started_after(log, inject);
    EXPECT_GT(token_value(*next), token_value(*leader)) << c.logs();

    const auto overlaps = check_no_overlap(c);
    auto record = round_record(c, kind, inject, leader->pid, overlaps);
    record.gone_after_end_ms = std::nullopt;
    record_fault(record);
  }
}

TEST(network_faults, iptables_rules_stay_inside_the_private_namespace) {
  if (const auto why = private_network_unavailable(); !why.empty()) GTEST_SKIP() << why;
  {
    private_network net;
    EXPECT_TRUE(net.inside());
    net.must_iptables({"-A", "INPUT", "-p", "tcp", "--dport", "1", "-j", "DROP"});
    std::string out;
    ASSERT_EQ(net.iptables({"-S", "INPUT"}, &out), 0) << out;
    EXPECT_NE(out.find("--dport 1 "), std::string::npos) << out;
  }
  // A later namespace starts clean: the rule lived and died with the first.
  private_network again;
  std::string out;
  ASSERT_EQ(again.iptables({"-S", "INPUT"}, &out), 0) << out;
  EXPECT_EQ(out.find("--dport 1 "), std::string::npos) << out;
}

TEST(network_faults, blackhole_between_the_leader_and_redis_iptables_drop) {
  if (const auto why = private_network_unavailable(); !why.empty()) GTEST_SKIP() << why;
  leader_cut_off(false, "network: leader <-> Redis blackhole (iptables DROP)");
}

TEST(network_faults, reset_between_the_leader_and_redis_iptables_reject) {
  if (const auto why = private_network_unavailable(); !why.empty()) GTEST_SKIP() << why;
  leader_cut_off(true, "network: leader <-> Redis reset (iptables REJECT)");
}

TEST(network_faults, blackhole_of_redis_for_everyone_longer_than_ttl) {
  if (const auto why = private_network_unavailable(); !why.empty()) GTEST_SKIP() << why;
  redis_cut_off_for_all(false, "network: Redis blackholed for all > ttl (iptables DROP)");
}

TEST(network_faults, reset_of_redis_for_everyone_longer_than_ttl) {
  if (const auto why = private_network_unavailable(); !why.empty()) GTEST_SKIP() << why;
  redis_cut_off_for_all(true, "network: Redis reset for all > ttl (iptables REJECT)");
}

TEST(network_faults, half_open_link_between_the_leader_and_redis_proxy) {
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    std::vector<std::unique_ptr<fault_proxy>> proxies;
    for (int i = 1; i <= 2; ++i) {
      proxies.push_back(std::make_unique<fault_proxy>(c.redis().port()));
      c.start_node(i, via_redis_url(proxies.back()->url()));
    }
    std::string why;
    auto leader = c.wait_for_single_worker(15s, &why);
    ASSERT_TRUE(leader) << why;
    const int l = fault_cluster::index_of(*leader);
    const std::string other = fault_cluster::name_of(l == 1 ? 2 : 1);
    fault_proxy& link = *proxies[static_cast<std::size_t>(l - 1)];
    exit_watch app(leader->pid);

    const std::int64_t inject = mono_now_ns();
    link.blackhole();
    const auto expires = c.lease_expires_ns();
    ASSERT_TRUE(expires) << c.logs();

    event_log log(c.events());
    ASSERT_TRUE(wait_for(
        log, [](const event_log& x) { return x.start_count() >= 2; }, 15s))
        << "no takeover\n"
        << c.logs();
    const auto gone = app.wait(1s);
    ASSERT_TRUE(gone) << c.logs();
    const auto old = interval_of(log, leader->pid);
    ASSERT_TRUE(old);
    const auto next = first_started_after(log, inject);
    ASSERT_TRUE(next);
    EXPECT_EQ(next->name, other);
    EXPECT_LT(old->end_ns, *expires) << "the cut-off app worked past its lease\n" << c.logs();
    EXPECT_GE(next->start_ns, *expires - 1'000'000) << c.logs();

    link.pass();
    EXPECT_TRUE(wait_until(
        [&] {
          auto s = c.status(l, 1s);
          return s && !(*s)["is_leader"].get<bool>() && (*s)["leader"] == other;
        },
        15s, 100ms))
        << c.log_of(l);
    log.refresh();
    EXPECT_EQ(log.start_count(leader->name), 1u) << c.logs();

    const auto overlaps = check_no_overlap(c);
    record_fault(round_record(c, "network: leader <-> Redis half-open (proxy)", inject, leader->pid,
                              overlaps));
  }
}

}  // namespace
}  // namespace baton::testing::network_faults_test
