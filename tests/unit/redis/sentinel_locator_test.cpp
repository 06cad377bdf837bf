// The Sentinel master locator over scripted sentinels, no server: sentinels
// asked in turn (a refused connection, a hung one, "no such master" and
// malformed answers each move on to the next sentinel, and the one that
// answered is asked first next time), the no_master error naming every
// sentinel's failure, not_a_master() rotating to the next sentinel,
// +switch-master messages on the watch connections reaching the switch
// listener once (and other masters' or malformed messages not at all), the
// periodic re-check, credentials kept out of sources(), and close().
// Also the locating transport over a fake master_locator: a locator error is
// the connect error, and peer() names the located address once connected.
#include "redis/sentinel_locator.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "baton/redis_url.hpp"
#include "redis/connection.hpp"
#include "redis/locating_transport.hpp"
#include "redis/master_locator.hpp"
#include "redis/redis_error.hpp"
#include "support/fakes/fake_redis_transport.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using baton::redis_errc;
using baton::store_errc;
using baton::store_error;
using baton::store_member_status;
using baton::redis_detail::command_result;
using baton::redis_detail::connection;
using baton::redis_detail::connection_options;
using baton::redis_detail::locating_transport_factory;
using baton::redis_detail::master_address;
using baton::redis_detail::master_locator;
using baton::redis_detail::sentinel_locator;
using baton::redis_detail::sentinel_locator_options;
using baton::redis_detail::stream_transport;
using baton::test::fake_redis_factory;
using baton::test::fake_redis_transport;
using baton::test::run_for;
using baton::test::run_until;
namespace resp = baton::test::resp;
using strings = std::vector<std::string>;

const std::string s1 = "s1:26379";
const std::string s2 = "s2:26379";
const std::string s3 = "s3:26379";
const master_address master_a{"10.0.0.1", 6379};
const master_address master_b{"10.0.0.2", 6379};
const master_address master_c{"10.0.0.3", 6379};

std::error_code aborted() { return boost::system::error_code(asio::error::operation_aborted); }

// What SENTINEL GET-MASTER-ADDR-BY-NAME answers when it knows the master.
std::string address_reply(const master_address& a) {
  return resp::bulk_array({a.host, std::to_string(a.port)});
}

// A pub/sub message as a sentinel publishes it.
std::string switch_message(const std::string& payload, const std::string& channel = "+switch-master") {
  return resp::bulk_array({"message", channel, payload});
}

struct located {
  store_error error;
  master_address where;
};

class sentinel_locator_test : public ::testing::Test {
 protected:
  // How one sentinel behaves; read when its transports are made (refuse,
  // hang) and at every question (answer), so a test may change it midway.
  struct script {
    bool refuse = false;
    bool hang = false;
    std::string answer;  // bytes for GET-MASTER-ADDR-BY-NAME; "" = no answer
    std::string auth;    // bytes for AUTH; "" = +OK
  };

  sentinel_locator_test() {
    for (const char* url : {"redis://s1:26379", "redis://s2:26379", "redis://s3:26379"}) {
      options.sentinels.push_back(baton::parse_redis_url(url));
    }
    options.master_name = "mymaster";
    options.connect_timeout = milliseconds(1000);
    options.command_timeout = milliseconds(1000);
    options.check_interval = milliseconds(0);
    options.transport = factory.factory();
    factory.on_create([this](fake_redis_transport& t, std::size_t) { prepare(t); });
  }

  ~sentinel_locator_test() override {
    if (locator) locator->close();
    io.restart();
    io.poll();
  }

  void prepare(fake_redis_transport& t) {
    const script& s = scripts[t.peer()];
    if (s.refuse) t.fail_connect(std::make_error_code(std::errc::connection_refused));
    if (s.hang) t.hang_connect();
    t.set_responder([this](fake_redis_transport& tr, const strings& c) {
      const auto& name = c.at(0);
      if (name == "SENTINEL") {
        asked.push_back(tr.peer());
        const auto& answer = scripts[tr.peer()].answer;
        if (!answer.empty()) tr.feed(answer);
      } else if (name == "AUTH") {
        const auto& auth = scripts[tr.peer()].auth;
        tr.feed(auth.empty() ? resp::simple("OK") : auth);
      } else if (name == "SUBSCRIBE") {
        watches[tr.peer()] = &tr;
        tr.feed(resp::array({resp::bulk("subscribe"), resp::bulk(c.at(1)), resp::integer(1)}));
      } else {
        tr.feed(resp::simple("OK"));
      }
    });
  }

