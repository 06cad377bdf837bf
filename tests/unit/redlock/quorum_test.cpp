// The quorum combiner (quorum.hpp): when a round is settled, which token a
// grant takes, and what a refused round answers.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "redlock/quorum.hpp"

namespace baton::redlock_detail {
namespace {

using kind = master_answer::kind;
using std::chrono::microseconds;

master_answer granted(std::uint64_t counter, bool was_free = true) {
  master_answer a;
  a.what = kind::granted;
  a.counter = counter;
  a.was_free = was_free;
  return a;
}

master_answer held(std::string holder, std::uint64_t token, long free_in_us) {
  master_answer a;
  a.what = kind::held;
  a.holder = std::move(holder);
  a.counter = token;
  a.free_in = microseconds(free_in_us);
  return a;
}

master_answer held_back(long free_in_us) {
  master_answer a;
  a.what = kind::held_back;
  a.free_in = microseconds(free_in_us);
  return a;
}

master_answer failed() { return {}; }

TEST(quorum, majority_of_one_to_seven) {
  const std::size_t expected[] = {1, 2, 2, 3, 3, 4, 4};
  for (std::size_t n = 1; n <= 7; ++n) EXPECT_EQ(majority_of(n), expected[n - 1]) << n;
}

TEST(quorum, a_tally_is_settled_by_the_first_majority_either_way) {
  quorum_tally t(5);
  EXPECT_TRUE(t.succeeded(0));
  EXPECT_TRUE(t.failed(1));
  EXPECT_TRUE(t.succeeded(2));
  EXPECT_EQ(t.current(), verdict::open);
  EXPECT_TRUE(t.succeeded(4));
  EXPECT_EQ(t.current(), verdict::reached);  // 3 of 5, master 3 never asked for

  quorum_tally u(5);
  u.failed(0);
  u.failed(1);
  EXPECT_EQ(u.current(), verdict::open);  // 3 could still succeed
  u.failed(4);
  EXPECT_EQ(u.current(), verdict::impossible);
}

TEST(quorum, each_master_counts_once) {
  quorum_tally t(3);
  EXPECT_TRUE(t.succeeded(1));
  EXPECT_FALSE(t.succeeded(1));
  EXPECT_FALSE(t.failed(1));
  EXPECT_FALSE(t.succeeded(7));
  EXPECT_EQ(t.successes(), 1u);
  EXPECT_EQ(t.failures(), 0u);
}

TEST(quorum, the_token_is_one_more_than_the_largest_granting_counter) {
  acquire_round r(3);
  r.record(0, granted(100));
  EXPECT_EQ(r.current(), verdict::open);
  r.record(2, granted(7, false));
  EXPECT_EQ(r.current(), verdict::reached);
  EXPECT_EQ(r.token(), 101u);
  EXPECT_EQ(r.granted(), (std::vector<std::size_t>{0, 2}));
  EXPECT_TRUE(r.granted_at(2));
  EXPECT_FALSE(r.granted_at(1));
  EXPECT_TRUE(r.new_term());
}

TEST(quorum, a_reacquire_of_our_own_lease_is_not_a_new_term) {
  acquire_round r(3);
  r.record(0, granted(5, false));
  r.record(1, granted(5, false));
  EXPECT_FALSE(r.new_term());
}

TEST(quorum, a_refusal_names_the_holder_most_masters_name_with_its_token) {
  acquire_round r(5);
  r.record(0, held("b", 41, 2'000'000));
  r.record(1, held("b", 41, 2'100'000));
  r.record(2, held("c", 900, 50'000));  // a stale key of another node
  EXPECT_EQ(r.current(), verdict::impossible);
  const auto a = r.refusal();
  EXPECT_EQ(a.outcome, acquire_outcome::held);
  EXPECT_EQ(a.holder, "b");
  EXPECT_EQ(a.token, 41u);
  // Free once a majority (3 of 5) could grant: the 3rd smallest of
  // {2.0 s, 2.1 s, 0.05 s, never, never}.
  EXPECT_EQ(a.free_in, microseconds(2'100'000));
  EXPECT_EQ(a.remaining, milliseconds(2100));
}

// A round settled by its first answers can see a tie: the leader on one
// master, and on another a standby's grant of a free master that it gives
// back at once, or a master taken back after a restart, whose counter was
// lifted to its clock. A tie is settled by the term this node knows of, and
// otherwise leaves the token unknown: never a counter nobody held as a token.
TEST(quorum, a_refusal_breaks_ties_with_the_known_term_and_never_guesses_a_token) {
  constexpr std::uint64_t lifted = 1'795'706'329'521'994;
  struct row {
    const char* what;
    std::vector<master_answer> answers;
    std::optional<known_term> known;
    std::string holder;
    std::uint64_t token;
  };
  const std::vector<row> rows = {
      {"two holders, one master each: the known one",
       {held("node-2", lifted, 1'000'000), held("node-3", 2, 1'900'000), failed()},
       known_term{"node-3", 2}, "node-3", 2},
      {"one holder, its tokens tied: the known one",
       {held("node-3", lifted, 1'000'000), held("node-3", 2, 1'900'000), failed()},
       known_term{"node-3", 2}, "node-3", 2},
      {"its tokens tied, nothing known: unknown",
       {held("node-3", lifted, 1'000'000), held("node-3", 2, 1'900'000), failed()},
       std::nullopt, "node-3", 0},
      {"its tokens tied, another term known: unknown",
       {held("node-3", lifted, 1'000'000), held("node-3", 2, 1'900'000), failed()},
       known_term{"node-9", 7}, "node-3", 0},
      {"a majority reports the token: that one, whatever is known",
       {held("node-3", lifted, 1'000'000), held("node-3", 2, 1'900'000),
        held("node-3", 2, 1'900'000)},
       known_term{"node-3", 1}, "node-3", 2},
  };
  for (const auto& r : rows) {
    acquire_round round(r.answers.size());
    for (std::size_t i = 0; i < r.answers.size(); ++i) round.record(i, r.answers[i]);
    const auto a = round.refusal(r.known);
    EXPECT_EQ(a.holder, r.holder) << r.what;
    EXPECT_EQ(a.token, r.token) << r.what;
  }
}

// Right after a term began, the third master may still show the older
// counter (the winner answers after a majority of write-backs): a round
// refused by its first two answers waits for the third instead of naming no
// token (the contract's "tokens strictly increase" case saw 0 about 1 in 10).
TEST(quorum, a_refusal_with_tied_tokens_waits_for_the_answers_in_flight) {
  acquire_round round(3);
  round.record(0, held("b", 42, 1'000'000));
  round.record(1, held("b", 41, 1'000'000));  // its write-back not there yet
  ASSERT_EQ(round.current(), verdict::impossible);
  EXPECT_EQ(round.refusal().token, 0u);
  EXPECT_TRUE(round.refusal_waits_for_more());
  // A known term with the latest token settles it at once; the term before
  // it (its announcement heard, the new one's not yet) does not: it would
  // name the older token (seen about 1 in 20 under load).
  EXPECT_FALSE(round.refusal_waits_for_more(known_term{"b", 42}));
  EXPECT_TRUE(round.refusal_waits_for_more(known_term{"b", 41}));
  round.record(2, held("b", 42, 1'000'000));
  EXPECT_FALSE(round.refusal_waits_for_more()) << "every master answered";
  EXPECT_EQ(round.refusal().token, 42u);

  acquire_round clear(3);
  clear.record(0, held("b", 42, 1'000'000));
  clear.record(1, held("b", 42, 1'000'000));
  EXPECT_FALSE(clear.refusal_waits_for_more()) << "the token is clear";

  acquire_round down(3);
  down.record(0, held("b", 42, 1'000'000));
  down.record(1, held("b", 41, 1'000'000));
  down.record(2, failed());
  EXPECT_FALSE(down.refusal_waits_for_more()) << "nothing more will come";
  EXPECT_EQ(down.refusal().token, 0u);
}

TEST(quorum, only_a_holder_named_by_a_majority_with_a_clear_token_is_learned) {
  acquire_round clear(3);
  clear.record(0, held("b", 41, 10));
  clear.record(1, held("b", 41, 10));
  ASSERT_TRUE(clear.majority_holder());
  EXPECT_EQ(clear.majority_holder()->holder, "b");
  EXPECT_EQ(clear.majority_holder()->token, 41u);

  acquire_round minority(3);
  minority.record(0, held("b", 41, 10));
  minority.record(1, failed());
  EXPECT_FALSE(minority.majority_holder());

  acquire_round tied(3);
  tied.record(0, held("b", 41, 10));
  tied.record(1, held("b", 900, 10));
  EXPECT_FALSE(tied.majority_holder());
}

// A renewal is lost for certain only when so many masters said "not ours"
// that no majority can renew; failures leave it unknown (the renew deadline
// decides) once the masters yet to answer cannot make it lost; a majority of
// renewals wins.
TEST(quorum, a_renewal_is_lost_only_when_a_majority_cannot_hold_it_any_more) {
  enum class a { renewed, not_ours, failed };
  struct row {
    std::size_t masters;
    std::vector<a> answers;
    renewal_verdict expected;
  };
  const std::vector<row> rows = {
      {3, {a::renewed}, renewal_verdict::open},
      {3, {a::renewed, a::renewed}, renewal_verdict::renewed},
      {3, {a::not_ours, a::renewed, a::renewed}, renewal_verdict::renewed},
      {3, {a::not_ours, a::not_ours}, renewal_verdict::lost},
      // A dead master fails at once: the third may still say "not ours".
      {3, {a::failed, a::not_ours}, renewal_verdict::open},
      {3, {a::failed, a::not_ours, a::not_ours}, renewal_verdict::lost},
      {3, {a::failed, a::not_ours, a::renewed}, renewal_verdict::unknown},
      {3, {a::failed, a::failed}, renewal_verdict::unknown},
      {5, {a::not_ours, a::not_ours, a::failed}, renewal_verdict::open},
      {5, {a::not_ours, a::not_ours, a::failed, a::failed, a::renewed}, renewal_verdict::unknown},
      {5, {a::failed, a::failed, a::failed}, renewal_verdict::unknown},
      {5, {a::not_ours, a::not_ours, a::not_ours}, renewal_verdict::lost},
      {5, {a::not_ours, a::not_ours}, renewal_verdict::open},
  };
  for (const auto& r : rows) {
    quorum_tally tally(r.masters);
    std::size_t not_ours = 0;
    for (std::size_t i = 0; i < r.answers.size(); ++i) {
      if (r.answers[i] == a::renewed) {
        tally.succeeded(i);
      } else {
        tally.failed(i);
        if (r.answers[i] == a::not_ours) ++not_ours;
      }
    }
    EXPECT_EQ(settle_renewal(tally, not_ours), r.expected)
        << r.masters << " masters, " << r.answers.size() << " answers";
  }
}

TEST(quorum, a_lost_renewal_says_on_which_masters) {
  EXPECT_EQ(lost_reason({"redis://a:6379", "redis://b:6379"}, 3),
            "the lease is no longer this node's on 2 of 3 masters (a majority is 2): "
            "redis://a:6379, redis://b:6379");
}

TEST(quorum, a_refusal_counts_our_grants_as_free_and_silent_masters_as_never) {
  acquire_round r(3);
  r.record(0, granted(3));
  r.record(1, held("b", 3, 1'500'700));
  r.record(2, failed());
  const auto a = r.refusal();
  EXPECT_EQ(a.free_in, microseconds(1'500'700));  // 2nd smallest of {0, 1.5007 s, never}
  EXPECT_EQ(a.remaining, milliseconds(1500));    // whole ms, rounded down as PTTL is

  acquire_round never(3);
  never.record(0, held("b", 3, 1'000'000));
  never.record(1, failed());
  never.record(2, failed());
  EXPECT_LT(never.refusal().remaining.count(), 0);
  EXPECT_LT(never.refusal().free_in.count(), 0);
}

TEST(quorum, a_refusal_is_outranked_by_the_largest_count_a_master_gave) {
  const auto counting = [](master_answer a, int n) {
    a.outranked_by = n;
    return a;
  };
  acquire_round r(3);
  // A master that restarted empty counts nobody; one that missed nothing
  // counts both candidates above us.
  r.record(0, counting(held("b", 3, 1'000'000), 0));
  r.record(1, counting(held("b", 3, 1'000'000), 2));
  r.record(2, counting(held_back(900'000), 1));
  EXPECT_EQ(r.refusal().outranked_by, 2);

  // Our own grants and failed masters say nothing; nobody said: unknown.
  acquire_round silent(3);
  silent.record(0, granted(3));
  silent.record(1, held("b", 3, 1'000'000));
  silent.record(2, failed());
  EXPECT_EQ(silent.refusal().outranked_by, -1);
  acquire_round some(3);
  some.record(0, granted(3));
  some.record(1, counting(held("b", 3, 1'000'000), 1));
  some.record(2, failed());
  EXPECT_EQ(some.refusal().outranked_by, 1);
}

TEST(quorum, only_fences_answer_held_back) {
  acquire_round r(3);
  r.record(0, held_back(900'000));
  r.record(1, held_back(1'200'000));
  const auto a = r.refusal();
  EXPECT_EQ(a.outcome, acquire_outcome::held_back);
  EXPECT_EQ(a.holder, "");
  EXPECT_EQ(a.free_in, microseconds(1'200'000));
}

TEST(quorum, a_split_vote_is_told_apart_from_a_holder_with_a_majority) {
  acquire_round split(3);
  split.record(0, granted(3));
  split.record(1, held("b", 3, 3'000'000));
  split.record(2, failed());
  EXPECT_TRUE(split.split());

  acquire_round leader(3);
  leader.record(0, granted(3));
  leader.record(1, held("b", 3, 3'000'000));
  leader.record(2, held("b", 3, 3'000'000));
  EXPECT_FALSE(leader.split());  // b holds a majority: a real leader

  acquire_round nothing_won(3);
  nothing_won.record(0, held("b", 3, 3'000'000));
  nothing_won.record(1, failed());
  nothing_won.record(2, failed());
  EXPECT_FALSE(nothing_won.split());  // maybe a leader we cannot fully see: wait for it
}

master_answer reserved(std::string by, std::string to, std::uint64_t token, long free_in_us) {
  auto a = held(std::move(by), token, free_in_us);
  a.reserved_for = std::move(to);
  return a;
}

// The target of a hand-over won two masters; a standby's round settled by
// its first two answers hears the new term from one and the reservation
// (named after the node that handed over) from the other: it waits for the
// third rather than name the node that handed over (the contract's hand-over
// case saw it about 1 in 15 under load).
TEST(quorum, a_refusal_naming_two_holders_as_often_waits_for_the_answers_in_flight) {
  acquire_round round(3);
  round.record(0, held("b", 42, 3'000'000));
  round.record(1, reserved("a", "b", 41, 4'000'000));
  ASSERT_EQ(round.current(), verdict::impossible);
  EXPECT_TRUE(round.refusal_waits_for_more());
  round.record(2, held("b", 42, 3'000'000));
  EXPECT_FALSE(round.refusal_waits_for_more()) << "every master answered";
  const auto answer = round.refusal();
  EXPECT_EQ(answer.holder, "b");
  EXPECT_EQ(answer.reserved_for, "");
  EXPECT_EQ(answer.token, 42u);

  acquire_round down(3);
  down.record(0, held("b", 42, 3'000'000));
  down.record(1, reserved("a", "b", 41, 4'000'000));
  down.record(2, failed());
  EXPECT_FALSE(down.refusal_waits_for_more()) << "nothing more will come";
}

TEST(quorum, a_reservation_is_refused_until_its_window_ends_and_is_no_split) {
  // A standby's round after a hand-over that reached two of three masters;
  // the third, free, granted to it.
  acquire_round r(3);
  r.record(0, granted(41));
  r.record(1, reserved("a", "b", 41, 4'000'000));
  r.record(2, reserved("a", "b", 41, 4'100'000));
  EXPECT_EQ(r.current(), verdict::impossible);
  EXPECT_FALSE(r.split()) << "retrying at once would spin for the window";
  const auto answer = r.refusal();
  EXPECT_EQ(answer.outcome, acquire_outcome::held);
  EXPECT_EQ(answer.holder, "a");
  EXPECT_EQ(answer.reserved_for, "b");
  EXPECT_EQ(answer.token, 41u);
  // A majority (the free master, given back, and one more) grants once
  // the first reservation ends.
  EXPECT_EQ(answer.free_in, microseconds(4'000'000));
  EXPECT_FALSE(r.majority_holder()) << "a reservation's node ended its term";

  // Most masters still show the lease itself (the hand-over missed them):
  // a lease, not a reservation.
  acquire_round lease(3);
  lease.record(0, held("a", 41, 2'000'000));
  lease.record(1, held("a", 41, 2'000'000));
  lease.record(2, reserved("a", "b", 41, 4'000'000));
  EXPECT_EQ(lease.refusal().reserved_for, "");
  ASSERT_TRUE(lease.majority_holder());
  EXPECT_EQ(lease.majority_holder()->holder, "a");
  acquire_round tied(4);
  tied.record(0, held("a", 41, 2'000'000));
  tied.record(1, reserved("a", "b", 41, 4'000'000));
  tied.record(2, failed());
  tied.record(3, failed());
  EXPECT_EQ(tied.refusal().reserved_for, "") << "a tie with a lease is a lease";
}

TEST(quorum, only_held_and_held_back_answers_are_certain_refusals) {
  acquire_round r(4);
  r.record(0, granted(1));
  r.record(1, held("b", 1, 10));
  r.record(2, held_back(10));
  r.record(3, failed());  // it may have run: a release must still go there
  EXPECT_FALSE(r.refused_at(0));
  EXPECT_TRUE(r.refused_at(1));
  EXPECT_TRUE(r.refused_at(2));
  EXPECT_FALSE(r.refused_at(3));
  EXPECT_FALSE(r.refused_at(9));
}

TEST(quorum, validity_is_ttl_minus_drift_minus_the_time_since_sending) {
  const time_point sent{std::chrono::seconds(100)};
  EXPECT_EQ(remaining_validity(sent, sent + milliseconds(30), milliseconds(1000), milliseconds(12)),
            milliseconds(958));
  EXPECT_LE(remaining_validity(sent, sent + milliseconds(988), milliseconds(1000), milliseconds(12)),
            mono_clock::duration::zero());
}

}  // namespace
}  // namespace baton::redlock_detail
