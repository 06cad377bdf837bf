// events::standing: a node that may not lead (drained, never_lead) makes no
// attempt, looks instead (registering and learning who leads), ignores
// release announcements, gives back a lease it won while its attempt was on
// the way, and competes at once when allowed again.
#include "machine_harness.hpp"

namespace baton::testing {
namespace {

TEST(standing, a_node_that_may_not_lead_looks_instead_of_acquiring) {
  machine_harness h;
  h.feed(events::standing{false});
  EXPECT_FALSE(h.machine.may_lead());
  h.feed(events::start{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.count<actions::acquire>(), 0);
  EXPECT_EQ(h.count<actions::look>(), 1);
  ASSERT_TRUE(h.timer(timer_id::wake));
  // Every wake-up looks again, at most half a ttl apart (a registration
  // lives two ttls on every kind).
  const auto first = h.now;
  h.advance(10 * default_timing().ttl);
  EXPECT_EQ(h.count<actions::acquire>(), 0);
  EXPECT_GE(h.count<actions::look>(), 16) << "at most 1.2 half-ttls apart";
  EXPECT_LE(*h.timer(timer_id::wake) - h.now, default_timing().ttl / 2 * 12 / 10);
  EXPECT_GT(h.now, first);
  // A release announcement wakes nobody who may not lead.
  h.feed(events::peer_released{});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.count<actions::acquire>(), 0);
}

TEST(standing, what_a_look_finds_names_the_leader) {
  machine_harness h;
  h.feed(events::standing{false});
  h.feed(events::start{});
  h.feed(events::peer_acquired{"node-b", 41});
  EXPECT_EQ(h.machine.known_leader("node-a", h.now), "node-b");
  EXPECT_EQ(h.machine.token(), 41u);
  h.feed(events::peer_acquired{"", 0});
  EXPECT_EQ(h.machine.known_leader("node-a", h.now), "") << "a free lease is nobody's";
}

TEST(standing, allowed_again_it_competes_at_once) {
  machine_harness h;
  h.feed(events::standing{false});
  h.feed(events::start{});
  h.feed(events::standing{false});
  EXPECT_EQ(h.transitions.size(), 0u) << "the same standing changes nothing";
  h.feed(events::standing{true});
  EXPECT_TRUE(h.machine.may_lead());
  EXPECT_EQ(h.machine.current(), state::acquiring);
  EXPECT_EQ(h.count<actions::acquire>(), 1);
  EXPECT_FALSE(h.timer(timer_id::wake)) << "the look's timer is cancelled";
}

TEST(standing, a_lease_won_while_drained_is_given_back_unused) {
  machine_harness h;
  h.feed(events::start{});
  ASSERT_EQ(h.machine.current(), state::acquiring);
  h.feed(events::standing{false});
  EXPECT_EQ(h.machine.current(), state::acquiring) << "the attempt is on its way";
  h.feed(events::acquired{h.now, 9});
  EXPECT_EQ(h.machine.current(), state::releasing);
  EXPECT_EQ(h.count<actions::start_app>(), 0);
  EXPECT_EQ(h.count<actions::release>(), 1);
  h.feed(events::release_done{});
  EXPECT_EQ(h.machine.current(), state::idle);
  h.advance(default_timing().ttl * 3);
  EXPECT_EQ(h.count<actions::acquire>(), 1) << "no attempt after the first";
  EXPECT_GE(h.count<actions::look>(), 1);
}

TEST(standing, undrained_in_its_cool_down_it_waits_for_the_end_of_it) {
  machine_harness h(with_cooldown(20s));
  h.become_leader();
  h.feed(events::standing{false});
  h.feed(events::resign{"node-b", default_timing().ttl});
  h.feed(events::app_stopped{});
  h.feed(events::release_done{});
  ASSERT_EQ(h.machine.current(), state::idle);
  const auto cool_until = h.machine.held_back_until();
  ASSERT_GT(cool_until, h.now);
  h.advance(5s);
  const int acquires = h.count<actions::acquire>();
  h.feed(events::standing{true});
  EXPECT_EQ(h.machine.current(), state::idle);
  EXPECT_EQ(h.timer(timer_id::wake), cool_until);
  h.advance_to(cool_until - 1ms);
  EXPECT_EQ(h.count<actions::acquire>(), acquires) << "nothing before the cool-down ends";
  h.advance_to(cool_until);
  EXPECT_EQ(h.count<actions::acquire>(), acquires + 1);
}

TEST(standing, a_leader_told_it_may_not_lead_keeps_leading_until_it_hands_over) {
  // The daemon steps a drained leader down (a switchover to its
  // successor); the event alone changes nothing of the term.
  machine_harness h;
  h.become_leader();
  h.feed(events::standing{false});
  EXPECT_EQ(h.machine.current(), state::working);
  EXPECT_TRUE(h.machine.can_resign());
  h.feed(events::resign{"node-b", default_timing().ttl});
  EXPECT_EQ(h.machine.current(), state::pausing);
}

}  // namespace
}  // namespace baton::testing
