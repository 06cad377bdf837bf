// Faults against the ZooKeeper store itself (src/zookeeper), with a real
// standalone ZooKeeper: candidates that act as the election machine does
// (acquire when not leading; renew every ttl/3 while leading; stop at the
// send time of the last acknowledged acquire or renewal + ttl, or at a lost
// answer) run on one loop while the server is frozen, wiped, or the lease
// node deleted by hand, or a holder vanishes without a word. Each case
// checks the candidates' own record of their terms: no two overlap, and
// tokens only rise. The daemon-level faults (baton daemons, their workers
// and keepers) are in zookeeper_daemon_faults_test.cpp.
// The ensemble's faults are in zookeeper_ensemble_faults_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "support/fault_proxy.hpp"
#include "support/free_port.hpp"
#include "support/servers/zookeeper_server.hpp"
#include "zookeeper/zk_link.hpp"
#include "zookeeper/zookeeper_store.hpp"

#include "zookeeper_fault_candidates.hpp"

namespace baton::zookeeper_faults_test {
namespace {

class zookeeper_faults : public candidates_on_one_loop {
 protected:
  std::string servers() const override { return server.address(); }
  void TearDown() override {
    if (HasFailure()) std::fprintf(stderr, "zookeeper log:\n%s\n", server.log_tail().c_str());
    all.clear();
  }

  testing::zookeeper_server server;
};

TEST_F(zookeeper_faults, server_frozen_past_the_session_timeout) {
  add("node-a");
  add("node-b");
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
  run_for(1s);
  for (int round = 0; round < 2; ++round) {
    auto* old = leader();
    ASSERT_NE(old, nullptr);
    const auto frozen_at = mono_clock::now();
    server.freeze();
    ASSERT_TRUE(run_until([&] { return !old->leading(); }, 10s)) << "the leader never stopped";
    report("frozen server: leader stopped after",
           std::chrono::duration_cast<milliseconds>(mono_clock::now() - frozen_at));
    run_for(ttl);  // past the session timeout (= ttl)
    const auto thawed_at = mono_clock::now();
    server.thaw();
    ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 20s)) << "nobody led after the thaw";
    report("frozen server: a leader again after the thaw",
           std::chrono::duration_cast<milliseconds>(mono_clock::now() - thawed_at));
    run_for(1s);
  }
  expect_no_overlap();
}

TEST_F(zookeeper_faults, wiped_server_tokens_stay_above_the_old_ones) {
  add("node-a");
  add("node-b");
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
  for (int round = 0; round < 2; ++round) {
    run_for(1s);
    const auto before = terms.size();
    const auto wiped_at = mono_clock::now();
    server.wipe_and_restart();
    ASSERT_TRUE(run_until([&] { return terms.size() > before && anyone_leads(); }, 30s))
        << "nobody led after the wipe";
    report("wiped server: a new term after",
           std::chrono::duration_cast<milliseconds>(mono_clock::now() - wiped_at));
  }
  expect_no_overlap();
}

TEST_F(zookeeper_faults, an_operators_delete_stops_the_holder_before_a_standby_starts) {
  auto& a = add("node-a");
  ASSERT_TRUE(run_until([&] { return a.leading(); }, 10s));
  auto& b = add("node-b");
  run_for(1s);
  ASSERT_TRUE(a.leading());

  // Another client of the ensemble deletes the lease node.
  auto owner = std::make_shared<int>(0);
  zookeeper_detail::zk_link_options o;
  o.hosts = server.address();
  o.session_timeout = 4000ms;
  o.owner = owner;
  std::string error;
  auto op = zookeeper_detail::zk_link::open(io, o, error);
  ASSERT_NE(op, nullptr) << error;
  ASSERT_TRUE(run_until([&] { return op->connected(); }, 10s));
  int deleted = -1;
  op->multi({{zookeeper_detail::zk_op::kind::remove, "/baton/faults/lease", {}, -1, false}},
            [&](int rc, std::vector<zookeeper_detail::zk_op_result>) { deleted = rc; });
  ASSERT_TRUE(run_until([&] { return deleted != -1; }, 10s));
  ASSERT_EQ(deleted, 0);
  const auto deleted_at = mono_clock::now();

  ASSERT_TRUE(run_until([&] { return !a.leading(); }, 5s)) << "the holder kept leading";
  EXPECT_EQ(a.lost, 1) << "the holder's renewal did not answer lost";
  report("operator delete: the holder's renewal answered lost after",
         std::chrono::duration_cast<milliseconds>(mono_clock::now() - deleted_at));
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
  bool guarded = false;
  for (const auto& answer : b.answers) guarded = guarded || !answer.why.empty();
  EXPECT_TRUE(guarded || leader() == &a) << "b took over without the early-loss guard";
  op->close();
  expect_no_overlap();
}