  std::shared_ptr<sentinel_locator> make() {
    if (locator) locator->close();
    locator = sentinel_locator::create(io, options);
    locator->set_switch_listener([this](const std::string& why) { switches.push_back(why); });
    return locator;
  }

  std::shared_ptr<std::optional<located>> start_locate() {
    auto slot = std::make_shared<std::optional<located>>();
    locator->async_locate([slot](store_error e, master_address where) {
      *slot = located{std::move(e), std::move(where)};
    });
    return slot;
  }

  located locate() {
    auto slot = start_locate();
    EXPECT_TRUE(run_until(io, [&] { return slot->has_value(); })) << "the locate never completed";
    return slot->value_or(located{{redis_errc::timeout, "test: no answer"}, {}});
  }

  // Every sentinel's watch connection has sent SUBSCRIBE.
  bool wait_watches(std::size_t n = 3) {
    return run_until(io, [&] { return watches.size() >= n; });
  }

  asio::io_context io;
  fake_redis_factory factory;
  sentinel_locator_options options;
  std::map<std::string, script> scripts;
  strings asked;  // the sentinels asked GET-MASTER-ADDR-BY-NAME, in order
  std::map<std::string, fake_redis_transport*> watches;  // by peer; the factory keeps them
  std::vector<std::string> switches;
  std::shared_ptr<sentinel_locator> locator;
};

TEST_F(sentinel_locator_test, describes_the_master_and_how_many_sentinels_it_asks) {
  EXPECT_EQ(make()->describe(), "master mymaster via 3 sentinels");
  options.sentinels.resize(1);
  EXPECT_EQ(make()->describe(), "master mymaster via 1 sentinel");
}

TEST_F(sentinel_locator_test, the_first_sentinel_answering_names_the_master) {
  scripts[s1].answer = address_reply(master_a);
  scripts[s2].answer = address_reply(master_b);
  make();
  const auto r = locate();
  EXPECT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.where, master_a);
  EXPECT_EQ(asked, strings{s1});
  // The question as Sentinel expects it.
  bool seen = false;
  for (const auto& t : factory.transports()) {
    for (const auto& c : t->commands()) {
      if (c.at(0) != "SENTINEL") continue;
      EXPECT_EQ(c, (strings{"SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster"}));
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(sentinel_locator_test, a_refused_sentinel_is_skipped_and_the_one_that_answered_is_asked_first_next_time) {
  scripts[s1].refuse = true;
  scripts[s2].answer = address_reply(master_b);
  scripts[s3].answer = address_reply(master_c);
  make();
  auto r = locate();
  EXPECT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.where, master_b);
  EXPECT_EQ(asked, strings{s2});  // s1 never got as far as a question
  const auto sources = locator->sources();
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(sources[0].role, "sentinel");
  EXPECT_EQ(sources[0].endpoint, "redis://s1:26379");
  EXPECT_NE(sources[0].last_error.find("connect s1:26379: "), std::string::npos)
      << sources[0].last_error;

  // s1 is back and would name another master: s2 is still asked first.
  scripts[s1] = script{.answer = address_reply(master_a)};
  asked.clear();
  r = locate();
  EXPECT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.where, master_b);
  EXPECT_EQ(asked, strings{s2});
}

TEST_F(sentinel_locator_test, a_sentinel_that_does_not_know_the_name_is_skipped_with_that_reason) {
  // Sentinel answers a null array for a name it does not monitor; a null
  // bulk string reads the same.
  for (const std::string& unknown : {std::string("*-1\r\n"), resp::nil()}) {
    SCOPED_TRACE(unknown);
    scripts[s1].answer = unknown;
    scripts[s2].answer = address_reply(master_b);
    asked.clear();
    make();
    const auto r = locate();
    EXPECT_FALSE(r.error) << r.error.message();
    EXPECT_EQ(r.where, master_b);
    EXPECT_EQ(asked, (strings{s1, s2}));
    EXPECT_EQ(locator->sources().at(0).last_error,
              "sentinel redis://s1:26379 does not monitor a master named mymaster");
  }
}

