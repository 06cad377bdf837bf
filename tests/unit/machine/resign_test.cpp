// `baton resign`: the leader stops its app, keeps the lease until the app is
// down, releases, and then stays out of the election for the cool-down, deaf
// to release announcements, so another node takes over.
#include "machine_harness.hpp"

namespace baton::testing {
namespace {

TEST(resign, only_a_leader_can_resign) {
  machine_harness h(with_cooldown(20s));
  EXPECT_FALSE(h.machine.can_resign());
  h.feed(events::start{});
  EXPECT_FALSE(h.machine.can_resign()) << "acquiring";
  h.feed(events::resign{});
  EXPECT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::busy{h.now, "b", 9s, 3, true});
  EXPECT_FALSE(h.machine.can_resign()) << "standby";
  h.feed(events::resign{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.count<actions::stop_app>(), 0);
}

TEST(resign, stops_the_app_then_releases_then_cools_down) {
  machine_harness h(with_cooldown(20s));
  h.become_leader(11);
  h.advance(1s);
  ASSERT_TRUE(h.machine.can_resign());
  auto asked = h.now;
  h.feed(events::resign{});
  EXPECT_EQ(h.machine.current(), state::pausing);
  auto stop = h.last<actions::stop_app>();
  ASSERT_TRUE(stop);
  EXPECT_EQ(stop->why, reason::resigned);
  EXPECT_EQ(stop->token, 11u);
  EXPECT_EQ(stop->kill_at, asked + 5s) << "a voluntary stop: stop_timeout applies";
  EXPECT_EQ(h.count<actions::release>(), 0) << "never before the app has stopped";
  EXPECT_FALSE(h.machine.can_resign()) << "a second resign changes nothing";

  h.advance(500ms);
  h.feed(events::app_stopped{});
  EXPECT_EQ(h.machine.current(), state::releasing);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.transitions.back().why, reason::released);
  EXPECT_EQ(h.timer(timer_id::wake), h.now + 20s);
  EXPECT_EQ(h.machine.held_back_until(), h.now + 20s);

  // Release announcements do not bring the node back during the cool-down.
  h.advance(1s);
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::idle);

  // Afterwards it competes again.
  h.advance(19s);
  EXPECT_EQ(h.machine.current(), state::acquiring);
  EXPECT_EQ(h.transitions.back().why, reason::retry);
}

TEST(resign, busy_replies_after_the_cooldown_follow_the_holder) {
  machine_harness h(with_cooldown(20s));
  h.become_leader();
  h.feed(events::resign{});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  h.advance(20s);
  ASSERT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::busy{h.now, "b", 9s, 12, true});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.machine.observed_holder(), "b");
}

TEST(resign, shutdown_during_the_stop_still_exits) {
  machine_harness h(with_cooldown(20s));
  h.become_leader();
  h.feed(events::resign{});
  h.feed(events::shutdown{"SIGTERM"});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::stopped);
}

TEST(peer_acquired, a_standby_learns_the_new_leader_and_token) {
  machine_harness h;
  h.feed(events::start{});
  h.feed(events::busy{h.now, "a", 9s, 4, true});
  h.feed(events::peer_acquired{"b", 5});
  EXPECT_EQ(h.machine.observed_holder(), "b");
  EXPECT_EQ(h.machine.token(), 5u);
  EXPECT_EQ(h.machine.current(), state::idle) << "no transition, no attempt";
}

TEST(peer_acquired, a_leader_ignores_announcements) {
  machine_harness h;
  h.become_leader(7);
  h.feed(events::peer_acquired{"b", 9});
  EXPECT_EQ(h.machine.token(), 7u);
  EXPECT_EQ(h.machine.observed_holder(), "");
  EXPECT_EQ(h.machine.current(), state::working);
}

}  // namespace
}  // namespace baton::testing
