// The campaign's checker on hand-made histories: a clean one passes, and
// each breach it exists for fails it (two apps at once, a token going back,
// a stale write accepted, a write begun past the lease), while the windows
// it must allow (late within the drift margin, after a whole-host pause)
// pass and are counted. Leaderless time and unforced changes are blamed on
// the right fault class.
#include <gtest/gtest.h>

#include "campaign/history_check.hpp"

namespace baton::campaign {
namespace {

constexpr std::int64_t ms_ns = 1'000'000;

// An app of `node` with `token` that started at `start_ms`, was given
// validity until `valid_ms`, and wrote every 10 ms from start to `last_ms`.
app_run app_of(const std::string& node, std::uint64_t token, std::int64_t start_ms,
               std::int64_t last_ms, std::int64_t valid_ms) {
  app_run a;
  a.node = node;
  a.pid = static_cast<pid_t>(1000 + token);
  a.token = token;
  a.start_ns = start_ms * ms_ns;
  a.leases.push_back({start_ms * ms_ns + ms_ns, valid_ms * ms_ns});
  for (std::int64_t t = start_ms + 2; t <= last_ms; t += 10) {
    a.writes.push_back({t * ms_ns, t * ms_ns + ms_ns / 2});
  }
  return a;
}

// Two clean terms: node-1 (token 5) until 1000 ms, node-2 (token 6) from
// 2600 ms, the fence history in token order, a leader kill between them.
history clean_history() {
  history h;
  h.begin_ns = 0;
  h.end_ns = 5000 * ms_ns;
  h.ttl_ns = 1500 * ms_ns;
  h.drift_ns = 17 * ms_ns;
  h.apps = {app_of("node-1", 5, 0, 1000, 1400), app_of("node-2", 6, 2600, 4000, 4500)};
  for (const auto& a : h.apps) {
    for (std::size_t i = 0; i < a.writes.size(); ++i) {
      h.accepted.push_back({a.token, a.node + ":" + std::to_string(i + 1)});
    }
  }
  h.faults = {{"daemon-kill", "node-1 (leader)", 1001 * ms_ns, 3000 * ms_ns, true, false},
              {"sighup", "node-3 (standby)", 4100 * ms_ns, 4100 * ms_ns, false, false},
              {"resign", "", 4200 * ms_ns, 4200 * ms_ns, false, true}};
  return h;
}

bool has_violation(const verdict& v, const std::string& what) {
  for (const auto& x : v.violations) {
    if (x.what == what) return true;
  }
  return false;
}

TEST(history_check, a_clean_history_is_safe_and_its_figures_are_blamed_on_the_fault) {
  const auto v = check_history(clean_history());
  EXPECT_TRUE(v.ok()) << format_verdict(v);
  EXPECT_EQ(v.terms, 2u);
  EXPECT_EQ(v.writes_accepted, v.writes_logged);
  const auto& kill = v.per_class.at("daemon-kill");
  EXPECT_EQ(kill.injected, 1);
  EXPECT_EQ(kill.leader_changes, 1);
  EXPECT_EQ(kill.unforced_changes, 0);
  EXPECT_EQ(kill.gaps, 1);
  EXPECT_NEAR(kill.leaderless_ms, 2600 - 992.5, 0.01);  // from the last write landed
  EXPECT_EQ(v.per_class.at("resign").skipped, 1);
  EXPECT_NE(format_verdict(v).find("| daemon-kill | 1 | 0 | 1 | 0 | 1 |"), std::string::npos)
      << format_verdict(v);
}

TEST(history_check, two_apps_at_once_fail) {
  auto h = clean_history();
  h.apps[1] = app_of("node-2", 6, 900, 4000, 4500);  // starts before node-1's last write
  const auto v = check_history(h);
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.overlaps, 1u);
  EXPECT_TRUE(has_violation(v, "overlap")) << format_verdict(v);
}

TEST(history_check, a_token_going_back_fails) {
  auto h = clean_history();
  h.apps.push_back(app_of("node-3", 4, 4600, 4700, 6000));
  h.end_ns = 7000 * ms_ns;
  const auto v = check_history(h);
  EXPECT_EQ(v.token_regressions, 1u);
  EXPECT_TRUE(has_violation(v, "token order")) << format_verdict(v);
}

TEST(history_check, one_token_on_two_nodes_fails) {
  auto h = clean_history();
  h.apps[1].token = 5;
  EXPECT_TRUE(has_violation(check_history(h), "token order"));
}

TEST(history_check, the_same_terms_app_started_again_is_one_term) {
  auto h = clean_history();
  auto again = app_of("node-2", 6, 4100, 4300, 4500);
  again.pid = 4242;
  h.apps.push_back(again);
  const auto v = check_history(h);
  EXPECT_TRUE(v.ok()) << format_verdict(v);
  EXPECT_EQ(v.terms, 2u);
}

TEST(history_check, a_stale_write_accepted_after_a_newer_term_wrote_fails) {
  auto h = clean_history();
  h.accepted.push_back({5, "node-1:999"});  // the old term's write, after token 6's
  const auto v = check_history(h);
  EXPECT_EQ(v.stale_accepted, 1u);
  EXPECT_TRUE(has_violation(v, "stale write accepted")) << format_verdict(v);
}

TEST(history_check, a_write_begun_past_the_lease_fails_unless_within_the_drift_margin) {
  auto h = clean_history();
  h.apps[0].leases = {{1 * ms_ns, 900 * ms_ns}};  // writes run on to 1000 ms
  auto v = check_history(h);
  EXPECT_GT(v.past_lease, 0u);
  EXPECT_TRUE(has_violation(v, "past lease")) << format_verdict(v);

  h.apps[0].leases = {{1 * ms_ns, 990 * ms_ns}};  // the last write is 12 ms late: within 17
  v = check_history(h);
  EXPECT_TRUE(v.ok()) << format_verdict(v);
  EXPECT_EQ(v.late_within_drift, 1u);
}

TEST(history_check, a_write_after_a_whole_host_pause_is_left_to_the_fence) {
  auto h = clean_history();
  h.apps[0].leases = {{1 * ms_ns, 500 * ms_ns}};
  h.pauses = {{"node-1", 450 * ms_ns, 700 * ms_ns}};
  // Paused across its deadline: the writes after are the fence's case ...
  auto v = check_history(h);
  EXPECT_TRUE(v.ok()) << format_verdict(v);
  EXPECT_GT(v.after_pause, 0u);
  // ... but a pause of another host excuses nothing.
  h.pauses = {{"node-2", 450 * ms_ns, 700 * ms_ns}};
  EXPECT_TRUE(has_violation(check_history(h), "past lease"));
}

TEST(history_check, a_paused_hosts_late_writes_are_judged_by_the_fence_not_as_an_overlap) {
  auto h = clean_history();
  // node-1 paused from 900 ms to 3000 ms, past its validity (1400 ms); its
  // write in flight lands at 3001 ms, after node-2 started at 2600 ms.
  h.pauses = {{"node-1", 900 * ms_ns, 3000 * ms_ns}};
  h.apps[0].writes.push_back({899 * ms_ns, 3001 * ms_ns});
  auto v = check_history(h);
  EXPECT_TRUE(v.ok()) << format_verdict(v);
  EXPECT_EQ(v.overlaps, 0u);
  EXPECT_GT(v.after_pause, 0u);
  // Had the fence accepted it after token 6, that is the breach.
  h.accepted.push_back({5, "node-1:late"});
  v = check_history(h);
  EXPECT_EQ(v.stale_accepted, 1u);
  EXPECT_FALSE(v.ok());
  // A short pause (the validity still good at the thaw) excuses nothing.
  h.accepted.pop_back();
  h.pauses = {{"node-1", 900 * ms_ns, 1000 * ms_ns}};
  EXPECT_EQ(check_history(h).overlaps, 1u);
}

TEST(history_check, a_gap_is_blamed_on_the_forcing_fault_on_not_on_a_later_harmless_one) {
  auto h = clean_history();
  // The store was killed before node-1's last write; a candidate joined
  // just after it. The store kill is what ended the term.
  h.faults = {{"store-kill", "redis-server", 700 * ms_ns, 2500 * ms_ns, true, false},
              {"join", "node-100", 1000 * ms_ns, 4000 * ms_ns, false, false}};
  const auto v = check_history(h);
  EXPECT_EQ(v.per_class.at("store-kill").gaps, 1);
  EXPECT_EQ(v.per_class.at("store-kill").leader_changes, 1);
  EXPECT_EQ(v.per_class.at("join").gaps, 0);
  EXPECT_EQ(v.per_class.at("join").unforced_changes, 0);
}

TEST(history_check, a_lasting_fault_is_blamed_before_a_later_instant_one) {
  auto h = clean_history();
  h.faults = {{"member-freeze", "node 7002", 500 * ms_ns, 950 * ms_ns, false, false},
              {"sighup", "node-1 (leader)", 900 * ms_ns, 900 * ms_ns, false, false}};
  const auto v = check_history(h);
  EXPECT_EQ(v.per_class.at("member-freeze").unforced_changes, 1);
  EXPECT_EQ(v.per_class.at("sighup").gaps, 0);
}

TEST(history_check, a_fault_long_over_is_not_blamed) {
  auto h = clean_history();
  h.ttl_ns = 500 * ms_ns;
  // A resign a ttl and more before the work ended explains nothing there.
  h.faults = {{"resign", "node-1", 100 * ms_ns, 100 * ms_ns, true, false},
              {"store-kill", "leader member 2", 900 * ms_ns, 1200 * ms_ns, false, false}};
  const auto v = check_history(h);
  EXPECT_EQ(v.per_class.at("store-kill").unforced_changes, 1);
  EXPECT_EQ(v.per_class.at("resign").leader_changes, 0);
}

TEST(history_check, a_write_before_any_lease_was_known_fails) {
  auto h = clean_history();
  h.apps[1].leases.clear();
  EXPECT_TRUE(has_violation(check_history(h), "past lease"));
}

TEST(history_check, a_change_after_a_fault_that_did_not_force_one_is_unforced) {
  auto h = clean_history();
  h.faults[0] = {"member-freeze", "replica 7002", 1001 * ms_ns, 1500 * ms_ns, false, false};
  auto v = check_history(h);
  EXPECT_EQ(v.per_class.at("member-freeze").unforced_changes, 1);
  // With no fault anywhere near, the change is blamed on none.
  h.faults.clear();
  v = check_history(h);
  EXPECT_EQ(v.per_class.at("none").leader_changes, 1);
  EXPECT_EQ(v.per_class.at("none").unforced_changes, 1);
}

}  // namespace
}  // namespace baton::campaign
