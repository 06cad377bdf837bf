// The proof that another holder's etcd lease expired, from time-to-live
// answers alone: when it asks, when it says expired, and every case in which
// it must not (a renewal between two answers of 0, a slow link, another raft
// term, a lease too short, a lease gone).
#include "etcd/expiry_proof.hpp"

#include <gtest/gtest.h>

namespace baton::etcd_detail {
namespace {

using verdict = expiry_proof::verdict;

const time_point proof_t0{std::chrono::seconds(100)};
constexpr double proof_drift = 0.01;
// lease_drift(1 s, 0.01): 10 ms + 2 ms of slack.
constexpr milliseconds proof_second{1012};

ttl_reading ttl_answer_at(std::int64_t ttl, milliseconds sent_at,
                          milliseconds rtt = milliseconds(1), std::int64_t raft_term = 7,
                          std::int64_t granted = 3) {
  return {ttl, granted, raft_term, proof_t0 + sent_at, proof_t0 + sent_at + rtt};
}

TEST(etcd_expiry_proof, a_live_lease_is_asked_about_once_its_last_second_may_begin) {
  expiry_proof p(7, proof_drift);
  const auto s = p.next(ttl_answer_at(2, milliseconds(0)));
  EXPECT_EQ(s.what, verdict::ask_at);
  EXPECT_EQ(s.at, proof_t0 + milliseconds(1000));
  // A long lease waits longer.
  expiry_proof q(7, proof_drift);
  EXPECT_EQ(q.next(ttl_answer_at(8, milliseconds(0), milliseconds(1), 7, 10)).at,
            proof_t0 + milliseconds(7000));
}

TEST(etcd_expiry_proof, in_the_last_second_it_asks_every_scan_interval) {
  expiry_proof p(7, proof_drift);
  const auto s = p.next(ttl_answer_at(1, milliseconds(0)));
  EXPECT_EQ(s.what, verdict::ask_at);
  EXPECT_EQ(s.at, proof_t0 + expiry_proof::scan_interval);
  // An answer slower than the interval: at once after it.
  const auto slow = p.next(ttl_answer_at(1, milliseconds(10), milliseconds(8)));
  EXPECT_EQ(slow.at, proof_t0 + milliseconds(18));
}

TEST(etcd_expiry_proof, two_answers_of_zero_a_second_apart_prove_the_expiry) {
  expiry_proof p(7, proof_drift);
  p.next(ttl_answer_at(1, milliseconds(0)));
  const auto first = p.next(ttl_answer_at(0, milliseconds(5)));  // answered at 6 ms
  EXPECT_EQ(first.what, verdict::ask_at);
  EXPECT_EQ(first.at, proof_t0 + milliseconds(6) + proof_second);
  // Sent a millisecond too soon: no proof yet, the same question again.
  const auto early = p.next(ttl_answer_at(0, milliseconds(6) + proof_second - milliseconds(1)));
  EXPECT_EQ(early.what, verdict::ask_at);
  EXPECT_EQ(early.at, proof_t0 + milliseconds(6) + proof_second);
  EXPECT_EQ(p.next(ttl_answer_at(0, milliseconds(6) + proof_second)).what, verdict::expired);
  // Settled: it stays so.
  EXPECT_EQ(p.next(ttl_answer_at(2, milliseconds(5000))).what, verdict::expired);
}

// A keepalive after the first 0 sets the lease to its granted TTL: the next
// answer says 2 (or 1), and the chain starts again.
TEST(etcd_expiry_proof, a_renewal_between_the_answers_starts_again) {
  expiry_proof p(7, proof_drift);
  p.next(ttl_answer_at(0, milliseconds(0)));
  const auto renewed = p.next(ttl_answer_at(2, milliseconds(1013)));
  EXPECT_EQ(renewed.what, verdict::ask_at);
  EXPECT_EQ(renewed.at, proof_t0 + milliseconds(2013));
  const auto zero = p.next(ttl_answer_at(0, milliseconds(3000)));
  EXPECT_EQ(zero.what, verdict::ask_at);
  EXPECT_EQ(zero.at, proof_t0 + milliseconds(3001) + proof_second);
}

// Between two answers of 0 that lie more than (granted - 1) s apart (less
// the proof_drift), a renewal could have come and gone to 0 again: no proof.
TEST(etcd_expiry_proof, answers_too_far_apart_prove_nothing) {
  expiry_proof p(7, proof_drift);
  p.next(ttl_answer_at(0, milliseconds(0)));
  // Granted 3 s: the longest link is 2000 - 22 ms. Sent at 1013 ms and
  // answered 966 ms later: 1979 ms after the first question.
  const auto s = p.next(ttl_answer_at(0, milliseconds(1013), milliseconds(966)));
  EXPECT_EQ(s.what, verdict::ask_at);
  EXPECT_EQ(s.at, proof_t0 + milliseconds(1979) + proof_second);
  // Answered 965 ms later instead: linked, proven.
  expiry_proof q(7, proof_drift);
  q.next(ttl_answer_at(0, milliseconds(0)));
  EXPECT_EQ(q.next(ttl_answer_at(0, milliseconds(1013), milliseconds(965))).what, verdict::expired);
}

TEST(etcd_expiry_proof, a_later_raft_term_is_waited_out_not_proven) {
  expiry_proof p(7, proof_drift);
  EXPECT_EQ(p.next(ttl_answer_at(0, milliseconds(0), milliseconds(1), 8)).what, verdict::give_up);
  // Final: an answer in the stamped term after it changes nothing.
  EXPECT_EQ(p.next(ttl_answer_at(0, milliseconds(2000))).what, verdict::give_up);
  // Two raft leaders' answers are not chained either.
  expiry_proof q(7, proof_drift);
  q.next(ttl_answer_at(0, milliseconds(0)));
  EXPECT_EQ(q.next(ttl_answer_at(0, milliseconds(1013), milliseconds(1), 8)).what,
            verdict::give_up);
}

TEST(etcd_expiry_proof, nothing_is_proven_without_a_stamped_term_a_long_enough_lease_or_a_lease) {
  expiry_proof unstamped(0, proof_drift);
  EXPECT_EQ(unstamped.next(ttl_answer_at(0, milliseconds(0), milliseconds(1), 0)).what,
            verdict::give_up);
  expiry_proof short_lease(7, proof_drift);
  EXPECT_EQ(short_lease.next(ttl_answer_at(1, milliseconds(0), milliseconds(1), 7, 2)).what,
            verdict::give_up);
  expiry_proof gone(7, proof_drift);
  EXPECT_EQ(gone.next(ttl_answer_at(-1, milliseconds(0))).what, verdict::give_up);
}

TEST(etcd_expiry_proof, a_stale_answer_leaves_the_step_as_it_was) {
  expiry_proof p(7, proof_drift);
  const auto s = p.next(ttl_answer_at(0, milliseconds(10)));
  const auto stale = p.next(ttl_answer_at(2, milliseconds(5)));
  EXPECT_EQ(stale.what, s.what);
  EXPECT_EQ(stale.at, s.at);
  EXPECT_EQ(p.next(ttl_answer_at(0, milliseconds(11) + proof_second)).what, verdict::expired);
}

}  // namespace
}  // namespace baton::etcd_detail