TEST_F(zookeeper_faults, a_holder_gone_without_a_word_is_followed_after_its_session_expires) {
  for (int round = 0; round < 2; ++round) {
    auto& a = add("node-a-" + std::to_string(round));
    ASSERT_TRUE(run_until([&] { return a.leading(); }, 10s)) << describe(a);
    auto& b = add("node-b-" + std::to_string(round));
    run_for(1s);
    const auto gone_at = mono_clock::now();
    a.vanish();
    ASSERT_TRUE(run_until([&] { return b.leading(); }, 15s)) << "the standby never took over";
    const auto took = std::chrono::duration_cast<milliseconds>(mono_clock::now() - gone_at);
    report("holder gone without a word: the standby led after", took);
    EXPECT_GE(took, ttl - 700ms) << "taken before the session could have expired";
    b.vanish();
    run_for(ttl + 1s);  // b's session expires too before the next round
  }
  expect_no_overlap();
}

// A switchover among candidates that keep trying: the target's term follows
// the leader's at once, no other candidate (the one that handed over
// included) takes the lease meanwhile, and no two terms overlap.
TEST_F(zookeeper_faults, a_hand_over_among_trying_candidates_goes_to_its_target) {
  add("node-a");
  add("node-b");
  add("node-c");
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
    run_for(500ms);
    auto* from = leader();
    ASSERT_NE(from, nullptr);
    candidate* to = nullptr;
    for (const auto& c : all)
      if (c.get() != from && (to == nullptr || round % 2 == 1)) to = c.get();
    const auto before = terms.size();
    const auto asked_at = mono_clock::now();
    from->hand_over(to->name(), 5000ms);
    ASSERT_TRUE(run_until([&] { return terms.size() > before; }, 10s)) << describe(*from);
    const auto took = std::chrono::duration_cast<milliseconds>(mono_clock::now() - asked_at);
    report("hand-over: the target's term began after", took);
    ASSERT_EQ(from->handed_over, std::vector<release_answer>{release_answer::released})
        << describe(*from);
    from->handed_over.clear();
    EXPECT_EQ(terms.back().who, to->name()) << describe(*from);
    EXPECT_LT(took, 2000ms) << "the target waited for the window";
  }
  expect_no_overlap();
}

