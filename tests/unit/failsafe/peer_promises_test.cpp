// A peer's promises (docs/safety.md, F4, F6 and F7) as scripts over a fake
// clock: node "b", started at 0, ttl 1000 ms.
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/failsafe_peer.hpp"

namespace baton::failsafe {
namespace {

using namespace std::chrono_literals;

time_point at(long ms) {
  return time_point{} + 1h + milliseconds{ms};
}

struct promise_step {
  enum { confirm, clear, saw } what;
  long at;
  term_id term;
  std::uint64_t sent_ms = 0;
  bool self_leads = false;
  std::optional<long> own_app_until = std::nullopt;
  // confirm: whether confirmed; clear: whether cleared.
  bool yes = false;
  // refused or held: a piece of the reason; held: the time left.
  std::string reason_has = "";
  long remaining = 0;
};

struct promise_case {
  const char* name;
  std::vector<promise_step> steps;
  long may_take_from;  // afterwards
  std::uint64_t given_up_through;
};

// A case is shown by its name (in ctest's list too), not as bytes.
void PrintTo(const promise_case& c, std::ostream* os) {
  *os << c.name;
}

class promises_table : public ::testing::TestWithParam<promise_case> {};

TEST_P(promises_table, script) {
  const auto& c = GetParam();
  peer_promises peer("b", {1000ms, 12ms}, at(0));
  for (const auto& step : c.steps) {
    SCOPED_TRACE("step at " + std::to_string(step.at));
    switch (step.what) {
      case promise_step::confirm: {
        const auto a = peer.on_confirm(step.term, step.sent_ms, at(step.at), step.self_leads);
        EXPECT_EQ(a.confirmed, step.yes) << a.reason;
        if (a.confirmed) {
          EXPECT_EQ(a.promise, 1000ms);
        } else {
          EXPECT_NE(a.reason.find(step.reason_has), std::string::npos) << a.reason;
        }
        break;
      }
      case promise_step::clear: {
        const auto own =
            step.own_app_until ? std::optional<time_point>(at(*step.own_app_until)) : std::nullopt;
        const auto a = peer.on_clear(step.term, at(step.at), own);
        EXPECT_EQ(a.cleared, step.yes) << a.reason;
        if (!a.cleared) {
          EXPECT_EQ(a.remaining, milliseconds{step.remaining});
          EXPECT_NE(a.reason.find(step.reason_has), std::string::npos) << a.reason;
        }
        break;
      }
      case promise_step::saw:
        peer.saw_term(step.term);
        break;
    }
  }
  EXPECT_EQ(peer.may_take_from(), at(c.may_take_from));
  EXPECT_EQ(peer.given_up_through(), c.given_up_through);
}

using P = promise_step;
const term_id a7{"a", 7};

const promise_case promise_cases[] = {
    // F7: one ttl from its start, whatever it did before it started.
    {"a_fresh_process_waits_one_ttl", {}, 1000, 0},
    {"a_confirmation_promises_one_ttl_from_its_receipt",
     {{P::confirm, 1500, a7, 40, false, {}, true}},
     2500,
     0},
    {"promises_only_lengthen",
     {{P::confirm, 1500, a7, 40, false, {}, true}, {P::confirm, 1800, a7, 41, false, {}, true}},
     2800,
     0},
    // F7: a restarted peer confirms at once (it only binds itself more).
    {"confirms_during_its_start_wait", {{P::confirm, 10, a7, 40, false, {}, true}}, 1010, 0},
    {"replayed_request_refused",
     {{P::confirm, 1500, a7, 40, false, {}, true},
      {P::confirm, 1600, a7, 40, false, {}, false, "replayed"}},
     2500,
     0},
    {"overtaken_request_refused",
     {{P::confirm, 1500, a7, 41, false, {}, true},
      {P::confirm, 1600, a7, 40, false, {}, false, "replayed or overtaken"}},
     2500,
     0},
    {"a_leader_does_not_confirm_others",
     {{P::confirm, 1500, a7, 40, true, {}, false, "leads"}},
     1000,
     0},
    {"nobody_confirms_itself",
     {{P::confirm, 1500, {"b", 7}, 40, false, {}, false, "its own term"}},
     1000,
     0},
    {"an_older_term_refused",
     {{P::saw, 0, {"c", 8}},
      {P::confirm, 1500, a7, 40, false, {}, false, "newer term: c's term 8"}},
     1000,
     0},
    {"another_leader_for_the_same_token_refused",
     {{P::saw, 0, {"c", 7}}, {P::confirm, 1500, a7, 40, false, {}, false, "the store named c"}},
     1000,
     0},
    {"a_newer_term_confirmed",
     {{P::saw, 0, {"c", 6}}, {P::confirm, 1500, a7, 40, false, {}, true}},
     2500,
     0},
    // F6: held while it keeps a promise; the time left is the promise's.
    {"held_while_it_keeps_a_promise",
     {{P::confirm, 1500, a7, 40, false, {}, true},
      {P::clear, 2000, a7, 0, false, {}, false, "promised a's term 7", 500}},
     2500,
     0},
    {"held_within_a_ttl_of_its_start",
     {{P::clear, 400, a7, 0, false, {}, false, "started less than a ttl ago", 600}},
     1000,
     0},
    {"held_while_its_own_app_may_run",
     {{P::clear, 1500, a7, 0, false, 1900, false, "own app", 400}},
     1000,
     0},
    // F6: cleared once the promise ended; the term is given up for good.
    {"cleared_after_the_promise_and_never_confirmed_again",
     {{P::confirm, 1500, a7, 40, false, {}, true},
      {P::clear, 2500, a7, 0, false, {}, true},
      {P::confirm, 2600, a7, 99, false, {}, false, "gave up terms up to 7"}},
     2500,
     7},
    {"giving_up_covers_older_terms",
     {{P::clear, 1500, {"a", 9}, 0, false, {}, true},
      {P::confirm, 1600, {"c", 8}, 1, false, {}, false, "gave up"},
      {P::confirm, 1700, {"c", 10}, 1, false, {}, true}},
     2700,
     9},
    // A promise to a newer term holds a clear of an older one back too.
    {"any_promise_holds_a_clear_back",
     {{P::confirm, 1500, {"c", 9}, 1, false, {}, true},
      {P::clear, 1600, a7, 0, false, {}, false, "promised c's term 9", 900}},
     2500,
     0},
};

INSTANTIATE_TEST_SUITE_P(peer_promises, promises_table, ::testing::ValuesIn(promise_cases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(peer_promises, keeps_one_promise_until_it_ends) {
  peer_promises peer("b", {1000ms, 12ms}, at(0));
  EXPECT_FALSE(peer.kept(at(1500)));
  ASSERT_TRUE(peer.on_confirm(a7, 40, at(1500), false).confirmed);
  const auto kept = peer.kept(at(2499));
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->term, a7);
  EXPECT_EQ(kept->until, at(2500));
  EXPECT_FALSE(peer.kept(at(2500)));
  EXPECT_FALSE(peer.may_take(at(2499)));
  EXPECT_TRUE(peer.may_take(at(2500)));
}

}  // namespace
}  // namespace baton::failsafe