TEST_F(sentinel_locator_test, when_every_sentinel_fails_the_error_is_no_master_naming_each_failure) {
  scripts[s1].answer = resp::nil();
  scripts[s2].refuse = true;
  scripts[s3].answer = resp::error("ERR unknown command 'SENTINEL'");
  make();
  const auto r = locate();
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error.code, redis_errc::no_master);
  EXPECT_EQ(r.error.code, store_errc::unavailable);
  EXPECT_EQ(r.where, master_address{});
  const auto& detail = r.error.detail;
  EXPECT_EQ(detail.rfind("no sentinel named the master of mymaster: ", 0), 0u) << detail;
  EXPECT_NE(detail.find("sentinel redis://s1:26379 does not monitor a master named mymaster; "),
            std::string::npos)
      << detail;
  EXPECT_NE(detail.find("connect s2:26379: "), std::string::npos) << detail;
  EXPECT_NE(detail.find("; sentinel redis://s3:26379: ERR unknown command 'SENTINEL'"),
            std::string::npos)
      << detail;
  EXPECT_EQ(asked, (strings{s1, s3}));

  // A later round asks them all again, and succeeds when one can answer.
  scripts[s3].answer = address_reply(master_c);
  const auto again = locate();
  EXPECT_FALSE(again.error) << again.error.message();
  EXPECT_EQ(again.where, master_c);
}

TEST_F(sentinel_locator_test, a_hung_sentinel_times_out_and_the_next_one_answers) {
  options.connect_timeout = milliseconds(50);
  scripts[s1].hang = true;
  scripts[s2].answer = address_reply(master_b);
  make();
  const auto r = locate();
  EXPECT_FALSE(r.error) << r.error.message();
  EXPECT_EQ(r.where, master_b);
  EXPECT_NE(locator->sources().at(0).last_error.find("connect s1:26379: timed out after 50"),
            std::string::npos)
      << locator->sources().at(0).last_error;
}

TEST_F(sentinel_locator_test, malformed_answers_are_failures_not_crashes) {
  options.sentinels.resize(1);
  const std::pair<std::string, std::string> cases[] = {
      {resp::integer(5), "unexpected answer integer 5"},
      {resp::simple("OK"), "unexpected answer status \"OK\""},
      {resp::bulk("10.0.0.1:6379"), "unexpected answer string"},
      {resp::bulk_array({"10.0.0.1"}), "unexpected answer array[1]"},
      {resp::bulk_array({"10.0.0.1", "6379", "extra"}), "unexpected answer array[3]"},
      {resp::array({}), "unexpected answer array[0]"},
      {resp::bulk_array({"10.0.0.1", "0"}), "unexpected answer array[2]"},
      {resp::bulk_array({"10.0.0.1", "99999"}), "unexpected answer array[2]"},
      {resp::bulk_array({"10.0.0.1", "65536"}), "unexpected answer array[2]"},
      {resp::bulk_array({"10.0.0.1", "abc"}), "unexpected answer array[2]"},
      {resp::bulk_array({"10.0.0.1", "-1"}), "unexpected answer array[2]"},
      {resp::bulk_array({"10.0.0.1", "6379 "}), "unexpected answer array[2]"},
      {resp::bulk_array({"10.0.0.1", ""}), "unexpected answer array[2]"},
      {resp::bulk_array({"", "6379"}), "unexpected answer array[2]"},
      {resp::array({resp::integer(10), resp::integer(6379)}), "unexpected answer array[2]"},
      {resp::array({resp::bulk("10.0.0.1"), resp::integer(6379)}), "unexpected answer array[2]"},
      {resp::array({resp::bulk_array({"10.0.0.1"}), resp::bulk("6379")}), "unexpected answer array[2]"},
      {resp::error("NOPERM this user has no permissions to run the 'sentinel' command"),
       "sentinel redis://s1:26379: NOPERM"},
  };
  for (const auto& [answer, expected] : cases) {
    SCOPED_TRACE(answer);
    scripts[s1].answer = answer;
    make();
    const auto r = locate();
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error.code, redis_errc::no_master);
    EXPECT_NE(r.error.detail.find(expected), std::string::npos) << r.error.detail;
    EXPECT_EQ(r.where, master_address{});
  }
  // The same sentinel answering well afterwards is believed.
  scripts[s1].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
}