// A restarted daemon's store meets its predecessor's registration (the old
// session lives until it expires): it takes the node id's place, so the
// node id stays listed, once, after the old session is gone.
TEST_F(zookeeper_faults, a_restarted_candidate_stays_registered_after_its_predecessor_expires) {
  auto& first = add("node-a");
  add("node-b");
  ASSERT_TRUE(run_until([&] { return anyone_leads(); }, 10s));
  run_for(1s);
  first.vanish();
  auto& again = add("node-a");
  const auto list = [&] {
    std::vector<candidate_info> out;
    bool done = false;
    again.store().async_candidates([&](store_error e, std::vector<candidate_info> c) {
      EXPECT_FALSE(e) << e.message();
      out = std::move(c);
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }, 10s));
    std::sort(out.begin(), out.end(),
              [](const candidate_info& x, const candidate_info& y) { return x.node < y.node; });
    return out;
  };
  ASSERT_TRUE(run_until([&] { return !again.answers.empty() || !again.errors.empty(); }, 10s));
  run_for(300ms);
  auto now_listed = list();
  ASSERT_EQ(now_listed.size(), 2u);
  EXPECT_EQ(now_listed[0].node, "node-a");
  EXPECT_EQ(now_listed[1].node, "node-b");
  EXPECT_GE(now_listed[0].live_for, 0ms);
  // The predecessor registered with node-b; its successor a second later.
  EXPECT_LT(now_listed[0].live_for + 500ms, now_listed[1].live_for)
      << "the predecessor's registration is still listed";

  run_for(ttl + 1s);  // past the predecessor's session timeout
  auto later = list();
  ASSERT_EQ(later.size(), 2u) << "node-a left the list with its predecessor's session";
  EXPECT_EQ(later[0].node, "node-a");
  EXPECT_GE(later[0].live_for, ttl);
  expect_no_overlap();
}

// A test for fault_proxy::drop_replies_after: true once the bytes a
// ZooKeeper client sent since it was made hold a multi request. Requests
// are frames of a 4-byte big-endian length, then the header's xid and type
// (ZOO_MULTI_OP, 14); the C client may write a frame's length and its body
// apart, so the bytes are gathered before they are read as frames. Made at
// a quiet moment, the first bytes it sees start a frame.
std::function<bool(std::string_view)> a_multi_request() {
  struct stream {
    std::string bytes;
    std::size_t frame = 0;
  };
  auto s = std::make_shared<stream>();
  return [s](std::string_view chunk) {
    s->bytes.append(chunk);
    const auto be32 = [&](std::size_t at) {
      std::uint32_t v = 0;
      for (std::size_t k = 0; k < 4; ++k)
        v = (v << 8) | static_cast<unsigned char>(s->bytes[at + k]);
      return v;
    };
    for (int frames = 0; frames < 64 && s->frame + 12 <= s->bytes.size(); ++frames) {
      if (be32(s->frame + 8) == 14) return true;
      s->frame += 4 + std::size_t{be32(s->frame)};
    }
    return false;
  };
}

// A reply to the acquire lost on its way back: the proxy passes the multi
// to the server and swallows what comes back, then resets the connection.
// The multi landed, so on the retry the node with this store's data and
// session is found to be ours, and the store does not stand by behind its
// own term.
TEST_F(zookeeper_faults, a_lost_acquire_reply_is_found_ours_on_the_retry) {
  testing::fault_proxy proxy(server.port());
  auto via_proxy = options("node-a");
  via_proxy.servers = "127.0.0.1:" + std::to_string(proxy.port());
  via_proxy.connect_timeout = 5000ms;
  via_proxy.command_timeout = 3000ms;
  zookeeper_store a(io, via_proxy);
  zookeeper_store b(io, options("node-b"));
  const auto acquire = [&](lease_store& s) {
    std::pair<store_error, acquire_answer> out;
    bool done = false;
    s.async_acquire([&](store_error e, acquire_answer x) {
      out = {e, x};
      done = true;
    });
    EXPECT_TRUE(run_until([&] { return done; }, 20s));
    return out;
  };
  const auto release = [&](lease_store& s) {
    bool done = false;
    s.async_release([&](store_error, release_answer) { done = true; });
    EXPECT_TRUE(run_until([&] { return done; }, 20s));
  };
  // The first start on this server: the record is made, then held back.
  for (int i = 0; i < 40 && !acquire(a).second.acquired(); ++i) run_for(100ms);
  release(a);

  proxy.drop_replies_after(a_multi_request());
  bool done = false;
  std::pair<store_error, acquire_answer> first;
  a.async_acquire([&](store_error e, acquire_answer x) {
    first = {e, x};
    done = true;
  });
  // The other candidate looks only once the multi went through (before, it
  // could take the lease itself and make node-a's multi fail).
  ASSERT_TRUE(run_until([&] { return proxy.replies_dropped_on() > 0; }, 20s))
      << "no multi went through the proxy";
  std::pair<store_error, acquire_answer> seen;
  for (int i = 0; i < 100; ++i) {
    seen = acquire(b);
    if (seen.first || seen.second.outcome == acquire_outcome::held) break;
    run_for(50ms);
  }
  ASSERT_FALSE(seen.first) << seen.first.message();
  ASSERT_EQ(seen.second.outcome, acquire_outcome::held) << "node-a's multi did not take the lease";
  EXPECT_EQ(seen.second.holder, "node-a");
  EXPECT_FALSE(done) << "the acquire was answered although its reply was swallowed";
  proxy.reset();
  ASSERT_TRUE(run_until([&] { return done; }, 20s));
  proxy.pass();
  ASSERT_TRUE(first.first) << "the acquire whose reply was lost reported no error";
  EXPECT_EQ(first.first.message().rfind("acquire on", 0), 0u) << first.first.message();

  auto again = acquire(a);
  for (int i = 0; i < 10 && again.first; ++i) again = acquire(a);
  ASSERT_FALSE(again.first) << again.first.message();
  EXPECT_TRUE(again.second.acquired()) << "the store stood by behind its own term";
  EXPECT_GT(again.second.token, seen.second.token);
  release(a);
}

