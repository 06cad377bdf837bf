// A would-be taker's clearance of a failsafe hold (docs/safety.md, F6), as
// scripts over a fake clock: the taker's own peer state started at 0 with
// ttl 1000 ms; the hold is leader "a"'s term 7.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "baton/failsafe_taker.hpp"

namespace baton::failsafe {
namespace {

using namespace std::chrono_literals;

time_point when(long ms) {
  return time_point{} + 1h + milliseconds{ms};
}

struct taker_step {
  enum { next, cleared, held, promised } what;
  long at;
  std::string node = {};  // cleared/held: who answered
  long ms = 0;            // held: time left
  // next: what it must say: "take N", "ask x,y", "wait T"
  std::string expect = {};
};

struct taker_case {
  const char* name;
  std::string self;
  std::vector<std::string> listed;
  std::vector<taker_step> steps;
};

std::string describe_step(const clearance::step& s) {
  if (const auto* t = std::get_if<clearance::take>(&s))
    return "take " + std::to_string(t->cleared_token);
  if (const auto* a = std::get_if<clearance::ask>(&s)) {
    std::string out = "ask ";
    for (const auto& w : a->whom) out += (out.size() > 4 ? "," : "") + w;
    return out;
  }
  const auto& w = std::get<clearance::wait>(s);
  return "wait " +
         std::to_string(std::chrono::duration_cast<milliseconds>(w.until - when(0)).count());
}

// A case is shown by its name (in ctest's list too), not as bytes.
void PrintTo(const taker_case& c, std::ostream* os) {
  *os << c.name;
}

class clearance_table : public ::testing::TestWithParam<taker_case> {};

TEST_P(clearance_table, script) {
  const auto& c = GetParam();
  peer_promises own(c.self, {1000ms, 12ms}, when(0));
  clearance check(c.self, {{"a", 7}, c.listed});
  for (const auto& step : c.steps) {
    SCOPED_TRACE("step at " + std::to_string(step.at));
    switch (step.what) {
      case taker_step::next:
        EXPECT_EQ(describe_step(check.next(own, when(step.at))), step.expect);
        break;
      case taker_step::cleared:
        check.cleared_by(step.node);
        break;
      case taker_step::held:
        check.held_by(step.node, milliseconds{step.ms}, when(step.at));
        break;
      case taker_step::promised:
        ASSERT_TRUE(own.on_confirm({"a", 7}, 1, when(step.at), false).confirmed);
        break;
    }
  }
}

using T = taker_step;

const taker_case taker_cases[] = {
    // F7 first: a process that started less than a ttl ago takes nothing.
    {"waits_for_its_own_start", "j", {"b", "c"}, {{T::next, 100, "", 0, "wait 1000"}}},
    {"an_unlisted_taker_asks_the_peers_and_the_leader",
     "j",
     {"b", "c"},
     {{T::next, 1100, "", 0, "ask b,c,a"}}},
    {"one_cleared_answer_is_enough",
     "j",
     {"b", "c"},
     {{T::next, 1100, "", 0, "ask b,c,a"},
      {T::cleared, 1110, "c"},
      {T::next, 1111, "", 0, "take 7"}}},
    {"the_leader_may_clear_its_own_term",
     "j",
     {"b"},
     {{T::cleared, 1110, "a"}, {T::next, 1111, "", 0, "take 7"}}},
    {"an_answer_from_a_node_not_listed_counts_for_nothing",
     "j",
     {"b"},
     {{T::cleared, 1110, "x"}, {T::next, 1111, "", 0, "ask b,a"}}},
    {"held_answers_make_it_wait_for_the_earliest",
     "j",
     {"b", "c"},
     {{T::held, 1110, "b", 500},
      {T::held, 1110, "c", 300},
      {T::next, 1111, "", 0, "wait 1410"},
      {T::next, 1410, "", 0, "ask b,c,a"}}},
    // A listed taker is the peer it would ask: no message.
    {"a_listed_taker_clears_from_its_own_state",
     "b",
     {"b", "c"},
     {{T::next, 1100, "", 0, "take 7"}}},
    {"a_listed_taker_with_a_promise_waits_for_its_end",
     "b",
     {"b", "c"},
     {{T::promised, 1200}, {T::next, 1300, "", 0, "wait 2200"}, {T::next, 2200, "", 0, "take 7"}}},
    // Its leader could not run on confirmations with nobody listed (F2).
    {"nobody_listed_nothing_to_clear", "j", {}, {{T::next, 1100, "", 0, "take 7"}}},
    {"the_leader_listed_in_its_own_record_does_not_count",
     "j",
     {"a"},
     {{T::next, 1100, "", 0, "take 7"}}},
    // The old leader's new process clears its old term like anyone else.
    {"the_old_leader_asks_its_peers", "a", {"b"}, {{T::next, 1100, "", 0, "ask b"}}},
    {"it_cannot_clear_for_itself",
     "j",
     {"b"},
     {{T::cleared, 1100, "j"}, {T::next, 1100, "", 0, "ask b,a"}}},
};

INSTANTIATE_TEST_SUITE_P(clearance, clearance_table, ::testing::ValuesIn(taker_cases),
                         [](const auto& info) { return std::string(info.param.name); });

// F6: a listed taker that clears gives the term up in its own state, as it
// would for another taker: it refuses that term's next confirm request.
TEST(clearance, a_listed_taker_gives_the_term_up) {
  peer_promises own("b", {1000ms, 12ms}, when(0));
  clearance check("b", {{"a", 7}, {"b"}});
  ASSERT_TRUE(std::holds_alternative<clearance::take>(check.next(own, when(1100))));
  EXPECT_EQ(own.given_up_through(), 7u);
  EXPECT_FALSE(own.on_confirm({"a", 7}, 5, when(1101), false).confirmed);
}

}  // namespace
}  // namespace baton::failsafe
