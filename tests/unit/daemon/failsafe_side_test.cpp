// failsafe_side, the daemon's side of lease.failsafe peers, over a real
// election machine and fake hooks: the peers' answers are signed here with
// the shared secret, time is given, no socket is opened. What is checked:
// rounds start only when the store cannot be reached; a round every listed
// peer confirmed reaches the machine as events::confirmed; a lost renewal
// is resumed while rounds run; a standby registers only while it may not
// take, gives a grant back, clears a failsafe hold; and the peer requests
// it answers.
#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

#include "daemon/failsafe_side.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

const std::string secret = "unit-test-peer-secret-0123456789abcdef";

config peers_config(const std::string& self) {
  config cfg;
  cfg.election = "jobs";
  cfg.node_id = self;
  cfg.lease.ttl = 2000ms;
  cfg.lease.renew_interval = 666ms;
  cfg.lease.renew_deadline = 1333ms;
  cfg.lease.retry_interval = 500ms;
  cfg.lease.failsafe = failsafe_mode::peers;
  cfg.lease.failsafe_listen = "127.0.0.1:9465";
  return cfg;
}

lease_timing timing_of(const config& cfg) {
  lease_timing t;
  t.ttl = cfg.lease.ttl;
  t.renew_interval = cfg.lease.renew_interval;
  t.renew_deadline = cfg.lease.renew_deadline;
  t.retry_interval = cfg.lease.retry_interval;
  return t;
}

struct sent_request {
  std::string address;
  peer_wire::message message;
  peer_client::handler done;
};

// The store's listing of node-1 to node-3, made a moment ago.
candidate_snapshot two_peers() {
  candidate_snapshot known;
  known.at = mono_clock::now() + 10000s;  // a listing is taken as made at the side's now at the latest
  known.list = {candidate_info{"node-1", 0, milliseconds(-1), milliseconds(-1), milliseconds(0),
                               "10.0.0.1:9465"},
                candidate_info{"node-2", 0, milliseconds(-1), milliseconds(-1), milliseconds(0),
                               "10.0.0.2:9465"},
                candidate_info{"node-3", 0, milliseconds(-1), milliseconds(-1), milliseconds(0),
                               "10.0.0.3:9465"}};
  return known;
}

// One node's failsafe_side with its machine, and what it posted and sent.
struct side_harness {
  explicit side_harness(const std::string& self, time_point t0)
      : cfg(peers_config(self)), machine(timing_of(cfg), 1), now(t0), started(t0) {
    failsafe_side::hooks h;
    h.post = [this](event e) {
      posted.push_back(e);
      machine.step(e, now);
    };
    h.arm_round = [this](time_point at) { round_at = at; };
    h.send = [this](const std::string& address, std::string line, milliseconds,
                    peer_client::handler done) {
      auto d = peer_wire::decode(line, secret, cfg.election, to_of(line));
      EXPECT_TRUE(d.msg) << d.error;
      sent.push_back({address, d.msg.value_or(peer_wire::message{}), std::move(done)});
    };
    h.now = [this] { return now; };
    side = std::make_unique<failsafe_side>(cfg, secret, machine, std::move(h), started);
  }

  // The addressee named in a line (the request is checked as its addressee would).
  static std::string to_of(const std::string& line) {
    const auto at = line.find("\"to\":\"");
    return line.substr(at + 6, line.find('"', at + 6) - at - 6);
  }

  // Wins the lease at `now` with `token`, as store_side would tell it.
  void lead(std::uint64_t token) {
    machine.step(events::start{}, now);
    auto args = side->acquire_args(two_peers(), now);
    EXPECT_TRUE(args.may_win);
    EXPECT_EQ(args.list.seq, 1u);
    EXPECT_EQ(side->granted(token, now), std::nullopt);
    machine.step(events::acquired{now, token}, now);
  }

  // Answers request `r` as its peer would: confirmed with a promise of `ms`.
  void confirm(sent_request& r, std::uint64_t ms = 2000) {
    peer_wire::message a = r.message;
    a.what = peer_wire::kind::confirmed;
    std::swap(a.from, a.to);
    a.ms = ms;
    r.done("", peer_wire::encode(a, secret).line);
  }

