// The peer messages (include/baton/peer_wire.hpp): what encode signs comes
// back whole from decode, and every line decode must refuse is refused with
// a reason naming why.
#include "baton/peer_wire.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace baton::peer_wire {
namespace {

using json = nlohmann::json;

const std::string wire_secret = "0123456789abcdef0123456789abcdef0123456789abcdef";
const std::string nonce = "00112233445566778899aabbccddeeff";

message confirm_from_a() {
  message m;
  m.what = kind::confirm;
  m.election = "jobs";
  m.from = "web-1";
  m.to = "web-2";
  m.leader = "web-1";
  m.token = 1'700'000'000'000'042ULL;
  m.nonce = nonce;
  m.sent_ms = 81'234'567;
  return m;
}

message answer_to(const message& request, kind k) {
  message a = request;
  a.what = k;
  std::swap(a.from, a.to);
  if (k == kind::confirmed) a.ms = 2000;
  if (k == kind::held) {
    a.ms = 1500;
    a.reason = "this node promised web-1's term 42";
  }
  if (k == kind::refused) a.reason = "this node leads";
  return a;
}

std::string signed_line(const message& m) {
  const auto e = encode(m, wire_secret);
  EXPECT_EQ(e.error, "");
  return e.line;
}

TEST(peer_wire, every_kind_survives_the_round_trip) {
  const message request = confirm_from_a();
  message clear = request;
  clear.what = kind::clear;
  clear.from = "web-3";
  for (const auto& m :
       {request, answer_to(request, kind::confirmed), answer_to(request, kind::refused), clear,
        answer_to(clear, kind::cleared), answer_to(clear, kind::held)}) {
    SCOPED_TRACE(std::string(kind_name(m.what)));
    const std::string line = signed_line(m);
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.back(), '\n');
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
    const auto d = decode(line, wire_secret, "jobs", m.to);
    EXPECT_EQ(d.error, "");
    ASSERT_TRUE(d.msg);
    EXPECT_EQ(*d.msg, m);
  }
}

// A line signed by another implementation of the same rules (Python's hmac
// over the text message_form.cpp describes): peers built from different
// versions must keep reading each other, so the signing text cannot drift.
TEST(peer_wire, reads_a_line_signed_elsewhere) {
  const std::string line =
      R"({"election":"jobs","from":"web-2","kind":"held","leader":"web-1",)"
      R"("mac":"00e9abe8f4fa6bf0669b73840e75d51e03fd0b74f5e7419a77e4477eb9e18e5a","ms":1500,)"
      R"("nonce":"00112233445566778899aabbccddeeff","reason":"this node promised web-1's term 42",)"
      R"("sent_ms":81234567,"to":"web-1","token":1700000000000042,"v":1})";
  const auto d = decode(line, wire_secret, "jobs", "web-1");
  EXPECT_EQ(d.error, "");
  ASSERT_TRUE(d.msg);
  EXPECT_EQ(*d.msg, answer_to(confirm_from_a(), kind::held)) << "the same message, re-signed";
  EXPECT_EQ(signed_line(*d.msg), line + "\n") << "and signed here into the same line";
}

TEST(peer_wire, answers_pair_with_their_request) {
  const message request = confirm_from_a();
  EXPECT_TRUE(is_request(kind::confirm));
  EXPECT_TRUE(is_request(kind::clear));
  EXPECT_FALSE(is_request(kind::confirmed));
  EXPECT_TRUE(answers(request, answer_to(request, kind::confirmed)));
  EXPECT_TRUE(answers(request, answer_to(request, kind::refused)));
  EXPECT_FALSE(answers(request, answer_to(request, kind::cleared))) << "a clear's answer";
  message other_nonce = answer_to(request, kind::confirmed);
  other_nonce.nonce = "ffffffffffffffffffffffffffffffff";
  EXPECT_FALSE(answers(request, other_nonce));
  message other_time = answer_to(request, kind::confirmed);
  other_time.sent_ms += 1;
  EXPECT_FALSE(answers(request, other_time));
  message other_peer = answer_to(request, kind::confirmed);
  other_peer.from = "web-3";
  EXPECT_FALSE(answers(request, other_peer));
  message other_term = answer_to(request, kind::confirmed);
  other_term.token += 1;
  EXPECT_FALSE(answers(request, other_term));
}

