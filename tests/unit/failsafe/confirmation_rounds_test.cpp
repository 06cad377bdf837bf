// A leader's rounds of confirmations (docs/safety.md, F3 and F5) over a fake
// clock, as scripts: each step at a time, with the outcome it must have.
// ttl 1000 ms, drift 12 ms; the last renewal was sent at 0, so the store's
// validity ends at 988.
#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/failsafe_leader.hpp"

namespace baton::failsafe {
namespace {

using namespace std::chrono_literals;
using outcome = confirmation_rounds::outcome;

time_point at_ms(long ms) {
  return time_point{} + 1h + milliseconds{ms};
}

const timing rounds_timing{1000ms, 12ms};

struct round_step {
  enum { begin, confirm, refuse, renew } what;
  long at;
  // begin: how many requests it must make; confirm/refuse: the peer, the
  // round (0 = the first begun) and, for confirm, the promise.
  std::size_t requests = 0;
  std::string peer = {};
  std::size_t round = 0;
  long promise = 1000;
  std::optional<outcome> expect = std::nullopt;
  // Tampering with the echo of the request.
  bool wrong_sent_ms = false;
};

struct rounds_case {
  const char* name;
  std::vector<std::string> listed;  // the acknowledged list ("a" is the leader)
  std::vector<round_step> steps;
  long deadline;                     // the deadline afterwards
  std::optional<long> last_counted;  // send time of the last counted round
};

// A case is shown by its name (in ctest's list too), not as bytes.
void PrintTo(const rounds_case& c, std::ostream* os) {
  *os << c.name;
}

class rounds_table : public ::testing::TestWithParam<rounds_case> {};

TEST_P(rounds_table, script) {
  const auto& c = GetParam();
  peer_list list("a");
  list.sent(1, c.listed);
  list.acknowledged(1);
  confirmation_rounds rounds({"a", 7}, rounds_timing, at_ms(988));
  std::vector<std::vector<confirm_request>> begun;
  for (const auto& step : c.steps) {
    SCOPED_TRACE("step at " + std::to_string(step.at));
    switch (step.what) {
      case round_step::begin: {
        auto requests =
            rounds.begin_round(list, "n" + std::to_string(begun.size()), at_ms(step.at));
        EXPECT_EQ(requests.size(), step.requests);
        for (const auto& r : requests) {
          EXPECT_EQ(r.term, (term_id{"a", 7}));
          EXPECT_EQ(r.sent_ms, wire_ms(at_ms(step.at)));
        }
        begun.push_back(std::move(requests));
        break;
      }
      case round_step::confirm:
      case round_step::refuse: {
        ASSERT_LT(step.round, begun.size());
        ASSERT_FALSE(begun[step.round].empty());
        const auto& r = begun[step.round].front();
        const auto sent_ms = r.sent_ms + (step.wrong_sent_ms ? 1 : 0);
        const auto got = step.what == round_step::confirm
                             ? rounds.confirmed(step.peer, r.nonce, sent_ms,
                                                milliseconds{step.promise}, at_ms(step.at))
                             : rounds.refused(step.peer, r.nonce, sent_ms, "this node leads");
        EXPECT_EQ(static_cast<int>(got), static_cast<int>(*step.expect));
        break;
      }
      case round_step::renew:
        rounds.store_renewed(at_ms(step.at));
        break;
    }
  }
  EXPECT_EQ(rounds.deadline(), at_ms(c.deadline));
  EXPECT_EQ(rounds.last_counted(),
            c.last_counted ? std::optional<time_point>(at_ms(*c.last_counted)) : std::nullopt);
}

using S = round_step;

const rounds_case rounds_cases[] = {
    {"every_peer_confirms_in_time",
     {"b", "c"},
     {{.what = S::begin, .at = 300, .requests = 2},
      {.what = S::confirm, .at = 310, .peer = "b", .expect = outcome::counted},
      {.what = S::confirm, .at = 320, .peer = "c", .expect = outcome::round_complete}},
     1288,  // sent 300 + ttl 1000 - drift 12
     300},
    {"one_peer_silent_moves_nothing",
     {"b", "c"},
     {{.what = S::begin, .at = 300, .requests = 2},
      {.what = S::confirm, .at = 310, .peer = "b", .expect = outcome::counted}},
     988,
     std::nullopt},
    {"a_refusal_is_noted_and_the_round_cannot_complete",
     {"b", "c"},
     {{.what = S::begin, .at = 300, .requests = 2},
      {.what = S::refuse, .at = 305, .peer = "c", .expect = outcome::noted},
      {.what = S::confirm, .at = 310, .peer = "b", .expect = outcome::counted}},
     988,
     std::nullopt},
    // The last confirmation at the deadline: the keeper killed the app then.
    {"a_round_completed_at_the_deadline_is_too_late",
     {"b", "c"},
     {{.what = S::begin, .at = 900, .requests = 2},
      {.what = S::confirm, .at = 950, .peer = "b", .expect = outcome::counted},
      {.what = S::confirm, .at = 988, .peer = "c", .expect = outcome::too_late},
      {.what = S::begin, .at = 990, .requests = 0},
      {.what = S::confirm, .at = 991, .peer = "c", .expect = outcome::term_over}},
     988,
     std::nullopt},
    // Over is for good: a renewal answer after it brings nothing back.
    {"no_resurrection_after_the_deadline",
     {"b"},
     {{.what = S::begin, .at = 989, .requests = 0}, {.what = S::renew, .at = 1500}},
     988,
     std::nullopt},
    // `renew`'s time is the validity the renewal gives.
    {"a_renewal_moves_the_deadline",
     {"b"},
     {{.what = S::renew, .at = 1320},
      {.what = S::begin, .at = 1300, .requests = 1},
      {.what = S::confirm, .at = 1310, .peer = "b", .expect = outcome::round_complete}},
     2288,  // 1300 + 988
     1300},
    // A confirmation of the round before (a delayed or replayed answer).
    {"an_answer_to_an_earlier_round_does_not_count",
     {"b"},
     {{.what = S::begin, .at = 300, .requests = 1},
      {.what = S::begin, .at = 600, .requests = 1},
      {.what = S::confirm, .at = 610, .peer = "b", .expect = outcome::not_this_round}},
     988,
     std::nullopt},
    {"a_wrong_send_time_does_not_count",
     {"b"},
     {{.what = S::begin, .at = 300, .requests = 1},
      {.what = S::confirm,
       .at = 310,
       .peer = "b",
       .expect = outcome::not_this_round,
       .wrong_sent_ms = true}},
     988,
     std::nullopt},
    {"a_node_not_asked_does_not_count",
     {"b", "c"},
     {{.what = S::begin, .at = 300, .requests = 2},
      {.what = S::confirm, .at = 310, .peer = "d", .expect = outcome::not_asked}},
     988,
     std::nullopt},
    {"the_same_peer_counts_once",
     {"b", "c"},
     {{.what = S::begin, .at = 300, .requests = 2},
      {.what = S::confirm, .at = 310, .peer = "b", .expect = outcome::counted},
      {.what = S::confirm, .at = 311, .peer = "b", .expect = outcome::already_counted}},
     988,
     std::nullopt},
    // A peer with a shorter ttl would end its promise before the deadline.
    {"a_short_promise_does_not_count",
     {"b"},
     {{.what = S::begin, .at = 300, .requests = 1},
      {.what = S::confirm,
       .at = 310,
       .peer = "b",
       .promise = 999,
       .expect = outcome::short_promise}},
     988,
     std::nullopt},
    {"nobody_listed_no_round",
     {"a"},
     {{.what = S::begin, .at = 300, .requests = 0}},
     988,
     std::nullopt},
    // The deadline never goes back, also when a round counted late in the
    // store's validity gives less than a renewal did.
    {"the_deadline_never_goes_back",
     {"b"},
     {{.what = S::renew, .at = 1900},
      {.what = S::renew, .at = 1200},
      {.what = S::begin, .at = 100, .requests = 1},
      {.what = S::confirm, .at = 110, .peer = "b", .expect = outcome::round_complete}},
     1900,
     100},
    {"rounds_one_after_another",
     {"b"},
     {{.what = S::begin, .at = 300, .requests = 1},
      {.what = S::confirm, .at = 301, .peer = "b", .expect = outcome::round_complete},
      {.what = S::begin, .at = 633, .requests = 1},
      {.what = S::confirm, .at = 634, .peer = "b", .round = 1, .expect = outcome::round_complete},
      {.what = S::begin, .at = 966, .requests = 1},
      {.what = S::confirm, .at = 967, .peer = "b", .round = 2, .expect = outcome::round_complete}},
     1954,
     966},
};

INSTANTIATE_TEST_SUITE_P(confirmation_rounds, rounds_table, ::testing::ValuesIn(rounds_cases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(confirmation_rounds, reports_since_when_and_how_many_confirmed) {
  peer_list list("a");
  list.sent(1, {"b", "c", "d"});
  confirmation_rounds rounds({"a", 7}, rounds_timing, at_ms(988));
  EXPECT_FALSE(rounds.on_confirmations_since());
  const auto first = rounds.begin_round(list, "n0", at_ms(300));
  ASSERT_EQ(first.size(), 3u);
  for (const auto& r : first) rounds.confirmed(r.peer, r.nonce, r.sent_ms, 1000ms, at_ms(301));
  const auto second = rounds.begin_round(list, "n1", at_ms(633));
  rounds.confirmed("b", "n1", second.front().sent_ms, 1000ms, at_ms(634));
  rounds.refused("c", "n1", second.front().sent_ms, "this node leads");
  EXPECT_EQ(rounds.on_confirmations_since(), at_ms(300));
  EXPECT_EQ(rounds.last_counted(), at_ms(300));
  EXPECT_EQ(rounds.round_confirmed(), 1u);
  EXPECT_EQ(rounds.round_asked(), 3u);
  EXPECT_EQ(rounds.last_refusal(), "c: this node leads");
}

}  // namespace
}  // namespace baton::failsafe
