// etcd_store's calls for lease.failsafe peers against a real one-member etcd
// (docs/safety.md, rules F1, F6, F7, F8 and F9; the record's form in
// src/etcd/failsafe_record.hpp): the record a grant writes and a release
// deletes, the list a renewal writes only when its number is above the
// record's, the failsafe hold a free lease answers until the term is
// cleared, the register-only acquire, the promise a registration carries,
// and the resume after the lease expired or etcd lost its data, with the
// token a held answer and the watch name for a resumed term; and a renewal
// that answers within the command timeout in all, so that its failure
// comes while a round of confirmations can still count (F3).
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etcd/etcd_store.hpp"
#include "support/fault_proxy.hpp"
#include "support/servers/etcd_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using namespace std::chrono_literals;

constexpr const char* election = "jobs";
const std::string dir = std::string("baton/") + election + "/";

template <typename T>
struct outcome {
  int calls = 0;
  baton::store_error error;
  T value{};
};

// Runs `io` until `done()` holds, 10 s at most.
bool settle(asio::io_context& io, const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    io.restart();
    io.run_one_for(deadline - now);
  }
  return true;
}

template <typename T>
outcome<T> answer_of(asio::io_context& io, const char* what,
                     const std::function<void(std::function<void(baton::store_error, T)>)>& call) {
  auto out = std::make_shared<outcome<T>>();
  call([out](baton::store_error e, T r) {
    ++out->calls;
    out->error = std::move(e);
    out->value = std::move(r);
  });
  EXPECT_TRUE(settle(io, [&] { return out->calls > 0; })) << what << " never completed";
  return *out;
}

baton::failsafe_list list_of(std::uint64_t seq, std::vector<baton::failsafe_peer> peers) {
  return {seq, std::move(peers)};
}

class etcd_failsafe_test : public ::testing::Test {
 protected:
  etcd_failsafe_test() {
    // `baton init-store`'s way: no first-start hold-back.
    auto init = make("init", "");
    answer_of<baton::record_answer>(io, "create record",
                                    [&](auto h) { init->async_create_record(std::move(h)); });
    server.save_snapshot("before");
  }

  std::unique_ptr<baton::etcd_store> make(const std::string& node, const std::string& address) {
    baton::etcd_store_options o;
    o.endpoints = {server.client_url()};
    o.identity = {election, node, milliseconds(2000)};
    o.identity.peer_address = address;
    o.connect_timeout = 2000ms;
    o.command_timeout = 2000ms;
    return std::make_unique<baton::etcd_store>(io, std::move(o));
  }

  outcome<baton::acquire_answer> acquire_with(baton::etcd_store& store,
                                              const baton::failsafe_acquire& a) {
    return answer_of<baton::acquire_answer>(
        io, "acquire", [&](auto h) { store.failsafe()->async_acquire(a, std::move(h)); });
  }
  outcome<baton::renew_answer> renew_with(baton::etcd_store& store, const baton::failsafe_list& l) {
    return answer_of<baton::renew_answer>(
        io, "renew", [&](auto h) { store.failsafe()->async_renew(l, std::move(h)); });
  }
  outcome<baton::renew_answer> resume_with(baton::etcd_store& store, std::uint64_t token,
                                           const baton::failsafe_list& l) {
    return answer_of<baton::renew_answer>(
        io, "resume", [&](auto h) { store.failsafe()->async_resume(token, l, std::move(h)); });
  }
  // After etcd restarted: the first call meets the old connection's end, as
  // the daemon's does, and the daemon's next one goes through.
  outcome<baton::renew_answer> resume_after_restart(baton::etcd_store& store, std::uint64_t token,
                                                    const baton::failsafe_list& l) {
    auto r = resume_with(store, token, l);
    for (int i = 0; i < 3 && r.error; ++i) r = resume_with(store, token, l);
    return r;
  }
  outcome<baton::release_answer> release(baton::etcd_store& store) {
    return answer_of<baton::release_answer>(io, "release",
                                            [&](auto h) { store.async_release(std::move(h)); });
  }
  std::string get(const std::string& key) {
    auto v = server.etcdctl("get --print-value-only " + dir + key);
    if (!v.empty() && v.back() == '\n') v.pop_back();
    return v;
  }
  // The record without its first field, the list number's 20 digits.
  std::string record_after_seq() {
    const auto r = get("failsafe");
    return r.size() > 21 ? r.substr(21) : r;
  }
  std::uint64_t record_seq() {
    const auto r = get("failsafe");
    return r.size() > 20 ? std::stoull(r.substr(0, 20)) : 0;
  }
  // node-a wins with node-b and node-c listed.
  std::uint64_t a_leads() {
    baton::failsafe_acquire args;
    args.list = list_of(1, {{"node-b", "10.0.0.2:9465"}, {"node-c", "10.0.0.3:9465"}});
    auto won = acquire_with(*a, args);
    EXPECT_FALSE(won.error) << won.error.message();
    EXPECT_TRUE(won.value.acquired()) << won.value.why;
    return won.value.token;
  }
  // The lease key gone as after its expiry, the record kept.
  void lease_expires() {
    server.etcdctl("del " + dir + "holder");
    server.etcdctl("del " + dir + "lease");
  }
  // Runs the loop for `d` of wall time, whatever happens in it.
  void run_for(milliseconds d) {
    asio::steady_timer timer(io, d);
    bool done = false;
    timer.async_wait([&](const boost::system::error_code&) { done = true; });
    settle(io, [&] { return done; });
  }

