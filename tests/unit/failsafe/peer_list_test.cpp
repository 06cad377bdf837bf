// The leader's list of peers: every list the store's record may hold
// (docs/safety.md, F1 and F2), as a table of writes and acknowledgements.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "baton/failsafe_leader.hpp"

namespace baton::failsafe {
namespace {

using names = std::vector<std::string>;

// One step: a write sent with its list, or the store's success for one.
struct list_step {
  enum { send, ack } what;
  std::uint64_t seq;
  names list = {};
};

struct list_case {
  const char* name;
  std::vector<list_step> steps;
  names peers;   // whom a round asks afterwards
  bool may_run;  // whether the leader may run on confirmations
};

// A case is shown by its name (in ctest's list too), not as bytes.
void PrintTo(const list_case& c, std::ostream* os) {
  *os << c.name;
}

class peer_list_table : public ::testing::TestWithParam<list_case> {};

TEST_P(peer_list_table, asks_every_list_the_record_may_hold) {
  const auto& c = GetParam();
  peer_list list("a");
  for (const auto& step : c.steps) {
    if (step.what == list_step::send) {
      list.sent(step.seq, step.list);
    } else {
      list.acknowledged(step.seq);
    }
  }
  EXPECT_EQ(list.peers(), c.peers);
  EXPECT_EQ(list.may_run_on_confirmations(), c.may_run);
}

const list_case list_cases[] = {
    {"nothing_sent", {}, {}, false},
    {"one_write_in_flight", {{list_step::send, 1, {"b", "c"}}}, {"b", "c"}, true},
    {"self_and_repeats_left_out", {{list_step::send, 1, {"c", "a", "b", "c"}}}, {"b", "c"}, true},
    {"acknowledged", {{list_step::send, 1, {"b"}}, {list_step::ack, 1}}, {"b"}, true},
    // The renewal carrying d may have landed though no answer came: ask d.
    {"unanswered_write_still_counts",
     {{list_step::send, 1, {"b"}}, {list_step::ack, 1}, {list_step::send, 2, {"b", "d"}}},
     {"b", "d"},
     true},
    // Acknowledged 2: the record holds 2's list or a later one, never 1's.
    {"acknowledgement_drops_older_lists",
     {{list_step::send, 1, {"b", "c"}}, {list_step::send, 2, {"b"}}, {list_step::ack, 2}},
     {"b"},
     true},
    {"acknowledgement_keeps_later_lists",
     {{list_step::send, 1, {"b"}},
      {list_step::send, 2, {"c"}},
      {list_step::send, 3, {"d"}},
      {list_step::ack, 2}},
     {"c", "d"},
     true},
    // An old answer after a newer one cannot bring an older list back.
    {"late_acknowledgement_of_an_older_write",
     {{list_step::send, 1, {"b"}},
      {list_step::send, 2, {"c"}},
      {list_step::ack, 2},
      {list_step::ack, 1}},
     {"c"},
     true},
    // Many writes of one list during an outage: one run, acknowledged in its middle.
    {"a_run_of_equal_lists",
     {{list_step::send, 1, {"b"}},
      {list_step::send, 2, {"b"}},
      {list_step::send, 3, {"b"}},
      {list_step::ack, 2}},
     {"b"},
     true},
    // The record may hold an empty list: a taker would clear without asking.
    {"an_empty_list_the_record_may_hold_forbids_rounds",
     {{list_step::send, 1, {"b"}}, {list_step::send, 2, {"a"}}},
     {"b"},
     false},
    {"an_empty_list_acknowledged_away",
     {{list_step::send, 1, {}}, {list_step::send, 2, {"b"}}, {list_step::ack, 2}},
     {"b"},
     true},
    {"only_self_listed", {{list_step::send, 1, {"a"}}, {list_step::ack, 1}}, {}, false},
    // Numbers rise within a term; one that does not is kept, not merged away.
    {"a_number_that_does_not_rise_is_kept_apart",
     {{list_step::send, 5, {"b"}}, {list_step::send, 3, {"c"}}, {list_step::ack, 4}},
     {"b"},
     true},
};

INSTANTIATE_TEST_SUITE_P(peer_list, peer_list_table, ::testing::ValuesIn(list_cases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace baton::failsafe