TEST_F(sentinel_locator_test, not_a_master_moves_to_the_next_sentinel_and_wraps_around) {
  scripts[s1].answer = address_reply(master_a);
  scripts[s2].answer = address_reply(master_b);
  scripts[s3].answer = address_reply(master_c);
  make();
  EXPECT_EQ(locate().where, master_a);
  const master_address expected[] = {master_b, master_c, master_a};
  const std::string expected_asked[] = {s2, s3, s1};
  for (std::size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    locator->not_a_master();
    asked.clear();
    const auto r = locate();
    EXPECT_FALSE(r.error) << r.error.message();
    EXPECT_EQ(r.where, expected[i]);
    EXPECT_EQ(asked, strings{expected_asked[i]});
  }
}

TEST_F(sentinel_locator_test, locates_asked_together_share_one_round) {
  scripts[s1].answer = address_reply(master_a);
  make();
  auto first = start_locate();
  auto second = start_locate();
  ASSERT_TRUE(run_until(io, [&] { return first->has_value() && second->has_value(); }));
  EXPECT_EQ((*first)->where, master_a);
  EXPECT_EQ((*second)->where, master_a);
  EXPECT_EQ(asked, strings{s1});
}

TEST_F(sentinel_locator_test, a_locate_completes_posted_never_inline) {
  scripts[s1].answer = address_reply(master_a);
  make();
  auto slot = start_locate();
  EXPECT_FALSE(slot->has_value());
  locator->close();
  EXPECT_FALSE(slot->has_value());  // close() posts the failure too
  ASSERT_TRUE(run_until(io, [&] { return slot->has_value(); }));
}

TEST_F(sentinel_locator_test, a_switch_message_for_our_master_tells_the_listener_once) {
  for (const auto& s : {s1, s2, s3}) scripts[s].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  ASSERT_TRUE(wait_watches());
  for (const auto& s : {s1, s2, s3}) {
    EXPECT_EQ(watches[s]->commands().back(), (strings{"SUBSCRIBE", "+switch-master"})) << s;
  }

  watches[s2]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.9 6380"));
  ASSERT_TRUE(run_until(io, [&] { return !switches.empty(); }));
  EXPECT_EQ(switches.at(0),
            "sentinel redis://s2:26379 announced +switch-master from 10.0.0.1:6379 to 10.0.0.9:6380");

  // The other sentinels announce the same switch: told once only. A later
  // switch (fed on the same connection, so it is handled after them) shows
  // they were handled.
  watches[s1]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.9 6380"));
  watches[s3]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.9 6380"));
  watches[s3]->feed(switch_message("mymaster 10.0.0.9 6380 10.0.0.1 6379"));
  ASSERT_TRUE(run_until(io, [&] { return switches.size() >= 2; }));
  run_for(io, milliseconds(20));
  ASSERT_EQ(switches.size(), 2u) << switches.back();
  EXPECT_NE(switches[1].find("from 10.0.0.9:6380 to 10.0.0.1:6379"), std::string::npos)
      << switches[1];
}

TEST_F(sentinel_locator_test, switch_messages_for_other_masters_or_malformed_ones_are_ignored) {
  for (const auto& s : {s1, s2, s3}) scripts[s].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  ASSERT_TRUE(wait_watches());
  auto& watch = *watches[s1];
  for (const std::string& ignored : {
           switch_message("othermaster 10.0.0.1 6379 10.0.0.7 6381"),
           switch_message("mymasterx 10.0.0.1 6379 10.0.0.7 6381"),
           switch_message("mymaster 10.0.0.1 6379"),
           switch_message("mymaster 10.0.0.1 6379 10.0.0.7"),
           switch_message(""),
           switch_message("mymaster 10.0.0.1 6379 10.0.0.7 0"),
           switch_message("mymaster 10.0.0.1 6379 10.0.0.7 99999"),
           switch_message("mymaster 10.0.0.1 6379 10.0.0.7 port"),
           switch_message("mymaster 10.0.0.1 6379 10.0.0.7 6381", "+sdown"),
           resp::bulk_array({"message", "+switch-master", "mymaster 10.0.0.1 6379 10.0.0.7 6381", "x"}),
           // The address we already have is no switch.
           switch_message("mymaster 10.0.0.5 6379 10.0.0.1 6379"),
       }) {
    watch.feed(ignored);
  }
  // A real switch after them, on the same connection: once it is told, all
  // of the above have been handled.
  watch.feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.8 6382"));
  ASSERT_TRUE(run_until(io, [&] { return !switches.empty(); }));
  run_for(io, milliseconds(20));
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_NE(switches[0].find("to 10.0.0.8:6382"), std::string::npos) << switches[0];
  // The locator keeps working.
  EXPECT_EQ(locate().where, master_a);
}

