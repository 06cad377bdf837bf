// Rows of the acquire statement into answers, including every malformed
// shape a broken server, proxy or schema could produce.
#include "postgres/lease_answers.hpp"

#include <gtest/gtest.h>

#include "postgres/postgres_error.hpp"

namespace baton::postgres_detail {
namespace {

using cell = std::optional<std::string>;

result_rows row(cell outcome, cell reset, cell missing, cell holder, cell token, cell remaining,
                cell restarted = "f", cell lost_why = cell(), cell free_in_us = "-1",
                cell reserved_for = "", cell outranked_by = "-1") {
  return {{outcome, reset, missing, cell("f"), holder, token, remaining, cell("1/00000001/2"),
           cell(), restarted, cell("0/1500790"), lost_why, free_in_us, reserved_for, outranked_by}};
}

TEST(postgres_acquire_rows, acquired_carries_the_new_token_and_a_full_ttl) {
  const auto p = parse_acquire_rows(row("acquired", "f", "f", "n1", "1795478993544884", "3000"));
  ASSERT_FALSE(p.error) << p.error.message();
  EXPECT_EQ(p.answer.outcome, acquire_outcome::acquired);
  EXPECT_EQ(p.answer.token, 1795478993544884u);
  EXPECT_EQ(p.answer.holder, "n1");
  EXPECT_EQ(p.answer.remaining, milliseconds(3000));
  EXPECT_FALSE(p.reset);
  EXPECT_FALSE(p.restarted);
  EXPECT_EQ(p.epoch, "1/00000001/2");
  EXPECT_EQ(p.wal_position, "0/1500790");
}

TEST(postgres_acquire_rows, held_names_the_holder_and_its_remaining_time) {
  const auto p = parse_acquire_rows(row("held", "f", "f", "n2", "7", "1234"));
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(p.answer.holder, "n2");
  EXPECT_EQ(p.answer.token, 7u);
  EXPECT_EQ(p.answer.remaining, milliseconds(1234));
  EXPECT_LT(p.answer.free_in.count(), 0);  // the row did not say
}

// The microseconds let a standby try right at the expiry; only "held" has them.
TEST(postgres_acquire_rows, held_carries_the_time_until_free_to_the_microsecond) {
  const auto held = parse_acquire_rows(row("held", "f", "f", "n2", "7", "1234", "f", cell(), "1233417"));
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.answer.free_in, std::chrono::microseconds(1233417));
  const auto back = parse_acquire_rows(row("held_back", "f", "f", "", "7", "1234", "f", cell(), "5"));
  ASSERT_FALSE(back.error);
  EXPECT_LT(back.answer.free_in.count(), 0);
}

// A switchover's reservation: held for whoever is not its target, with the
// node that handed over as the holder and the window's time left.
TEST(postgres_acquire_rows, a_reservation_names_its_target_when_held) {
  const auto held =
      parse_acquire_rows(row("held", "f", "f", "n1", "7", "4200", "f", cell(), "4199001", "n2"));
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(held.answer.reserved_for, "n2");
  EXPECT_EQ(held.answer.holder, "n1");
  EXPECT_EQ(held.answer.remaining, milliseconds(4200));
  // Only "held" carries it, whatever the row says.
  const auto back =
      parse_acquire_rows(row("held_back", "f", "f", "", "7", "4200", "f", cell(), "-1", "n2"));
  ASSERT_FALSE(back.error);
  EXPECT_EQ(back.answer.reserved_for, "");
  const auto plain = parse_acquire_rows(row("held", "f", "f", "n1", "7", "1234"));
  EXPECT_EQ(plain.answer.reserved_for, "");
}

TEST(postgres_acquire_rows, held_counts_the_candidates_that_outrank_this_one) {
  const auto held =
      parse_acquire_rows(row("held", "f", "f", "n1", "7", "1234", "f", cell(), "-1", "", "2"));
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.answer.outranked_by, 2);
  // -1 (no registry) stays unknown; so does anything but "held".
  EXPECT_LT(parse_acquire_rows(row("held", "f", "f", "n1", "7", "1234")).answer.outranked_by, 0);
  const auto won =
      parse_acquire_rows(row("acquired", "f", "f", "n1", "7", "1234", "f", cell(), "-1", "", "2"));
  EXPECT_LT(won.answer.outranked_by, 0);
}

TEST(postgres_acquire_rows, a_reset_found_by_this_statement_is_flagged) {
  const auto p = parse_acquire_rows(row("held_back", "t", "t", "", "9", "3000"));
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held_back);
  EXPECT_TRUE(p.reset);
  EXPECT_TRUE(p.missing);
}