// The requests of one kind a ZooKeeper client sends, counted from the
// bytes it sends (a fault_proxy's test that never cuts the replies): frames
// of a 4-byte big-endian length, then the header's xid and type.
class request_counter {
 public:
  std::function<bool(std::string_view)> test() {
    return [this](std::string_view chunk) {
      const std::lock_guard lock(mutex_);
      bytes_.append(chunk);
      const auto be32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (std::size_t k = 0; k < 4; ++k)
          v = (v << 8) | static_cast<unsigned char>(bytes_[at + k]);
        return v;
      };
      while (frame_ + 4 <= bytes_.size()) {
        const auto length = std::size_t{be32(frame_)};
        if (frame_ + 4 + length > bytes_.size()) break;  // the rest comes later
        if (length >= 8) {
          ++seen_[be32(frame_ + 8)];
          order_.push_back(be32(frame_ + 8));
        }
        frame_ += 4 + length;
      }
      return false;
    };
  }
  int count(std::uint32_t type) {
    const std::lock_guard lock(mutex_);
    return seen_[type];
  }
  // How many requests went through so far, and the types of those after
  // the first `from`, in order.
  std::size_t sent() {
    const std::lock_guard lock(mutex_);
    return order_.size();
  }
  std::vector<std::uint32_t> types_since(std::size_t from) {
    const std::lock_guard lock(mutex_);
    return {order_.begin() + static_cast<std::ptrdiff_t>(std::min(from, order_.size())),
            order_.end()};
  }

 private:
  std::mutex mutex_;
  std::string bytes_;
  std::size_t frame_ = 0;
  std::map<std::uint32_t, int> seen_;
  std::vector<std::uint32_t> order_;
};

constexpr std::uint32_t zoo_get_data_op = 4;
constexpr std::uint32_t zoo_get_children_op = 8;
constexpr std::uint32_t zoo_multi_op = 14;