  baton::testing::etcd_server server;
  asio::io_context io;
  std::unique_ptr<baton::etcd_store> a = make("node-a", "10.0.0.1:9465");
  std::unique_ptr<baton::etcd_store> b = make("node-b", "10.0.0.2:9465");
  std::unique_ptr<baton::etcd_store> c = make("node-c", "10.0.0.3:9465");
};

TEST_F(etcd_failsafe_test, a_grant_writes_the_record_and_a_release_deletes_it) {
  const auto token = a_leads();
  EXPECT_EQ(record_seq(), 1u);
  const auto lease_value = get("lease");
  const auto identity = lease_value.substr(0, lease_value.rfind('@'));
  // A grant names its offset; the token is that plus the record's revision.
  const auto r = record_after_seq();
  EXPECT_EQ(r.substr(0, 1), "+") << r;
  EXPECT_NE(r.find(" " + identity + " 10.0.0.1:9465\nnode-b 10.0.0.2:9465\nnode-c 10.0.0.3:9465"),
            std::string::npos)
      << r;
  // The token the record names, as a standby reads it.
  auto held = acquire_with(*b, {});
  EXPECT_EQ(held.value.token, token);
  EXPECT_EQ(release(*a).value, baton::release_answer::released);
  EXPECT_EQ(get("failsafe"), "") << "the release deleted the record";
}

TEST_F(etcd_failsafe_test, a_renewal_writes_its_list_only_when_its_number_is_higher) {
  const auto token = a_leads();
  auto renewed = renew_with(*a, list_of(3, {{"node-c", "10.0.0.3:9465"}}));
  EXPECT_EQ(renewed.value, baton::renew_answer::renewed) << renewed.error.message();
  EXPECT_EQ(record_seq(), 3u);
  const auto written = record_after_seq();
  EXPECT_EQ(written.substr(0, written.find(' ')), std::to_string(token)) << written;
  EXPECT_NE(written.find("\nnode-c 10.0.0.3:9465"), std::string::npos) << written;
  EXPECT_EQ(written.find("node-b"), std::string::npos) << written;
  // A late renewal with an older list renews, and leaves the list alone.
  renewed = renew_with(*a, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  EXPECT_EQ(renewed.value, baton::renew_answer::renewed) << renewed.error.message();
  EXPECT_EQ(record_seq(), 3u);
  EXPECT_EQ(record_after_seq(), written);
}

TEST_F(etcd_failsafe_test, a_free_lease_is_held_until_the_term_is_cleared) {
  const auto token = a_leads();
  lease_expires();
  auto held = acquire_with(*b, {});
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_EQ(held.value.outcome, baton::acquire_outcome::held_back);
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, token);
  EXPECT_EQ(held.value.failsafe_hold->leader_address, "10.0.0.1:9465");
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 2u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0], (baton::failsafe_peer{"node-b", "10.0.0.2:9465"}));
  EXPECT_NE(held.value.why.find("failsafe hold"), std::string::npos) << held.value.why;
  // Cleared: the grant goes through, and writes the new term's record.
  baton::failsafe_acquire cleared;
  cleared.cleared_token = token;
  cleared.list = list_of(1, {{"node-c", "10.0.0.3:9465"}});
  auto won = acquire_with(*b, cleared);
  ASSERT_TRUE(won.value.acquired()) << won.value.why << won.error.message();
  EXPECT_GT(won.value.token, token);
  EXPECT_NE(record_after_seq().find(" 10.0.0.2:9465\nnode-c 10.0.0.3:9465"), std::string::npos)
      << record_after_seq();
}