TEST(postgres_acquire_rows, data_gone_back_carries_its_cause) {
  const auto p = parse_acquire_rows(row("held_back", "t", "f", "", "1795478993544884", "3000", "f",
                                        "the lease row's token 5 is below 9"));
  ASSERT_FALSE(p.error);
  EXPECT_TRUE(p.reset);
  EXPECT_FALSE(p.missing);
  EXPECT_EQ(p.lost_why, "the lease row's token 5 is below 9");
}

TEST(postgres_acquire_rows, a_restart_that_kept_the_term_is_not_a_reset) {
  const auto p = parse_acquire_rows(row("held", "f", "f", "n1", "7", "2999", "t"));
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held);
  EXPECT_EQ(p.answer.holder, "n1");
  EXPECT_EQ(p.answer.token, 7u);
  EXPECT_TRUE(p.restarted);
  EXPECT_FALSE(p.reset);
}

TEST(postgres_epoch, its_parts_are_cluster_start_and_the_last_resets_token) {
  EXPECT_EQ(epoch_cluster("7712498967564640938/00000001/1795478993544884"),
            "7712498967564640938/00000001");
  EXPECT_EQ(epoch_cluster("7712498967564640938/00000002"), "7712498967564640938/00000002");
  EXPECT_EQ(epoch_cluster(""), "");
  EXPECT_EQ(epoch_server("1/00000001/2/1795478993544884"), "1/00000001/2");
  EXPECT_EQ(epoch_server("1/00000001/2"), "1/00000001/2");
  EXPECT_EQ(epoch_reset_mark("1/00000001/2/1795478993544884"), "1795478993544884");
  EXPECT_EQ(epoch_reset_mark("1/00000001/2"), "");
  EXPECT_EQ(epoch_reset_mark(""), "");
}

TEST(postgres_acquire_rows, no_row_means_the_row_is_being_created_try_later) {
  const auto p = parse_acquire_rows({});
  ASSERT_FALSE(p.error);
  EXPECT_EQ(p.answer.outcome, acquire_outcome::held);
  EXPECT_LT(p.answer.remaining, milliseconds::zero());
}

TEST(postgres_acquire_rows, malformed_rows_are_unexpected_replies_not_crashes) {
  const std::vector<result_rows> bad{
      {{cell("acquired")}},                                             // too few columns
      row("won", "f", "f", "n1", "1", "1"),                             // unknown outcome
      row("acquired", "x", "f", "n1", "1", "1"),                        // not a boolean
      row("acquired", "f", "f", "n1", "twelve", "1"),                   // not a number
      row("acquired", "f", "f", "n1", "-5", "1"),                       // negative token
      row("acquired", "f", "f", "n1", "1", cell()),                     // NULL remaining
      row(cell(), "f", "f", "n1", "1", "1"),                            // NULL outcome
      row("acquired", "f", "f", cell(), "1", "1"),                      // NULL holder
      row("held", "f", "f", "n1", "1", "1", cell()),                    // NULL restarted
      row("held", "f", "f", "n1", "1", "1", "f", cell(), cell()),       // NULL free_in_us
      row("held", "f", "f", "n1", "1", "1", "f", cell(), "soon"),       // free_in_us not a number
      row("held", "f", "f", "n1", "1", "1", "f", cell(), "1", cell()),  // NULL reserved_for
      row("held", "f", "f", "n1", "1", "1", "f", cell(), "1", "", cell()),  // NULL outranked_by
      row("held", "f", "f", "n1", "1", "1", "f", cell(), "1", "", "many"),  // not a number
      {{cell("held"), cell("f"), cell("f"), cell("f"), cell("n1"), cell("1"), cell("1"),
        cell("1/00000001/2"), cell()}},  // the old 9 columns
  };
  auto two = row("held", "f", "f", "n1", "1", "1");
  two.push_back(two[0]);
  for (const auto& rows : bad) {
    const auto p = parse_acquire_rows(rows);
    EXPECT_EQ(p.error.code, postgres_errc::unexpected_reply);
    EXPECT_EQ(p.error.code, store_errc::protocol);
    EXPECT_NE(p.error.detail.find("acquire: "), std::string::npos);
  }
  EXPECT_EQ(parse_acquire_rows(two).error.code, postgres_errc::unexpected_reply);
  auto old = row("held", "f", "f", "n1", "1", "1");
  old[0].resize(13);  // the 13 columns of a statement without reservations
  EXPECT_EQ(parse_acquire_rows(old).error.code, postgres_errc::unexpected_reply);
}

