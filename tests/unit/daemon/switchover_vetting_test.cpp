// Whether a leader hands over to the node a switchover names
// (src/daemon/switchover_vetting.hpp): one table of what the leader knows and
// was asked, and the verdict, its reason's key words and when the target
// could take the lease.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "daemon/switchover_vetting.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

constexpr time_point now{100s};

// Candidates as a store lists them: live_for 60 s, last attempt 1 s ago, no
// cool-down, unless a row says otherwise.
candidate_info cand(std::string node, int priority, milliseconds attempt_ago = 1s,
                    milliseconds cooling = 0ms) {
  return {std::move(node), priority, 60s, attempt_ago, cooling};
}

struct row {
  const char* name;
  std::vector<candidate_info> list;
  std::string to = "node-b";
  int own_priority = 0;
  bool force = false;
  milliseconds list_age = 1s;  ///< how long before `now` the list was made
  switchover_decision decision = switchover_decision::accept;
  std::vector<std::string> says;  ///< pieces the reason must hold
  std::optional<milliseconds> ready_in;
};

switchover_question question(const row& r) {
  switchover_question q;
  q.to = r.to;
  q.self = "node-a";
  q.own_priority = r.own_priority;
  q.now = now;
  q.list_max_age = 7s;     // two renew intervals of a 10 s ttl, and a margin
  q.attempt_gap = 15s;     // ttl 10 s, its stagger, a renew interval
  q.preempt_delay = 30s;
  q.force = r.force;
  return q;
}

const std::vector<row>& table() {
  static const std::vector<row> rows = {
      {.name = "a live standby is accepted",
       .list = {cand("node-a", 0, 0ms), cand("node-b", 0, 9s)}},
      {.name = "the leader itself is refused",
       .list = {cand("node-a", 0)},
       .to = "node-a",
       .decision = switchover_decision::refuse,
       .says = {"'node-a' is this node"}},
      {.name = "a list too old to tell is refused",
       .list = {cand("node-a", 0), cand("node-b", 0)},
       .list_age = 8s,
       .decision = switchover_decision::refuse,
       .says = {"out of date", "cannot tell whether 'node-b'"}},
      {.name = "a node not listed is refused, naming the live ones",
       .list = {cand("node-a", 0), cand("node-c", 0)},
       .to = "node-z",
       .decision = switchover_decision::refuse,
       .says = {"'node-z' is not a live candidate", "(live candidates: 'node-c')",
                "without a leader"}},
      {.name = "a target cooling down is refused, with when it ends",
       .list = {cand("node-a", 0), cand("node-b", 0, 2s, 8s)},
       .decision = switchover_decision::refuse,
       .says = {"'node-b' is cooling down", "for another 7.0s", "hand over to it in 7.0s"},
       .ready_in = 7s},
      {.name = "a cool-down that ended since the listing is no reason",
       .list = {cand("node-a", 0), cand("node-b", 0, 2s, 800ms)}},
      {.name = "a target silent for longer than a live candidate is refused",
       .list = {cand("node-a", 0), cand("node-b", 0, 14500ms)},
       .decision = switchover_decision::refuse,
       .says = {"'node-b' made no acquire attempt for 15.5s", "at least every 15.0s",
                "frozen, stopped or cut off"}},
      {.name = "a silent target and a cooling one: the cool-down is the reason",
       .list = {cand("node-a", 0), cand("node-b", 0, 20s, 5s)},
       .decision = switchover_decision::refuse,
       .says = {"cooling down", "in 4.0s"},
       .ready_in = 4s},
      {.name = "a store that cannot tell the last attempt is trusted",
       .list = {cand("node-a", 0, -1ms), cand("node-b", 0, -1ms)}},
      {.name = "an outranked target is refused, naming who outranks it",
       .list = {cand("node-a", 0), cand("node-b", 1), cand("node-c", 5), cand("node-d", 3)},
       .decision = switchover_decision::refuse,
       .says = {"'node-c' (priority 5) outranks 'node-b' (priority 1)",
                "lease.preempt_delay (30s)", "--force"}},
      {.name = "with --force it is accepted with a warning",
       .list = {cand("node-a", 0), cand("node-b", 1), cand("node-c", 5)},
       .force = true,
       .decision = switchover_decision::warn,
       .says = {"'node-c' (priority 5) outranks 'node-b'", "will hand the lease back",
                "lease.preempt_delay (30s)"}},
      {.name = "the leader of a higher priority takes it back too",
       .list = {cand("node-a", 0), cand("node-b", 0)},
       .own_priority = 4,
       .decision = switchover_decision::refuse,
       .says = {"'node-a' (priority 4) outranks 'node-b' (priority 0)"}},
      {.name = "... even when the list does not show the leader",
       .list = {cand("node-b", 0)},
       .own_priority = 4,
       .decision = switchover_decision::refuse,
       .says = {"'node-a' (priority 4)"}},
      {.name = "an equal priority does not take it back",
       .list = {cand("node-a", 2), cand("node-b", 2), cand("node-c", 2)},
       .own_priority = 2},
      {.name = "a silent candidate of a higher priority takes nothing back",
       .list = {cand("node-a", 0), cand("node-b", 0), cand("node-c", 9, 16s)}},
      {.name = "a cooling candidate of a higher priority comes back and takes it",
       .list = {cand("node-a", 0), cand("node-b", 0), cand("node-c", 9, 2s, 5s)},
       .decision = switchover_decision::refuse,
       .says = {"'node-c' (priority 9)"}},
      {.name = "among equals outranking it, the smallest id is named",
       .list = {cand("node-a", 0), cand("node-b", 0), cand("node-e", 7), cand("node-d", 7)},
       .decision = switchover_decision::refuse,
       .says = {"'node-d' (priority 7)"}},
  };
  return rows;
}

TEST(vet_switchover, table) {
  for (const auto& r : table()) {
    SCOPED_TRACE(r.name);
    candidate_snapshot known;
    known.list = r.list;
    known.at = now - r.list_age;
    const auto v = vet_switchover(question(r), known);
    EXPECT_EQ(v.decision, r.decision) << v.why;
    if (r.decision == switchover_decision::accept) EXPECT_EQ(v.why, "");
    for (const auto& piece : r.says) EXPECT_NE(v.why.find(piece), std::string::npos) << v.why;
    EXPECT_EQ(v.ready_in, r.ready_in) << v.why;
  }
}

TEST(vet_switchover, a_list_never_made_says_why_the_store_did_not_answer) {
  candidate_snapshot never;
  never.error = "connect 127.0.0.1:6390: Connection refused";
  const auto v = vet_switchover(question({.name = "", .list = {}}), never);
  EXPECT_EQ(v.decision, switchover_decision::refuse);
  EXPECT_NE(v.why.find("not known yet (connect 127.0.0.1:6390"), std::string::npos) << v.why;
}

TEST(vet_switchover, a_node_id_with_control_characters_is_printed_safely) {
  candidate_snapshot known;
  known.list = {cand("node-a", 0)};
  known.at = now;
  const auto v = vet_switchover(question({.name = "", .list = {}, .to = "evil\n\x1b[2J"}), known);
  EXPECT_EQ(v.decision, switchover_decision::refuse);
  EXPECT_EQ(v.why.find('\n'), std::string::npos) << v.why;
  EXPECT_EQ(v.why.find('\x1b'), std::string::npos) << v.why;
}

}  // namespace
}  // namespace baton