TEST_F(etcd_failsafe_test, a_caller_that_may_not_win_only_registers) {
  baton::failsafe_acquire abstaining;
  abstaining.may_win = false;
  auto r = acquire_with(*b, abstaining);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.value.outcome, baton::acquire_outcome::held_back);
  EXPECT_FALSE(r.value.failsafe_hold);
  EXPECT_NE(r.value.why.find("may not take the lease yet"), std::string::npos) << r.value.why;
  EXPECT_EQ(get("lease"), "") << "nothing granted";
  auto listed = answer_of<std::vector<baton::candidate_info>>(
      io, "candidates", [&](auto h) { a->async_candidates(std::move(h)); });
  ASSERT_EQ(listed.value.size(), 1u);
  EXPECT_EQ(listed.value[0].node, "node-b");
  EXPECT_EQ(listed.value[0].peer_address, "10.0.0.2:9465");
}

TEST_F(etcd_failsafe_test, a_registered_promise_holds_a_free_lease) {
  // node-c promised node-a's term 5000 for 3 s (F9); there is no record.
  baton::failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = baton::failsafe_promise{"node-a", 5000, 3000ms};
  acquire_with(*c, promising);
  auto held = acquire_with(*b, {});
  ASSERT_TRUE(held.value.failsafe_hold) << held.value.why;
  EXPECT_EQ(held.value.failsafe_hold->leader, "node-a");
  EXPECT_EQ(held.value.failsafe_hold->token, 5000u);
  ASSERT_EQ(held.value.failsafe_hold->peers.size(), 1u);
  EXPECT_EQ(held.value.failsafe_hold->peers[0], (baton::failsafe_peer{"node-c", "10.0.0.3:9465"}));
  baton::failsafe_acquire cleared;
  cleared.cleared_token = 5000;
  EXPECT_TRUE(acquire_with(*b, cleared).value.acquired());
  // A cool-down's mark keeps the promise.
  c->register_cooldown(1000ms);
  run_for(200ms);
  EXPECT_NE(get("candidates/node-c").find("\nfailsafe 10.0.0.3:9465 5000 node-a "),
            std::string::npos)
      << get("candidates/node-c");
}

TEST_F(etcd_failsafe_test, a_promise_that_ended_holds_nothing) {
  baton::failsafe_acquire promising;
  promising.may_win = false;
  promising.promise = baton::failsafe_promise{"node-a", 5000, 300ms};
  acquire_with(*c, promising);
  // Longer than the promise, by the revisions b's own answers carried.
  acquire_with(*b, {.may_win = false});
  run_for(600ms);
  auto won = acquire_with(*b, {});
  EXPECT_TRUE(won.value.acquired()) << won.value.why;
}