  config cfg;
  election_machine machine;
  time_point now;
  time_point started;
  std::unique_ptr<failsafe_side> side;
  std::vector<event> posted;
  std::deque<sent_request> sent;
  std::optional<time_point> round_at;
};

// A store error of that store-neutral kind.
store_error of_kind(store_errc c) {
  return {std::error_code(static_cast<int>(c), store_category()), "x"};
}

store_error unreachable() { return of_kind(store_errc::unavailable); }

TEST(recent_peers, the_listed_and_the_answering_within_two_ttls) {
  const auto t0 = mono_clock::now();
  recent_peers recent("node-1", 4000ms);
  candidate_snapshot known;
  known.list = {candidate_info{"node-1", 0, milliseconds(-1), milliseconds(-1), milliseconds(0),
                               "10.0.0.1:9465"},
                candidate_info{"node-3", 0, milliseconds(-1), milliseconds(-1), milliseconds(0),
                               "10.0.0.3:9465"},
                candidate_info{"node-2", 0, milliseconds(-1), milliseconds(-1), milliseconds(0),
                               "10.0.0.2:9465"}};
  recent.listed(known, t0);
  EXPECT_TRUE(recent.list(t0).empty()) << "a snapshot never made lists nobody";
  known.at = t0;
  recent.listed(known, t0);
  auto list = recent.list(t0 + 1000ms);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0], (failsafe_peer{"node-2", "10.0.0.2:9465"}));
  EXPECT_EQ(list[1], (failsafe_peer{"node-3", "10.0.0.3:9465"}));
  // The store came back empty: its listing names nobody, but node-2 kept
  // answering; node-3 drops out two ttls after it was last seen.
  recent.listed(candidate_snapshot{{}, t0 + 3000ms, {}, {}}, t0 + 3000ms);
  recent.answered("node-2", t0 + 3500ms);
  list = recent.list(t0 + 5000ms);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].node, "node-2");
  EXPECT_TRUE(recent.list(t0 + 7600ms).empty());
  // A node never listed is not added by an answer.
  recent.answered("node-9", t0 + 7600ms);
  EXPECT_TRUE(recent.list(t0 + 7600ms).empty());
}

TEST(failsafe_side, only_an_unreachable_store_starts_rounds) {
  EXPECT_TRUE(store_unreachable(of_kind(store_errc::unavailable).code));
  EXPECT_TRUE(store_unreachable(of_kind(store_errc::timeout).code));
  EXPECT_TRUE(store_unreachable(of_kind(store_errc::no_quorum).code));
  for (auto c : {store_errc::auth, store_errc::protocol, store_errc::refused}) {
    EXPECT_FALSE(store_unreachable(of_kind(c).code));
    side_harness h("node-1", mono_clock::now());
    h.now += 2000ms;  // a ttl after its start
    h.lead(42);
    h.side->next_list(two_peers());
    h.side->renew_failed(of_kind(c), h.now);
    EXPECT_TRUE(h.sent.empty()) << store_error_kind(of_kind(c).code);
    EXPECT_FALSE(h.side->resume_instead(h.now));
  }
}