// (A two-element "message" array is no push at all: the connection drops it
// as an unsolicited reply, which the next test's reconnect covers.)

TEST_F(sentinel_locator_test, a_watch_connection_that_breaks_is_subscribed_again) {
  for (const auto& s : {s1, s2, s3}) scripts[s].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  ASSERT_TRUE(wait_watches());
  fake_redis_transport* broken = watches[s1];
  broken->close_with_eof();
  // A fresh connection subscribes after the back-off (200ms).
  ASSERT_TRUE(run_until(io, [&] { return watches[s1] != broken; }));
  EXPECT_TRUE(broken->closed());
  watches[s1]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.9 6380"));
  ASSERT_TRUE(run_until(io, [&] { return !switches.empty(); }));
  EXPECT_NE(switches[0].find("sentinel redis://s1:26379 announced"), std::string::npos)
      << switches[0];
}

TEST_F(sentinel_locator_test, the_periodic_check_tells_the_listener_when_the_answer_changed) {
  options.check_interval = milliseconds(10);
  scripts[s1].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  // Checks that find the same master say nothing.
  ASSERT_TRUE(run_until(io, [&] { return asked.size() >= 3; }));
  EXPECT_TRUE(switches.empty());
  // The switch message was lost; the next check finds the new master.
  scripts[s1].answer = address_reply(master_b);
  ASSERT_TRUE(run_until(io, [&] { return !switches.empty(); }));
  EXPECT_EQ(switches.at(0), "the sentinels now name 10.0.0.2:6379 as the master (was 10.0.0.1:6379)");
}

TEST_F(sentinel_locator_test, the_sentinels_credentials_are_used_but_not_shown) {
  options.sentinels.resize(1);
  options.sentinels[0].username = "watcher";
  options.sentinels[0].password = "s3cret-sentinel";
  scripts[s1].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  bool authed = false;
  for (const auto& t : factory.transports()) {
    if (!t->commands().empty() && t->commands().front().at(0) == "AUTH") {
      EXPECT_EQ(t->commands().front(), (strings{"AUTH", "watcher", "s3cret-sentinel"}));
      authed = true;
    }
  }
  EXPECT_TRUE(authed);
  const auto sources = locator->sources();
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].endpoint.find("s3cret"), std::string::npos) << sources[0].endpoint;
  EXPECT_EQ(locator->describe().find("s3cret"), std::string::npos);
}

TEST_F(sentinel_locator_test, close_fails_pending_and_later_locates_with_operation_aborted) {
  for (const auto& s : {s1, s2, s3}) scripts[s].hang = true;
  make();
  auto pending = start_locate();
  io.restart();
  io.poll();
  ASSERT_FALSE(pending->has_value());
  locator->close();
  ASSERT_TRUE(run_until(io, [&] { return pending->has_value(); }));
  EXPECT_EQ((*pending)->error.code, aborted());
  EXPECT_EQ((*pending)->where, master_address{});

  const auto later = locate();
  EXPECT_EQ(later.error.code, aborted());
  locator->close();  // twice is harmless
  EXPECT_TRUE(switches.empty());
}

TEST_F(sentinel_locator_test, no_switch_is_told_after_close) {
  for (const auto& s : {s1, s2, s3}) scripts[s].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  ASSERT_TRUE(wait_watches());
  // A message already on its way when the locator closes...
  watches[s1]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.9 6380"));
  locator->close();
  // ...and one after.
  watches[s2]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.8 6380"));
  run_for(io, milliseconds(50));
  EXPECT_TRUE(switches.empty());
}

TEST_F(sentinel_locator_test, a_listener_may_close_the_locator) {
  for (const auto& s : {s1, s2, s3}) scripts[s].answer = address_reply(master_a);
  make();
  locator->set_switch_listener([this](const std::string& why) {
    switches.push_back(why);
    locator->close();
  });
  EXPECT_EQ(locate().where, master_a);
  ASSERT_TRUE(wait_watches());
  watches[s1]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.9 6380"));
  watches[s1]->feed(switch_message("mymaster 10.0.0.9 6380 10.0.0.8 6380"));
  watches[s2]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.7 6380"));
  ASSERT_TRUE(run_until(io, [&] { return !switches.empty(); }));
  run_for(io, milliseconds(50));
  EXPECT_EQ(switches.size(), 1u);
  EXPECT_EQ(locate().error.code, aborted());
}