// A held answer counts the live candidates above this one (the holder
// aside). The standby reads the registry's names with a children watch:
// again (within an acquire) only once a candidate came or went, so its
// acquires stay two reads each while the registry does not change.
TEST_F(zookeeper_faults, a_standby_counts_who_outranks_it_and_reads_the_registry_after_changes) {
  auto& a = add("node-a", 0);
  ASSERT_TRUE(run_until([&] { return a.leading(); }, 10s));
  auto& b = add("node-b", 5);
  request_counter requests;  // outlives the proxy, whose thread calls it
  testing::fault_proxy proxy(server.port());
  proxy.drop_replies_after(requests.test());
  auto via_proxy = options("node-c");
  via_proxy.servers = "127.0.0.1:" + std::to_string(proxy.port());
  via_proxy.identity.priority = 1;
  auto& c = add(via_proxy);
  const auto c_says = [&](int n) {
    return [&c, n] { return !c.answers.empty() && c.answers.back().outranked_by == n; };
  };
  ASSERT_TRUE(run_until(c_says(1), 10s)) << describe(c);

  // Nothing changes: two reads per acquire, no registry read.
  const auto children0 = requests.count(zoo_get_children_op);
  const auto reads0 = requests.count(zoo_get_data_op);
  const auto answers0 = c.answers.size();
  run_for(1s);
  const auto acquires = static_cast<int>(c.answers.size() - answers0);
  EXPECT_GE(acquires, 5);
  EXPECT_EQ(requests.count(zoo_get_children_op), children0);
  EXPECT_LE(requests.count(zoo_get_data_op) - reads0, 2 * acquires + 2);
  for (auto i = answers0; i < c.answers.size(); ++i) {
    EXPECT_EQ(c.answers[i].outcome, acquire_outcome::held);
    EXPECT_EQ(c.answers[i].holder, "node-a");
    EXPECT_EQ(c.answers[i].outranked_by, 1) << "answer " << i;
  }

  // node-b's process dies: once its session expires, it outranks no one.
  b.vanish();
  const auto vanished = mono_clock::now();
  ASSERT_TRUE(run_until(c_says(0), ttl + 3s)) << describe(c);
  EXPECT_GE(mono_clock::now() - vanished, ttl - tick) << "gone before its session expired";
  EXPECT_EQ(requests.count(zoo_get_children_op), children0 + 1) << "one read per change";

  // It starts again: counted again.
  add("node-b", 5);
  ASSERT_TRUE(run_until(c_says(1), 10s)) << describe(c);
  run_for(500ms);
  EXPECT_EQ(requests.count(zoo_get_children_op), children0 + 2) << "one read per change";
  expect_no_overlap();
}