TEST(failsafe_side, a_round_every_peer_confirmed_reaches_the_machine) {
  side_harness h("node-1", mono_clock::now());
  h.now += 2000ms;
  const auto t0 = h.now;
  h.lead(42);
  // The first renewal carried both peers and was acknowledged.
  const auto list = h.side->next_list(two_peers());
  ASSERT_EQ(list.peers.size(), 2u);
  EXPECT_EQ(list.peers[0], (failsafe_peer{"node-2", "10.0.0.2:9465"}));
  h.side->written(list.seq, h.now);
  // The next one fails: the store is away.
  h.now = t0 + 700ms;
  h.side->next_list(two_peers());
  h.side->renew_failed(unreachable(), h.now);
  ASSERT_EQ(h.sent.size(), 2u);
  EXPECT_EQ(h.sent[0].address, "10.0.0.2:9465");
  EXPECT_EQ(h.sent[0].message.what, peer_wire::kind::confirm);
  EXPECT_EQ(h.sent[0].message.leader, "node-1");
  EXPECT_EQ(h.sent[0].message.token, 42u);
  ASSERT_TRUE(h.round_at);
  EXPECT_EQ(*h.round_at, h.now + 666ms) << "the next round a renew interval later";
  const auto round_sent = h.now;
  h.now += 5ms;
  h.confirm(h.sent[0]);
  EXPECT_TRUE(h.posted.empty()) << "one of two is no round";
  h.confirm(h.sent[1]);
  ASSERT_EQ(h.posted.size(), 1u);
  const auto* c = std::get_if<events::confirmed>(&h.posted[0]);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->sent, round_sent);
  EXPECT_EQ(c->valid_until, round_sent + 2000ms - lease_drift(2000ms, default_drift_factor));
  EXPECT_EQ(h.machine.valid_until(), c->valid_until) << "the machine took it";
  const auto report = h.side->report(h.now);
  EXPECT_TRUE(report["on_confirmations"].get<bool>()) << report.dump();
  EXPECT_EQ(report["round_confirmed"], 2);
  EXPECT_EQ(h.side->gauges(h.now).rounds_counted, 1u);
  // A renewal answered lost meanwhile: resume, not stop.
  EXPECT_TRUE(h.side->resume_instead(h.now));
  // The store is back: rounds end.
  h.side->written(h.side->next_list(two_peers()).seq, h.now);
  EXPECT_FALSE(h.side->resume_instead(h.now));
  h.sent.clear();
  h.side->on_round_due(h.now + 666ms);
  EXPECT_TRUE(h.sent.empty());
}

TEST(failsafe_side, a_refusal_or_a_silent_peer_counts_no_round) {
  side_harness h("node-1", mono_clock::now());
  h.now += 2000ms;
  h.lead(42);
  h.side->written(h.side->next_list(two_peers()).seq, h.now);
  h.side->renew_failed(unreachable(), h.now);
  ASSERT_EQ(h.sent.size(), 2u);
  h.confirm(h.sent[0]);
  peer_wire::message no = h.sent[1].message;
  no.what = peer_wire::kind::refused;
  std::swap(no.from, no.to);
  no.reason = "this node knows a newer term";
  h.sent[1].done("", peer_wire::encode(no, secret).line);
  EXPECT_TRUE(h.posted.empty());
  // A forged answer (another secret) and a transport error count nothing.
  h.side->on_round_due(h.now + 666ms);
  ASSERT_EQ(h.sent.size(), 4u);
  peer_wire::message forged = h.sent[2].message;
  forged.what = peer_wire::kind::confirmed;
  std::swap(forged.from, forged.to);
  forged.ms = 2000;
  h.sent[2].done("", peer_wire::encode(forged, "another-secret-of-at-least-32-bytes").line);
  h.sent[3].done("connect 10.0.0.3:9465: Connection refused", "");
  EXPECT_TRUE(h.posted.empty());
  const auto report = h.side->report(h.now);
  EXPECT_EQ(report["round_confirmed"], 0) << report.dump();
  EXPECT_TRUE(report.contains("round_trouble")) << report.dump();
}

TEST(failsafe_side, a_standby_registers_only_while_it_may_not_take) {
  const auto t0 = mono_clock::now();
  side_harness h("node-2", t0);
  // Within a ttl of its start (F7).
  auto args = h.side->acquire_args(two_peers(), h.now);
  EXPECT_FALSE(args.may_win);
  acquire_answer abstained;
  abstained.outcome = acquire_outcome::held_back;
  abstained.why = "registered only";
  auto verdict = h.side->refused(abstained, h.now);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->retry_at, t0 + 2000ms);
  // A grant that came back while it may not take: given back unused.
  auto given_back = h.side->granted(77, h.now);
  ASSERT_TRUE(given_back);
  EXPECT_TRUE(given_back->give_back);
  // A ttl later it may.
  h.now = t0 + 2000ms;
  EXPECT_TRUE(h.side->acquire_args(two_peers(), h.now).may_win);
}