// --- cases that once failed: each guards a fix ---

// A switch message that arrives while a periodic check is asking is told,
// and then the check, comparing its answer with the address from before the
// message, tells the same switch again: the store reconnects twice, the
// second time dropping a fresh connection to the new master (and whatever
// renewal is in flight on it).
TEST_F(sentinel_locator_test, a_switch_announced_during_a_check_is_told_once) {
  options.check_interval = milliseconds(10);
  scripts[s1].answer = address_reply(master_a);
  make();
  EXPECT_EQ(locate().where, master_a);
  ASSERT_TRUE(wait_watches());
  // The next check's question goes unanswered for now.
  scripts[s1].answer.clear();
  const auto before = asked.size();
  ASSERT_TRUE(run_until(io, [&] { return asked.size() > before; }));
  watches[s1]->feed(switch_message("mymaster 10.0.0.1 6379 10.0.0.2 6379"));
  ASSERT_TRUE(run_until(io, [&] { return !switches.empty(); }));
  // The sentinel answers the check with the address just announced.
  fake_redis_transport* query = nullptr;
  for (const auto& t : factory.transports()) {
    if (t->peer() == s1 && !t->closed() && !t->commands().empty() &&
        t->commands().back().at(0) == "SENTINEL") {
      query = t.get();
    }
  }
  ASSERT_NE(query, nullptr);
  scripts[s1].answer = address_reply(master_b);
  query->feed(address_reply(master_b));
  // Two more checks, so that the one answered above has surely finished.
  const auto answered = asked.size();
  ASSERT_TRUE(run_until(io, [&] { return asked.size() >= answered + 2; }));
  EXPECT_EQ(switches.size(), 1u) << ::testing::PrintToString(switches);
}

// The no_master detail lists each sentinel's failure, but an AUTH refusal
// arrives as the connection's "AUTH as USER: ..." without the sentinel's
// address, so the operator cannot tell which sentinel refused.
TEST_F(sentinel_locator_test, a_refused_auth_names_the_sentinel_that_refused) {
  options.sentinels.resize(2);
  for (auto& e : options.sentinels) {
    e.username = "watcher";
    e.password = "wrong";
  }
  scripts[s1].auth = resp::error("WRONGPASS invalid username-password pair or user is disabled.");
  scripts[s2].auth = resp::error("WRONGPASS invalid username-password pair or user is disabled.");
  make();
  const auto r = locate();
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error.code, redis_errc::no_master);
  EXPECT_NE(r.error.detail.find("WRONGPASS"), std::string::npos) << r.error.detail;
  EXPECT_NE(r.error.detail.find("s1:26379"), std::string::npos) << r.error.detail;
  EXPECT_NE(r.error.detail.find("s2:26379"), std::string::npos) << r.error.detail;
}

// The sentinels' password file is sentinel.password_file, but a missing one
// is reported as "redis.password_file PATH: ...", pointing the operator at
// the wrong option.
TEST_F(sentinel_locator_test, a_missing_sentinel_password_file_is_named_as_sentinel_password_file) {
  options.sentinels.resize(1);
  options.password_file = "/nonexistent/baton-sentinel-password";
  make();
  const auto r = locate();
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error.detail.find("/nonexistent/baton-sentinel-password"), std::string::npos)
      << r.error.detail;
  EXPECT_NE(r.error.detail.find("sentinel.password_file"), std::string::npos) << r.error.detail;
}

// --- locating_transport ---------------------------------------------------------

// A master_locator the test answers by hand.
class fake_locator final : public master_locator {
 public:
  explicit fake_locator(asio::io_context& io) : io_(io) {}

  void async_locate(locate_handler handler) override {
    ++locates;
    pending_.push_back(std::move(handler));
  }
  void close() override {}
  std::string describe() const override { return "master m via 1 fake"; }
  std::vector<store_member_status> sources() const override { return {}; }