// Standbys that hear a crashed holder's node go take at once, without a
// read: the record is as their last acquire read it (its watch silent
// since), and the take's multi checks its version and creates the lease
// node only if it is absent. Two of them race: one takes, with a token
// above the crashed holder's; the other's take fails on the record's
// version, and its retry reads and answers held by the winner.
TEST_F(zookeeper_faults, standbys_that_hear_a_crashed_holder_go_take_without_reading) {
  auto& a = add("node-a");
  ASSERT_TRUE(run_until([&] { return a.leading(); }, 10s));
  const auto crashed_token = terms.back().token;
  request_counter requests;  // outlives the proxy, whose thread calls it
  testing::fault_proxy proxy(server.port());
  proxy.drop_replies_after(requests.test());
  auto via_proxy = options("node-b");
  via_proxy.servers = "127.0.0.1:" + std::to_string(proxy.port());
  zookeeper_store b(io, via_proxy);
  zookeeper_store c(io, options("node-c"));
  int released_b = 0;
  int released_c = 0;
  b.watch([&](const store_event& e) {
    if (std::holds_alternative<store_events::released>(e)) ++released_b;
  });
  c.watch([&](const store_event& e) {
    if (std::holds_alternative<store_events::released>(e)) ++released_c;
  });
  std::vector<acquire_answer> answers_b;
  std::vector<acquire_answer> answers_c;
  const auto ask = [](zookeeper_store& s, std::vector<acquire_answer>& into) {
    s.async_acquire([&into](store_error e, acquire_answer answer) {
      EXPECT_FALSE(e) << e.message();
      into.push_back(answer);
    });
  };
  ask(b, answers_b);
  ask(c, answers_c);
  ASSERT_TRUE(run_until([&] { return !answers_b.empty() && !answers_c.empty(); }, 10s));
  EXPECT_EQ(answers_b.back().holder, "node-a");
  EXPECT_EQ(answers_c.back().holder, "node-a");
  run_for(500ms);  // the watches armed; a renewal or two seen

  a.vanish();
  ASSERT_TRUE(run_until([&] { return released_b > 0 && released_c > 0; }, ttl + 3s))
      << "the standbys never heard the lease node go";
  auto before = requests.sent();
  ask(b, answers_b);
  ask(c, answers_c);
  ASSERT_TRUE(run_until([&] { return answers_b.size() == 2 && answers_c.size() == 2; }, 10s));
  // The server may expire the crashed holder's session a few ms short of a
  // ttl after the renewal the standbys saw: then both hold back until that
  // lease could have ended (the vanished-node rule), as the daemon does,
  // and try again.
  const auto vanished_early = [](const acquire_answer& answer) {
    return answer.outcome == acquire_outcome::held_back &&
           answer.why.find("vanished") != std::string::npos && answer.remaining < ttl;
  };
  const bool held_back_first = vanished_early(answers_b.back()) && vanished_early(answers_c.back());
  if (held_back_first) {
    const auto wait = std::max(answers_b.back().remaining, answers_c.back().remaining);
    report("both standbys held back first by the vanished-node rule", wait);
    run_for(wait + 20ms);
    before = requests.sent();
    ask(b, answers_b);
    ask(c, answers_c);
    ASSERT_TRUE(run_until([&] { return answers_b.size() == 3 && answers_c.size() == 3; }, 10s));
  }
  const auto& got_b = answers_b.back();
  const auto& got_c = answers_c.back();
  const auto said = [](const acquire_answer& answer) {
    return std::to_string(static_cast<int>(answer.outcome)) + " holder " + answer.holder +
           " token " + std::to_string(answer.token) + " remaining " +
           std::to_string(answer.remaining.count()) + " why " + answer.why;
  };
  ASSERT_NE(got_b.acquired(), got_c.acquired())
      << "exactly one takes: b " << said(got_b) << "; c " << said(got_c);
  const auto& won = got_b.acquired() ? got_b : got_c;
  const auto& lost = got_b.acquired() ? got_c : got_b;
  EXPECT_GT(won.token, crashed_token);
  EXPECT_EQ(lost.outcome, acquire_outcome::held);
  EXPECT_EQ(lost.holder, won.holder);
  EXPECT_EQ(lost.token, won.token);
  // node-b's take is the first thing it writes, with no read before it
  // (after a hold-back its retry reads: the deletion is no longer fresh).
  if (!held_back_first) {
    const auto types = requests.types_since(before);
    const auto take = std::find(types.begin(), types.end(), zoo_multi_op);
    ASSERT_NE(take, types.end()) << "node-b sent no take";
    EXPECT_EQ(std::count(types.begin(), take, zoo_get_data_op), 0) << "a read before the take";
  }
  b.close();
  c.close();
}

// A candidate in a crash loop, restarting faster than two ttls (its
// predecessor's session and registration still live): each start registers
// anew, so its live_for counts from its latest start and never spans the
// loop. A start with another priority replaces the predecessor's node at
// once, rather than when its session expires.
TEST_F(zookeeper_faults, a_candidate_restarting_faster_than_two_ttls_is_live_since_its_last_start) {
  auto& a = add("node-a", 0);
  ASSERT_TRUE(run_until([&] { return a.leading(); }, 10s));
  auto& c = add("node-c", 3);
  const auto loop_began = mono_clock::now();
  candidate* b = nullptr;
  for (const int priority : {5, 5, 1, 5, 5}) {
    if (b) b->vanish();
    const auto started = mono_clock::now();
    b = &add("node-b", priority);
    ASSERT_TRUE(run_until([&] { return !b->answers.empty() || !b->errors.empty(); }, 10s));
    // Node-c sees who outranks it now, well before the predecessor's
    // session (of another priority) could expire.
    const int above = priority > 3 ? 1 : 0;
    ASSERT_TRUE(run_until(
        [&] {
          return !c.answers.empty() && c.answers.back().outranked_by == above &&
                 mono_clock::now() - started > 200ms;
        },
        ttl / 2))
        << "priority " << priority << ": " << describe(c);
    const auto listed = list(c.store());
    const auto since_start = mono_clock::now() - started;
    ASSERT_EQ(listed.size(), 3u);
    EXPECT_EQ(listed[1].node, "node-b");
    EXPECT_EQ(listed[1].priority, priority);
    EXPECT_GE(listed[1].live_for, 0ms);
    EXPECT_LE(listed[1].live_for, since_start) << "live since before its latest start";
    EXPECT_GE(listed[0].live_for, mono_clock::now() - loop_began - 500ms) << "node-a";
    run_for(400ms);
  }
  EXPECT_GT(mono_clock::now() - loop_began, ttl) << "the loop ran shorter than meant";
  expect_no_overlap();
}