TEST(peer_wire, the_mac_covers_every_field) {
  const json original = json::parse(signed_line(answer_to(confirm_from_a(), kind::held)));
  // Each field changed to another valid value, the MAC kept: refused.
  const std::vector<std::pair<std::string, json>> changes = {
      {"election", "jobs2"},   {"from", "web-3"}, {"to", "web-3"},
      {"leader", "web-2"},     {"token", 43},     {"nonce", "ffffffffffffffffffffffffffffffff"},
      {"sent_ms", 81'234'568}, {"ms", 1501},      {"reason", "another reason"},
  };
  for (const auto& [field, value] : changes) {
    SCOPED_TRACE(field);
    json changed = original;
    changed[field] = value;
    const auto d = decode(changed.dump(), wire_secret, changed["election"].get<std::string>(),
                          changed["to"].get<std::string>());
    EXPECT_FALSE(d.msg);
    EXPECT_NE(d.error.find("MAC does not match"), std::string::npos) << d.error;
  }
  // The kind too: a confirm request read as a clear request.
  json request = json::parse(signed_line(confirm_from_a()));
  request["kind"] = "clear";
  EXPECT_NE(decode(request.dump(), wire_secret, "jobs", "web-2").error.find("MAC does not match"),
            std::string::npos);
}

TEST(peer_wire, a_wrong_secret_is_refused_without_showing_it) {
  const std::string line = signed_line(confirm_from_a());
  const std::string other = "another secret, long enough to be accepted as one";
  const auto d = decode(line, other, "jobs", "web-2");
  EXPECT_FALSE(d.msg);
  EXPECT_EQ(d.error, "its MAC does not match: not signed with this election's peer secret");
  EXPECT_EQ(d.error.find(other), std::string::npos);
  EXPECT_EQ(d.error.find(wire_secret), std::string::npos);
}

TEST(peer_wire, a_short_secret_signs_nothing) {
  const auto e = encode(confirm_from_a(), "short");
  EXPECT_EQ(e.line, "");
  EXPECT_NE(e.error.find("shorter than 32 bytes"), std::string::npos) << e.error;
  EXPECT_TRUE(secret_problem(std::string(32, 'x')) == std::nullopt);
  EXPECT_TRUE(secret_problem(std::string(1025, 'x')));
}

TEST(peer_wire, encode_refuses_what_decode_would) {
  message no_nonce = confirm_from_a();
  no_nonce.nonce = "xyz";
  EXPECT_NE(encode(no_nonce, wire_secret).error.find("\"nonce\" must be 32 lowercase hex digits"),
            std::string::npos);
  message to_self = confirm_from_a();
  to_self.to = to_self.from;
  EXPECT_NE(encode(to_self, wire_secret).error.find("same node"), std::string::npos);
  message ms_on_request = confirm_from_a();
  ms_on_request.ms = 5;
  EXPECT_NE(encode(ms_on_request, wire_secret).error.find("a confirm carries no \"ms\""),
            std::string::npos);
}

// A line changed after signing (or never signed), and what decode says.
struct bad_line {
  const char* name;
  std::string line;
  std::string error;
};

std::string with(const std::string& field, const json& value, bool remove = false) {
  json object = json::parse(signed_line(confirm_from_a()));
  if (remove) {
    object.erase(field);
  } else {
    object[field] = value;
  }
  return object.dump();
}