TEST_F(etcd_failsafe_test, a_resume_takes_the_term_up_again_with_its_token) {
  const auto token = a_leads();
  std::optional<std::uint64_t> announced;
  b->watch([&](const baton::store_event& e) {
    if (const auto* acquired = std::get_if<baton::store_events::acquired>(&e))
      announced = acquired->token;
  });
  settle(io, [&] { return announced.has_value(); });
  lease_expires();
  announced.reset();
  auto resumed = resume_with(*a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  EXPECT_EQ(resumed.value, baton::renew_answer::renewed);
  EXPECT_NE(get("lease"), "");
  EXPECT_EQ(record_seq(), 2u);
  EXPECT_EQ(record_after_seq().substr(0, record_after_seq().find(' ')), std::to_string(token));
  EXPECT_EQ(renew_with(*a, list_of(3, {})).value, baton::renew_answer::renewed);
  // The term is announced, and held, with its own token, not its lease
  // key's newer revision.
  EXPECT_TRUE(settle(io, [&] { return announced.has_value(); }));
  EXPECT_EQ(announced.value_or(0), token);
  auto held = acquire_with(*b, {});
  EXPECT_EQ(held.value.outcome, baton::acquire_outcome::held);
  EXPECT_EQ(held.value.token, token);
  auto look =
      answer_of<baton::lease_holder>(io, "look", [&](auto h) { c->async_look(std::move(h)); });
  EXPECT_EQ(look.value.token, token);
}

TEST_F(etcd_failsafe_test, a_resume_after_etcd_lost_its_data_keeps_the_token_rising) {
  const auto token = a_leads();
  // The snapshot from before the grant: no lease, no record of the term.
  server.restore_snapshot("before");
  auto resumed = resume_after_restart(*a, token, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, baton::renew_answer::renewed);
  EXPECT_EQ(renew_with(*a, list_of(3, {})).value, baton::renew_answer::renewed);
  // The next term's token is above the resumed one.
  ASSERT_EQ(release(*a).value, baton::release_answer::released);
  auto won = acquire_with(*b, {});
  ASSERT_TRUE(won.value.acquired()) << won.value.why << won.error.message();
  EXPECT_GT(won.value.token, token);
}

TEST_F(etcd_failsafe_test, a_fence_after_lost_data_keeps_a_resumed_term) {
  const auto token = a_leads();
  // b saw the term, so it finds the revision gone back after the restore.
  EXPECT_EQ(acquire_with(*b, {}).value.outcome, baton::acquire_outcome::held);
  server.restore_snapshot("before");
  const auto resumed = resume_after_restart(*a, token, list_of(2, {}));
  ASSERT_FALSE(resumed.error) << resumed.error.message();
  ASSERT_EQ(resumed.value, baton::renew_answer::renewed);
  auto fenced = acquire_with(*b, {});
  for (int i = 0; i < 3 && fenced.error; ++i) fenced = acquire_with(*b, {});
  ASSERT_FALSE(fenced.error) << fenced.error.message();
  EXPECT_EQ(fenced.value.outcome, baton::acquire_outcome::held_back) << fenced.value.why;
  EXPECT_NE(get("lease"), "") << "the fence kept the resumed term's lease key";
  EXPECT_EQ(renew_with(*a, list_of(3, {})).value, baton::renew_answer::renewed);
}

TEST_F(etcd_failsafe_test, a_resume_fails_when_another_term_exists) {
  const auto token = a_leads();
  lease_expires();
  baton::failsafe_acquire cleared;
  cleared.cleared_token = token;
  ASSERT_TRUE(acquire_with(*b, cleared).value.acquired());
  EXPECT_EQ(resume_with(*a, token, list_of(2, {})).value, baton::renew_answer::lost);
  // The lease free again, the record naming node-b's term: still lost.
  lease_expires();
  EXPECT_EQ(resume_with(*a, token, list_of(3, {})).value, baton::renew_answer::lost);
  EXPECT_EQ(get("lease"), "");
}

// A renewal with the mode answers within etcd.command_timeout in all: here
// its keepalive waits behind a list of the candidates that a member cut off
// (a proxy that swallows everything) never answers, and would then wait as
// long again for its own answer. Its failure must come while a round of
// confirmations can still count before the renew deadline (F3); a renewal
// answered only after that deadline would make the leader stop its app
// though every peer confirms.
TEST_F(etcd_failsafe_test, a_renewal_answers_within_the_command_timeout_in_all) {
  baton::testing::fault_proxy proxy(server.client_port());
  baton::etcd_store_options o;
  o.endpoints = {"http://127.0.0.1:" + std::to_string(proxy.port())};
  o.identity = {election, "node-d", milliseconds(2000)};
  o.identity.peer_address = "10.0.0.4:9465";
  o.connect_timeout = 2000ms;
  o.command_timeout = 300ms;
  baton::etcd_store d(io, std::move(o));
  baton::failsafe_acquire args;
  args.list = list_of(1, {{"node-b", "10.0.0.2:9465"}});
  const auto won = acquire_with(d, args);
  ASSERT_TRUE(won.value.acquired()) << won.error.message() << " " << won.value.why;

  proxy.blackhole();
  bool listed = false;
  d.async_candidates([&](baton::store_error, std::vector<baton::candidate_info>) { listed = true; });
  const auto sent = std::chrono::steady_clock::now();
  const auto r = renew_with(d, list_of(2, {{"node-b", "10.0.0.2:9465"}}));
  const auto took = std::chrono::steady_clock::now() - sent;
  EXPECT_EQ(r.calls, 1);
  EXPECT_EQ(r.error.code, baton::store_errc::timeout) << r.error.message();
  EXPECT_LT(took, 450ms) << "the renewal took "
                         << std::chrono::duration_cast<milliseconds>(took).count() << " ms";
  // Its calls go on unheard: the list's failure, then the keepalive's.
  run_for(700ms);
  EXPECT_TRUE(listed);
}

}  // namespace