// Closing or destroying a store never blocks the loop on a server that does
// not answer: the close request is not sent.
TEST_F(zookeeper_faults, closing_stores_while_the_server_is_frozen_does_not_block) {
  auto& a = add("node-a");
  ASSERT_TRUE(run_until([&] { return a.leading(); }, 10s));
  auto& b = add("node-b");
  run_for(500ms);
  server.freeze();
  const auto t0 = mono_clock::now();
  b.store().close();
  a.vanish();
  b.vanish();
  const auto took = std::chrono::duration_cast<milliseconds>(mono_clock::now() - t0);
  server.thaw();
  report("closing two stores on a frozen server took", took);
  EXPECT_LT(took, 500ms);
}

TEST_F(zookeeper_faults, digest_acls_keep_other_clients_off_the_election) {
  auto dir =
      std::filesystem::temp_directory_path() / ("baton-zk-auth-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "password") << "s3cret\n";
  auto with_auth = options("node-a");
  with_auth.auth_scheme = "digest";
  with_auth.auth_user = "baton";
  with_auth.password_file = (dir / "password").string();
  auto a = std::make_unique<zookeeper_store>(io, with_auth);
  store_error a_error;
  acquire_answer a_answer;
  bool a_done = false;
  // The first start on an empty server: the record is made, held back.
  for (int i = 0; i < 50 && !a_answer.acquired(); ++i) {
    a_done = false;
    a->async_acquire([&](store_error e, acquire_answer x) {
      a_error = e;
      a_answer = x;
      a_done = true;
    });
    ASSERT_TRUE(run_until([&] { return a_done; }, 10s));
    ASSERT_FALSE(a_error) << a_error.message();
    if (!a_answer.acquired()) run_for(200ms);
  }
  ASSERT_TRUE(a_answer.acquired());

  // Without the credentials: it can read who holds it (world read), and
  // nothing more.
  auto b = std::make_unique<zookeeper_store>(io, options("node-b"));
  bool released = false;
  a->async_release([&](store_error e, release_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_EQ(r, release_answer::released);
    released = true;
  });
  ASSERT_TRUE(run_until([&] { return released; }, 10s));
  store_error b_error;
  bool b_done = false;
  b->async_acquire([&](store_error e, acquire_answer) {
    b_error = e;
    b_done = true;
  });
  ASSERT_TRUE(run_until([&] { return b_done; }, 10s));
  EXPECT_EQ(b_error.code, make_error_code(zookeeper_errc::no_access)) << b_error.message();
  EXPECT_EQ(b_error.code, store_errc::refused);

  // A wrong password: refused as auth.
  std::ofstream(dir / "wrong") << "nope\n";
  auto wrong = with_auth;
  wrong.identity.node_id = "node-c";
  wrong.password_file = (dir / "wrong").string();
  auto c = std::make_unique<zookeeper_store>(io, wrong);
  store_error c_error;
  bool c_done = false;
  c->async_acquire([&](store_error e, acquire_answer) {
    c_error = e;
    c_done = true;
  });
  ASSERT_TRUE(run_until([&] { return c_done; }, 10s));
  EXPECT_TRUE(c_error) << "acquired with a wrong password";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton::zookeeper_faults_test
