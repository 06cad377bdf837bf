// The candidate card: its text both ways, and what a foreign or broken card
// read from a store becomes.
#include "baton/candidate_card.hpp"

#include <gtest/gtest.h>

#include <string>

namespace baton {
namespace {

TEST(CandidateCard, EncodesStandingAndAdvertise) {
  EXPECT_EQ(encode_candidate_card({}), "standing=eligible");
  EXPECT_EQ(encode_candidate_card({candidate_standing::drained, "10.0.0.7:5432"}),
            "standing=drained;advertise=10.0.0.7:5432");
  EXPECT_EQ(encode_candidate_card({candidate_standing::never, "https://db-1:8443/x?a=b"}),
            "standing=never;advertise=https://db-1:8443/x?a=b");
}

TEST(CandidateCard, ReadsWhatItWrites) {
  for (const auto standing :
       {candidate_standing::eligible, candidate_standing::drained, candidate_standing::never}) {
    const candidate_card card{standing, "http://h:1/p=q"};
    const auto back = parse_candidate_card(encode_candidate_card(card));
    EXPECT_EQ(back.error, "");
    EXPECT_EQ(back.card.standing, standing);
    EXPECT_EQ(back.card.advertise, "http://h:1/p=q");
  }
}

TEST(CandidateCard, AnEmptyCardIsAnOlderVersionsEligibleCandidate) {
  const auto r = parse_candidate_card("");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.card.standing, candidate_standing::eligible);
  EXPECT_EQ(r.card.advertise, "");
  EXPECT_TRUE(card_allows_succession(""));
}

TEST(CandidateCard, SkipsKeysOfALaterVersion) {
  const auto r = parse_candidate_card("zone=b;standing=drained;weight=3");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.card.standing, candidate_standing::drained);
}

TEST(CandidateCard, NamesWhatIsWrongWithABrokenCard) {
  EXPECT_EQ(parse_candidate_card("standing=sleepy").error,
            "card standing 'sleepy' is none of eligible, drained, never");
  EXPECT_EQ(parse_candidate_card("standing=drained;standing=eligible").error,
            "card names its standing twice");
  EXPECT_EQ(parse_candidate_card("hello").error, "card item 'hello' is not KEY=VALUE");
  EXPECT_EQ(parse_candidate_card("standing=eligible;").error, "card item '' is not KEY=VALUE");
  EXPECT_EQ(parse_candidate_card("=x").error, "card item '=x' is not KEY=VALUE");
  EXPECT_EQ(parse_candidate_card("advertise=").error, "card advertise address '' is empty");
  EXPECT_EQ(parse_candidate_card(std::string(600, 'a')).error, "card of 600 bytes, more than 512");
  // A broken card keeps the defaults, and is never a successor.
  const auto r = parse_candidate_card("standing=drained;advertise=a\x01");
  EXPECT_NE(r.error, "");
  EXPECT_EQ(r.card.standing, candidate_standing::eligible);
  EXPECT_FALSE(card_allows_succession("standing=drained;advertise=a\x01"));
  EXPECT_FALSE(card_allows_succession("standing=drained"));
  EXPECT_FALSE(card_allows_succession("standing=never"));
  EXPECT_TRUE(card_allows_succession("standing=eligible;advertise=h:1"));
}

TEST(CandidateCard, NeverCrashesOnAnyBytes) {
  // Every short string over a small alphabet that holds the separators.
  const std::string alphabet = "s=;a\xff ";
  std::string text;
  for (int n = 0; n < 6 * 6 * 6 * 6 * 6; ++n) {
    text.clear();
    for (int k = n; k > 0; k /= 6) text += alphabet[static_cast<std::size_t>(k % 6)];
    const auto r = parse_candidate_card(text);
    if (!r.error.empty()) EXPECT_EQ(r.card.standing, candidate_standing::eligible);
  }
}

TEST(CandidateCard, AdvertiseAddressesAreOneFieldOfPrintableAscii) {
  EXPECT_EQ(advertise_problem("10.0.0.7:5432"), "");
  EXPECT_EQ(advertise_problem("[::1]:80"), "");
  EXPECT_EQ(advertise_problem("postgres://db-1:5432/app?sslmode=require"), "");
  EXPECT_EQ(advertise_problem(""), "is empty");
  EXPECT_NE(advertise_problem("a b"), "");
  EXPECT_NE(advertise_problem("a;b"), "");
  EXPECT_NE(advertise_problem("caf\xc3\xa9:1"), "");
  EXPECT_EQ(advertise_problem(std::string(257, 'a')), "is longer than 256 bytes");
}

}  // namespace
}  // namespace baton