std::vector<bad_line> bad_lines() {
  const std::string good = signed_line(confirm_from_a());
  std::string body = good.substr(0, good.size() - 1);
  return {
      {"empty", "", "not JSON (a syntax error at byte 1)"},
      {"not_json", "hello", "not JSON (a syntax error at byte 1)"},
      {"truncated", body.substr(0, body.size() - 5),
       "not JSON (a syntax error at byte " + std::to_string(body.size() - 4) + ")"},
      {"an_array", "[1,2]", "not a JSON object"},
      {"a_number_beyond_a_double", "{\"v\":1e400}", "not JSON (a number too large to read)"},
      {"two_lines", body + "\n" + body, "more than one line"},
      {"too_long", std::string(max_line_bytes + 1, ' '), "longer than 2048 bytes"},
      {"a_member_twice", "{\"v\":1,\"v\":1}", "\"v\" appears twice"},
      {"an_unknown_member", with("extra", 1), "it has a member this version does not know"},
      {"another_version", with("v", 2), "version 2, this node speaks 1"},
      {"version_as_text", with("v", "1"), "\"v\" is not a whole number from 0 to 2^64-1"},
      {"no_kind", with("kind", nullptr, true), "missing \"kind\""},
      {"unknown_kind", with("kind", "promise"),
       "\"kind\" is not confirm, confirmed, refused, clear, cleared or held"},
      {"negative_token", with("token", -1), "\"token\" is not a whole number from 0 to 2^64-1"},
      {"fractional_time", with("sent_ms", 1.5),
       "\"sent_ms\" is not a whole number from 0 to 2^64-1"},
      {"token_zero", with("token", 0), "\"token\" must be a term's token, above 0"},
      {"token_beyond_64_bits",
       body.substr(0, body.find("\"token\":")) + "\"token\":18446744073709551616" +
           body.substr(body.find(',', body.find("\"token\":"))),
       "\"token\" is not a whole number from 0 to 2^64-1"},
      {"node_id_with_a_space", with("from", "web 1"),
       "\"from\" must be 1 to 128 characters from A-Z a-z 0-9 . _ @ -"},
      {"election_with_an_at", with("election", "jobs@x"),
       "\"election\" must be 1 to 64 characters from A-Z a-z 0-9 . _ -"},
      {"upper_case_nonce", with("nonce", "00112233445566778899AABBCCDDEEFF"),
       "\"nonce\" must be 32 lowercase hex digits"},
      {"ms_on_a_request", with("ms", 5), "a confirm carries no \"ms\""},
      {"reason_on_a_request", with("reason", "x"), "a confirm carries no \"reason\""},
      {"no_mac", with("mac", nullptr, true), "missing \"mac\""},
      {"mac_not_hex", with("mac", std::string(64, 'g')), "\"mac\" must be 64 lowercase hex digits"},
      {"mac_short", with("mac", std::string(63, '0')), "\"mac\" must be 64 lowercase hex digits"},
      {"mac_of_zeros", with("mac", std::string(64, '0')),
       "its MAC does not match: not signed with this election's peer secret"},
  };
}

TEST(peer_wire, refuses_every_bad_line_with_its_reason) {
  for (const auto& bad : bad_lines()) {
    SCOPED_TRACE(bad.name);
    const auto d = decode(bad.line, wire_secret, "jobs", "web-2");
    EXPECT_FALSE(d.msg);
    EXPECT_EQ(d.error, bad.error);
  }
}

TEST(peer_wire, a_signed_message_for_another_election_or_node_is_refused) {
  const std::string line = signed_line(confirm_from_a());
  EXPECT_EQ(decode(line, wire_secret, "reports", "web-2").error,
            "it is for election \"jobs\", not \"reports\"");
  EXPECT_EQ(decode(line, wire_secret, "jobs", "web-3").error,
            "it is addressed to \"web-2\", not to this node");
}

TEST(peer_wire, a_trailing_crlf_is_accepted) {
  std::string line = signed_line(confirm_from_a());
  line.insert(line.size() - 1, "\r");
  EXPECT_TRUE(decode(line, wire_secret, "jobs", "web-2").msg);
}

}  // namespace
}  // namespace baton::peer_wire