TEST(failsafe_side, a_standby_confirms_then_keeps_its_promise_and_refuses_a_replay) {
  const auto t0 = mono_clock::now();
  side_harness h("node-2", t0);
  h.now = t0 + 3000ms;
  peer_wire::message ask;
  ask.what = peer_wire::kind::confirm;
  ask.election = "jobs";
  ask.from = "node-1";
  ask.to = "node-2";
  ask.leader = "node-1";
  ask.token = 42;
  ask.nonce = "00112233445566778899aabbccddeeff";
  ask.sent_ms = 123456;
  const auto line = peer_wire::encode(ask, secret).line;
  auto answer = h.side->on_request(line, h.now);
  ASSERT_FALSE(answer.line.empty()) << answer.refusal;
  auto d = peer_wire::decode(answer.line, secret, "jobs", "node-1");
  ASSERT_TRUE(d.msg) << d.error;
  EXPECT_TRUE(peer_wire::answers(ask, *d.msg));
  EXPECT_EQ(d.msg->what, peer_wire::kind::confirmed);
  EXPECT_EQ(d.msg->ms, 2000u);
  // It keeps its promise: no acquire that can win, and it registers it.
  auto args = h.side->acquire_args(two_peers(), h.now + 1000ms);
  EXPECT_FALSE(args.may_win);
  ASSERT_TRUE(args.promise);
  EXPECT_EQ(args.promise->leader, "node-1");
  EXPECT_EQ(args.promise->token, 42u);
  EXPECT_EQ(args.promise->remaining, 1000ms);
  // Its failed acquires retry every retry_interval while it keeps it (F9).
  EXPECT_TRUE(h.side->keeps_promise(h.now + 1999ms));
  EXPECT_FALSE(h.side->keeps_promise(h.now + 2001ms));
  // The same request again: refused, signed, with its reason.
  answer = h.side->on_request(line, h.now + 10ms);
  d = peer_wire::decode(answer.line, secret, "jobs", "node-1");
  ASSERT_TRUE(d.msg);
  EXPECT_EQ(d.msg->what, peer_wire::kind::refused);
  EXPECT_NE(d.msg->reason.find("replayed"), std::string::npos) << d.msg->reason;
  // Not signed with the secret, or not a request: a refusal for the log,
  // and nothing to send back.
  EXPECT_TRUE(h.side->on_request(peer_wire::encode(ask, "x-other-secret-of-32-bytes-or-more").line,
                                 h.now)
                  .line.empty());
  auto reply_kind = ask;
  reply_kind.what = peer_wire::kind::cleared;
  const auto refused = h.side->on_request(peer_wire::encode(reply_kind, secret).line, h.now);
  EXPECT_TRUE(refused.line.empty());
  EXPECT_NE(refused.refusal.find("not a request"), std::string::npos) << refused.refusal;
}

TEST(failsafe_side, a_failsafe_hold_is_cleared_before_the_next_attempt_names_it) {
  const auto t0 = mono_clock::now();
  side_harness h("node-4", t0);  // not listed
  h.now = t0 + 3000ms;
  acquire_answer held;
  held.outcome = acquire_outcome::held_back;
  held.failsafe_hold = failsafe_hold_info{"node-1", 42, "10.0.0.1:9465",
                                          {{"node-2", "10.0.0.2:9465"}}};
  h.side->acquire_args(two_peers(), h.now);
  auto verdict = h.side->refused(held, h.now);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->retry_at, h.now + 500ms) << verdict->why;
  // It asked the listed peer and the leader.
  ASSERT_EQ(h.sent.size(), 2u);
  EXPECT_EQ(h.sent[0].message.what, peer_wire::kind::clear);
  EXPECT_EQ(h.sent[0].message.to, "node-2");
  EXPECT_EQ(h.sent[1].message.to, "node-1");
  EXPECT_EQ(h.sent[1].address, "10.0.0.1:9465");
  // The leader is gone; the peer clears it.
  h.sent[1].done("connect 10.0.0.1:9465: Connection refused", "");
  peer_wire::message cleared = h.sent[0].message;
  cleared.what = peer_wire::kind::cleared;
  std::swap(cleared.from, cleared.to);
  h.sent[0].done("", peer_wire::encode(cleared, secret).line);
  ASSERT_FALSE(h.posted.empty());
  EXPECT_TRUE(std::holds_alternative<events::peer_released>(h.posted.back())) << "try now";
  // The next attempt meets the hold again and takes, naming the token.
  verdict = h.side->refused(held, h.now);
  ASSERT_TRUE(verdict);
  EXPECT_EQ(verdict->retry_at, h.now);
  EXPECT_EQ(h.side->acquire_args(two_peers(), h.now).cleared_token, 42u);
}

}  // namespace
}  // namespace baton