  // Completes every pending locate, posted as a real locator does.
  void answer(store_error error, master_address where) {
    for (auto& h : pending_) asio::post(io_, [h = std::move(h), error, where] { h(error, where); });
    pending_.clear();
  }
  bool waiting() const { return !pending_.empty(); }

  int locates = 0;

 private:
  asio::io_context& io_;
  std::vector<locate_handler> pending_;
};

struct connect_result {
  std::error_code ec;
  std::string detail;
};

class locating_transport_test : public ::testing::Test {
 protected:
  std::shared_ptr<stream_transport> make() {
    transport = locating_transport_factory(locator)(io, baton::parse_redis_url("redis://template:1"));
    return transport;
  }

  std::shared_ptr<std::optional<connect_result>> connect() {
    auto slot = std::make_shared<std::optional<connect_result>>();
    transport->async_connect([slot](std::error_code ec, std::string detail) {
      *slot = connect_result{ec, std::move(detail)};
    });
    return slot;
  }

  ~locating_transport_test() override {
    if (transport) transport->close();
    locator->answer({aborted(), "test over"}, {});
    io.restart();
    io.poll();
  }

  asio::io_context io;
  std::shared_ptr<fake_locator> locator = std::make_shared<fake_locator>(io);
  std::shared_ptr<stream_transport> transport;
};

TEST_F(locating_transport_test, a_locator_error_is_the_connect_error_with_its_detail) {
  make();
  EXPECT_EQ(transport->peer(), "master m via 1 fake");
  EXPECT_NE(transport->timeout_hint().find("still asking where the master is"), std::string::npos);
  auto r = connect();
  ASSERT_TRUE(run_until(io, [&] { return locator->waiting(); }));
  locator->answer({redis_errc::no_master, "no sentinel named the master of m: s1 said no"}, {});
  ASSERT_TRUE(run_until(io, [&] { return r->has_value(); }));
  EXPECT_EQ((*r)->ec, redis_errc::no_master);
  EXPECT_EQ((*r)->detail, "no sentinel named the master of m: s1 said no");
  EXPECT_EQ(transport->peer(), "master m via 1 fake");
}

TEST_F(locating_transport_test, a_connection_over_it_fails_its_commands_with_the_locator_error) {
  connection_options o;
  o.endpoint = baton::parse_redis_url("redis://template:1");
  o.connect_timeout = milliseconds(2000);
  o.command_timeout = milliseconds(2000);
  o.transport = locating_transport_factory(locator);
  auto conn = connection::create(io, o);
  auto result = std::make_shared<std::optional<command_result>>();
  conn->async_exec({"PING"}, [result](command_result r) { *result = std::move(r); });
  ASSERT_TRUE(run_until(io, [&] { return locator->waiting(); }));
  EXPECT_EQ(conn->peer(), "master m via 1 fake");
  locator->answer({redis_errc::no_master, "no sentinel named the master of m: all down"}, {});
  ASSERT_TRUE(run_until(io, [&] { return result->has_value(); }));
  EXPECT_EQ((*result)->ec, redis_errc::no_master);
  EXPECT_EQ((*result)->ec, store_errc::unavailable);
  EXPECT_EQ((*result)->detail, "no sentinel named the master of m: all down");
  EXPECT_EQ(locator->locates, 1);
  conn->close();
}

TEST_F(locating_transport_test, peer_names_the_located_address_once_connected) {
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  const auto port = acceptor.local_endpoint().port();
  make();
  auto r = connect();
  ASSERT_TRUE(run_until(io, [&] { return locator->waiting(); }));
  locator->answer({}, {"127.0.0.1", port});
  ASSERT_TRUE(run_until(io, [&] { return r->has_value(); }));
  EXPECT_FALSE((*r)->ec) << (*r)->detail;
  EXPECT_EQ(transport->peer(), "127.0.0.1:" + std::to_string(port));
}

TEST_F(locating_transport_test, closed_before_the_locator_answers_it_connects_nowhere) {
  make();
  auto r = connect();
  ASSERT_TRUE(run_until(io, [&] { return locator->waiting(); }));
  transport->close();
  locator->answer({}, {"127.0.0.1", 1});
  ASSERT_TRUE(run_until(io, [&] { return r->has_value(); }));
  EXPECT_EQ((*r)->ec, aborted());
  EXPECT_EQ(transport->peer(), "master m via 1 fake");
}

}  // namespace
