// `baton switchover --to NODE`: the leader steps down as a resign does (stop
// the app, keep the lease until it is down, then cool down), but its release
// reserves the lease for NODE for the window; a standby that meets the
// reservation waits it out and names no leader meanwhile.
#include "machine_harness.hpp"

namespace baton::testing {
namespace {

TEST(switchover, stops_the_app_then_hands_the_lease_over_then_cools_down) {
  machine_harness h(with_cooldown(20s));
  h.become_leader(11);
  h.advance(1s);
  h.feed(events::resign{"node-b", 4s});
  EXPECT_EQ(h.machine.current(), state::pausing);
  EXPECT_EQ(h.machine.handing_over_to(), "node-b");
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::switchover);
  EXPECT_TRUE(stop->voluntary);
  EXPECT_EQ(h.transitions.back().detail, "to node-b");
  EXPECT_EQ(h.count<actions::release>(), 0) << "never before the app has stopped";

  h.advance(300ms);
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.machine.current(), state::releasing);
  auto release = h.last<actions::release>();
  ASSERT_TRUE(release);
  EXPECT_EQ(release->hand_over_to, "node-b");
  EXPECT_EQ(release->window, 4s);

  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.machine.handing_over_to(), "") << "the switchover is over";
  EXPECT_EQ(h.machine.held_back_until(), h.now + 20s) << "the resign's cool-down";
  EXPECT_TRUE(h.machine.cooling_down_after_resign(h.now));
}

TEST(switchover, a_preemption_hands_over_the_same_way_and_says_so) {
  machine_harness h(with_cooldown(20s));
  h.become_leader(11);
  h.feed(events::resign{"node-b", 4s, true});
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::preempted);
  EXPECT_STREQ(to_string(reason::preempted), "preempted");
  h.feed(events::app_stopped{});
  auto release = h.last<actions::release>();
  ASSERT_TRUE(release);
  EXPECT_EQ(release->hand_over_to, "node-b");
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.held_back_until(), h.now + 20s) << "the resign's cool-down";
}

TEST(switchover, a_plain_resign_after_it_releases_for_everyone) {
  machine_harness h(with_cooldown(20s));
  h.become_leader();
  h.feed(events::resign{"node-b", 4s});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  h.advance(20s);
  ASSERT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::acquired{h.now, 30});
  h.feed(events::app_started{});
  h.feed(events::resign{});
  h.feed(events::app_stopped{});
  auto release = h.last<actions::release>();
  ASSERT_TRUE(release);
  EXPECT_EQ(release->hand_over_to, "");
  EXPECT_EQ(h.last<actions::stop_app>()->why, reason::resigned);
}

TEST(switchover, a_lost_lease_during_the_stop_is_not_handed_over) {
  machine_harness h(with_cooldown(20s));
  h.become_leader();
  h.feed(events::resign{"node-b", 4s});
  // The lease is renewed while the app stops; this renewal finds it lost.
  const int renewals = h.count<actions::renew>();
  for (int i = 0; i < 100 && h.count<actions::renew>() == renewals; ++i) h.advance(100ms);
  ASSERT_GT(h.count<actions::renew>(), renewals) << "no renewal during the stop";
  h.feed(events::lost{});
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.count<actions::release>(), 0) << "nothing left to hand over";
  EXPECT_EQ(h.machine.current(), state::idle);
}

TEST(switchover, a_standby_that_meets_a_reservation_waits_out_its_window) {
  machine_harness h;
  h.feed(events::start{});
  ASSERT_EQ(h.machine.current(), state::acquiring);
  events::busy b{h.now, "node-a", 3s, 12, true};
  b.reserved_for = "node-b";
  h.feed(b);
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.transitions.back().detail, "reserved for node-b by a switchover from node-a");
  EXPECT_EQ(h.machine.known_leader("node-c", h.now), "") << "node-a no longer leads";
  EXPECT_EQ(h.machine.reserved_for(h.now), "node-b");
  EXPECT_EQ(h.machine.reserved_for(h.now + 3s), "") << "over with its window";
  EXPECT_GE(h.timer(timer_id::wake), h.now + 3s) << "not before the window is over";
  EXPECT_LE(h.timer(timer_id::wake), h.now + 3s + 10ms);

  // The target's term, announced, names the new leader.
  h.feed(events::peer_acquired{"node-b", 13});
  EXPECT_EQ(h.machine.known_leader("node-c", h.now), "node-b");
  EXPECT_EQ(h.machine.reserved_for(h.now), "") << "taken";
}

TEST(priorities, an_outranked_standby_tries_later_after_an_expiry_and_a_release) {
  machine_harness h;  // ttl 10 s: one step is 250 ms
  h.feed(events::start{});
  events::busy b{h.now, "node-a", 3s, 12, true};
  b.outranked_by = 2;
  h.feed(b);
  EXPECT_GE(h.timer(timer_id::wake), h.now + 3s + 500ms) << "two steps after the expiry";
  EXPECT_LE(h.timer(timer_id::wake), h.now + 3s + 502ms);

  // A release: the higher candidates go first.
  h.advance(1s);
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_GE(h.timer(timer_id::wake), h.now + 500ms);

  // Not outranked (any more): straight away, as before.
  h.advance(1s);
  ASSERT_EQ(h.machine.current(), state::acquiring);
  events::busy top{h.now, "node-a", 3s, 12, true};
  top.outranked_by = 0;
  h.feed(top);
  EXPECT_LE(h.timer(timer_id::wake), h.now + 3s + 2ms);
  h.advance(1s);
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::acquiring);
}

TEST(priorities, a_store_that_cannot_tell_delays_nobody) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "node-a", 3s, 12, true});
  EXPECT_LE(h.timer(timer_id::wake), h.now + 3s + 2ms);
}

}  // namespace
}  // namespace baton::testing