TEST(postgres_candidate_rows, each_row_is_a_candidate_with_its_times_and_cooldown) {
  const auto p = parse_candidate_rows({{cell("n1"), cell("0"), cell("61234"), cell("800"), cell("0"),
                                        cell("standing=never")},
                                       {cell("n2"), cell("-7"), cell("0"), cell("0"), cell("7400"),
                                        cell("")}});
  ASSERT_FALSE(p.error) << p.error.message();
  ASSERT_EQ(p.list.size(), 2u);
  EXPECT_EQ(p.list[0].node, "n1");
  EXPECT_EQ(p.list[0].priority, 0);
  EXPECT_EQ(p.list[0].live_for, milliseconds(61234));
  EXPECT_EQ(p.list[0].last_attempt_ago, milliseconds(800));
  EXPECT_EQ(p.list[0].cooling_down_for, milliseconds(0));
  EXPECT_EQ(p.list[1].node, "n2");
  EXPECT_EQ(p.list[1].priority, -7);
  EXPECT_EQ(p.list[1].last_attempt_ago, milliseconds(0));
  EXPECT_EQ(p.list[1].cooling_down_for, milliseconds(7400));
  EXPECT_EQ(p.list[0].card, "standing=never");
  EXPECT_EQ(p.list[1].card, "");
  EXPECT_TRUE(parse_candidate_rows({}).list.empty());
  // A server clock stepped back: just begun, never negative.
  EXPECT_EQ(parse_candidate_rows({{cell("n1"), cell("0"), cell("-3"), cell("0"), cell("0"), cell("")}})
                .list.at(0)
                .live_for,
            milliseconds(0));
}

TEST(postgres_candidate_rows, malformed_rows_are_unexpected_replies_not_crashes) {
  const auto z = cell("0");
  const std::vector<result_rows> bad{
      {{cell("n1"), cell("0")}},                                // too few columns
      {{cell("n1"), cell("0"), cell("1")}},                     // a statement before cool-downs
      {{cell("n1"), cell("0"), cell("1"), z, z}},               // a statement before cards
      {{cell(), z, cell("1"), z, z, z}},                        // NULL node
      {{cell(""), z, cell("1"), z, z, z}},                      // empty node
      {{cell("n1"), cell("high"), cell("1"), z, z, z}},         // not a number
      {{cell("n1"), cell("99999999999"), cell("1"), z, z, z}},  // beyond an int
      {{cell("n1"), z, cell(), z, z, z}},                       // NULL live_for
      {{cell("n1"), z, cell("1"), cell(), z, z}},               // NULL last attempt
      {{cell("n1"), z, cell("1"), z, cell("soon"), z}},         // not a number
      {{cell("n1"), z, cell("1"), z, z, z}, {cell("n2")}},      // one bad row of two
  };
  for (const auto& rows : bad) {
    const auto p = parse_candidate_rows(rows);
    EXPECT_EQ(p.error.code, postgres_errc::unexpected_reply);
    EXPECT_NE(p.error.detail.find("candidates: "), std::string::npos) << p.error.detail;
    EXPECT_TRUE(p.list.empty());
  }
}

}  // namespace
}  // namespace baton::postgres_detail

namespace baton::postgres_detail {
namespace {

TEST(postgres_acquire_rows, the_server_time_and_the_clock_verdict_end_the_row_when_there) {
  auto rows = row("held", "f", "f", "n2", "7", "1234");
  EXPECT_FALSE(parse_acquire_rows(rows).server_time_us);  // the older shape
  rows[0].push_back(cell("1796291360577545"));
  EXPECT_EQ(parse_acquire_rows(rows).error.code, postgres_errc::unexpected_reply);  // no verdict
  rows[0].push_back(cell("t"));
  const auto p = parse_acquire_rows(rows);
  ASSERT_FALSE(p.error) << p.error.message();
  EXPECT_EQ(p.server_time_us, 1796291360577545);
  EXPECT_TRUE(p.left_for_the_clock);
  rows[0][15] = cell("soon");
  EXPECT_EQ(parse_acquire_rows(rows).error.code, postgres_errc::unexpected_reply);
  rows[0][15] = cell();
  EXPECT_EQ(parse_acquire_rows(rows).error.code, postgres_errc::unexpected_reply);
}

}  // namespace
}  // namespace baton::postgres_detail
