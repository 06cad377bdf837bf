// The release watcher over a scripted transport, no server: SUBSCRIBE and the
// state it reports, the capped exponential back-off between failed attempts
// (measured from when the fake factory made each attempt's transport) and its
// reset after a successful subscribe, message delivery, the PING health check,
// and stop().
#include "redis/subscriber.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "support/fakes/fake_redis_transport.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using baton::redis_detail::subscriber;
using baton::redis_detail::subscriber_options;
using baton::test::fake_redis_factory;
using baton::test::fake_redis_transport;
using baton::test::run_for;
using baton::test::run_until;
namespace resp = baton::test::resp;
using strings = std::vector<std::string>;
using std::chrono::duration_cast;

const std::string channel = "baton:{unit}:events";
const std::string own_value = "node-a:00112233";

// A subscribed-mode server: SUBSCRIBE confirmed, PING answered as ["pong", ""]
// (or not at all), AUTH accepted.
fake_redis_transport::responder pubsub_server(bool answer_ping = true) {
  return [answer_ping](fake_redis_transport& t, const strings& c) {
    if (c.at(0) == "SUBSCRIBE") {
      t.feed(resp::array({resp::bulk("subscribe"), resp::bulk(c.at(1)), resp::integer(1)}));
    } else if (c.at(0) == "PING") {
      if (answer_ping) t.feed(resp::bulk_array({"pong", ""}));
    } else {
      t.feed(resp::simple("OK"));
    }
  };
}

std::string message(const std::string& payload, const std::string& on = channel) {
  return resp::bulk_array({"message", on, payload});
}

class subscriber_test : public ::testing::Test {
 protected:
  subscriber_test() {
    options.connection.endpoint.host = "redis.test";
    options.connection.endpoint.port = 6390;
    options.connection.connect_timeout = milliseconds(1000);
    options.connection.command_timeout = milliseconds(1000);
    options.connection.transport = factory.factory();
    options.channel = channel;
    options.own_value = own_value;
    options.backoff_initial = milliseconds(20);
    options.backoff_max = milliseconds(1000);
    options.ping_interval = milliseconds(0);
    options.on_acquired = [this](const baton::announced_term& t) { acquired.push_back(t); };
  }

  ~subscriber_test() override {
    if (sub) sub->stop();
    io.restart();
    io.poll();
  }

  std::shared_ptr<subscriber> make() {
    sub = subscriber::create(io, options, [this] { ++notified; });
    return sub;
  }

  bool wait_state(subscriber::state s, milliseconds limit = milliseconds(3000)) {
    return run_until(io, [&] { return sub->current_state() == s; }, limit);
  }

  bool wait_transports(std::size_t n, milliseconds limit = milliseconds(5000)) {
    return run_until(io, [&] { return factory.count() >= n; }, limit);
  }

  // Gap between the starts of attempts i and i + 1.
  milliseconds gap(std::size_t i) const {
    return duration_cast<milliseconds>(factory.at(i + 1).created_at() - factory.at(i).created_at());
  }

  asio::io_context io;
  fake_redis_factory factory;
  subscriber_options options;
  std::shared_ptr<subscriber> sub;
  int notified = 0;
  std::vector<baton::announced_term> acquired;
};

TEST_F(subscriber_test, subscribes_to_the_channel_and_reports_subscribed) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make();
  EXPECT_EQ(sub->current_state(), subscriber::state::idle);
  run_for(io, milliseconds(10));
  EXPECT_EQ(factory.count(), 0u) << "nothing happens before start()";

  sub->start();
  EXPECT_EQ(sub->current_state(), subscriber::state::subscribing);
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  ASSERT_EQ(factory.count(), 1u);
  EXPECT_EQ(factory.at(0).commands(), (std::vector<strings>{{"SUBSCRIBE", channel}}));
  // The first subscribe is no news: nothing can have been missed yet.
  EXPECT_EQ(notified, 0);

  sub->start();  // a second start does nothing
  run_for(io, milliseconds(20));
  EXPECT_EQ(factory.count(), 1u);
  EXPECT_EQ(factory.at(0).commands().size(), 1u);
}

TEST_F(subscriber_test, the_connection_options_reach_the_connection) {
  options.connection.endpoint.password = "pw";
  options.connection.endpoint.db = 4;
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  EXPECT_EQ(factory.at(0).commands(),
            (std::vector<strings>{{"AUTH", "pw"}, {"SELECT", "4"}, {"SUBSCRIBE", channel}}));
  EXPECT_EQ(factory.endpoints().at(0).host, "redis.test");
}

TEST_F(subscriber_test, backoff_doubles_up_to_the_cap_between_failed_attempts) {
  options.backoff_initial = milliseconds(20);
  options.backoff_max = milliseconds(80);
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.fail_connect(std::make_error_code(std::errc::connection_refused));
  });
  make()->start();
  ASSERT_TRUE(wait_transports(7));
  EXPECT_NE(sub->current_state(), subscriber::state::subscribed);
  // Waits of 20, 40, 80, then 80 (capped) while it keeps failing. A timer
  // never fires early, so the lower bounds are exact; the upper bounds only
  // have to tell the cap from further doubling (160, 320, 640 ms).
  const milliseconds expected[] = {milliseconds(20), milliseconds(40), milliseconds(80),
                                   milliseconds(80), milliseconds(80), milliseconds(80)};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_GE(gap(i), expected[i]) << "attempt " << i;
  }
  EXPECT_LT(gap(0), gap(2));
  EXPECT_LT(gap(4), milliseconds(300)) << "the back-off is not capped";
  EXPECT_LT(gap(5), milliseconds(500)) << "the back-off is not capped";
  for (const auto& t : factory.transports()) EXPECT_TRUE(t->commands().empty());
}

TEST_F(subscriber_test, backoff_resets_after_a_successful_subscribe) {
  options.backoff_initial = milliseconds(30);
  options.backoff_max = milliseconds(10000);
  // Attempts 0-3 are refused (waits 30, 60, 120, 240), 4 subscribes, and after
  // it breaks the next wait is 30 again, not 480.
  factory.on_create([](fake_redis_transport& t, std::size_t i) {
    if (i < 4) {
      t.fail_connect(std::make_error_code(std::errc::connection_refused));
    } else {
      t.set_responder(pubsub_server());
    }
  });
  make()->start();
  ASSERT_TRUE(wait_transports(5));
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  EXPECT_GE(gap(0), milliseconds(30));
  EXPECT_GE(gap(1), milliseconds(60));
  EXPECT_GE(gap(2), milliseconds(120));
  EXPECT_GE(gap(3), milliseconds(240));
  EXPECT_EQ(notified, 0) << "the first successful subscribe is not a resubscribe";

  const auto broke_at = std::chrono::steady_clock::now();
  factory.at(4).close_with_eof();
  ASSERT_TRUE(wait_transports(6));
  const auto wait = duration_cast<milliseconds>(factory.at(5).created_at() - broke_at);
  EXPECT_GE(wait, milliseconds(30));
  EXPECT_LT(wait, milliseconds(300)) << "the back-off was not reset";
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  // Resubscribed: the listener hears once that it may have missed a release.
  EXPECT_EQ(notified, 1);
  EXPECT_EQ(factory.at(5).commands(), (std::vector<strings>{{"SUBSCRIBE", channel}}));
}

TEST_F(subscriber_test, a_broken_connection_is_resubscribed_on_a_new_transport) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  factory.at(0).close_with_error(std::make_error_code(std::errc::connection_reset));
  ASSERT_TRUE(wait_state(subscriber::state::waiting));
  ASSERT_TRUE(wait_transports(2));
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  EXPECT_TRUE(factory.at(0).closed());
  EXPECT_EQ(notified, 1);

  // And it keeps delivering on the new one.
  factory.at(1).feed(message("released node-b:ff 43"));
  ASSERT_TRUE(run_until(io, [&] { return notified == 2; }));
}

TEST_F(subscriber_test, tells_each_change_of_the_subscribed_state_but_not_after_stop) {
  std::vector<bool> changes;
  options.on_subscribed_change = [&](bool subscribed) { changes.push_back(subscribed); };
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  EXPECT_EQ(changes, (std::vector<bool>{true}));
  factory.at(0).close_with_error(std::make_error_code(std::errc::connection_reset));
  ASSERT_TRUE(wait_state(subscriber::state::waiting));
  EXPECT_EQ(changes, (std::vector<bool>{true, false}));
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  EXPECT_EQ(changes, (std::vector<bool>{true, false, true}));
  sub->stop();
  run_for(io, milliseconds(20));
  EXPECT_EQ(changes.size(), 3u);
}

TEST_F(subscriber_test, the_subscribed_callback_may_stop_the_subscriber) {
  options.on_subscribed_change = [&](bool) { sub->stop(); };
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::stopped));
  run_for(io, milliseconds(20));
  EXPECT_EQ(factory.count(), 1u);
  EXPECT_TRUE(factory.at(0).closed());
}

TEST_F(subscriber_test, subscribe_error_reply_is_retried_after_the_backoff) {
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    auto owned = std::make_shared<int>(0);  // SUBSCRIBEs seen
    t.set_responder([owned](fake_redis_transport& tr, const strings& c) {
      if (c.at(0) == "SUBSCRIBE" && (*owned)++ == 0) {
        tr.feed(resp::error("NOAUTH Authentication required."));
        return;
      }
      pubsub_server()(tr, c);
    });
  });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  // The error reply leaves the connection up: the retry goes over it.
  EXPECT_EQ(factory.count(), 1u);
  EXPECT_EQ(factory.at(0).command_names(), (strings{"SUBSCRIBE", "SUBSCRIBE"}));
}

TEST_F(subscriber_test, delivers_foreign_releases_and_acquired_announcements) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  auto& t = factory.at(0);

  t.feed(message("released node-b:0a0b 41"));
  ASSERT_TRUE(run_until(io, [&] { return notified == 1; }));

  // Our own release, another channel, unknown and malformed messages: ignored.
  t.feed(message("released " + own_value + " 42"));
  t.feed(message("released node-b:0a0b 43", "baton:{other}:events"));
  t.feed(message("hello"));
  t.feed(message("acquired node-c:9 not-a-number"));

  t.feed(message("acquired node-c:0c0d 44"));
  ASSERT_TRUE(run_until(io, [&] { return acquired.size() == 1; }));
  run_for(io, milliseconds(20));
  EXPECT_EQ(notified, 1);
  ASSERT_EQ(acquired.size(), 1u);
  EXPECT_EQ(acquired[0].holder, "node-c");
  EXPECT_EQ(acquired[0].token, 44u);
  EXPECT_EQ(sub->current_state(), subscriber::state::subscribed);
  EXPECT_EQ(factory.count(), 1u);
}

TEST_F(subscriber_test, a_message_in_the_same_read_as_the_confirmation_is_delivered) {
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([](fake_redis_transport& tr, const strings& c) {
      tr.feed(resp::array({resp::bulk("subscribe"), resp::bulk(c.at(1)), resp::integer(1)}) +
              message("released node-b:1 45"));
    });
  });
  make()->start();
  ASSERT_TRUE(run_until(io, [&] { return notified == 1; }));
}

TEST_F(subscriber_test, answered_pings_keep_the_connection) {
  options.ping_interval = milliseconds(20);
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  ASSERT_TRUE(run_until(io, [&] { return factory.at(0).commands().size() >= 4; }));
  EXPECT_EQ(factory.at(0).command_names(), (strings{"SUBSCRIBE", "PING", "PING", "PING"}));
  EXPECT_EQ(factory.count(), 1u);
  EXPECT_EQ(sub->current_state(), subscriber::state::subscribed);
  EXPECT_EQ(notified, 0);
}

TEST_F(subscriber_test, an_unanswered_ping_times_out_and_leads_to_a_reconnect) {
  options.ping_interval = milliseconds(20);
  options.connection.command_timeout = milliseconds(50);
  factory.on_create([](fake_redis_transport& t, std::size_t i) {
    // The first server stops answering after SUBSCRIBE; the second is fine.
    t.set_responder(pubsub_server(/*answer_ping=*/i > 0));
  });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  ASSERT_TRUE(wait_transports(2));
  auto& first = factory.at(0);
  EXPECT_TRUE(first.closed());
  EXPECT_EQ(first.command_names(), (strings{"SUBSCRIBE", "PING"}));
  ASSERT_TRUE(run_until(io, [&] {
    return sub->current_state() == subscriber::state::subscribed &&
           !factory.at(1).commands().empty();
  }));
  EXPECT_EQ(factory.at(1).commands().at(0), (strings{"SUBSCRIBE", channel}));
  ASSERT_TRUE(run_until(io, [&] { return notified == 1; }));
  // The reconnect waited out the back-off after the timeout.
  EXPECT_GE(gap(0), options.ping_interval + options.connection.command_timeout +
                        options.backoff_initial);
}

TEST_F(subscriber_test, a_non_array_ping_reply_starts_over_on_a_new_connection) {
  // "+PONG" means the connection is not in subscribed mode after all.
  options.ping_interval = milliseconds(20);
  factory.on_create([](fake_redis_transport& t, std::size_t i) {
    if (i == 0) {
      t.set_responder([](fake_redis_transport& tr, const strings& c) {
        if (c.at(0) == "PING") {
          tr.feed(resp::simple("PONG"));
        } else {
          pubsub_server()(tr, c);
        }
      });
    } else {
      t.set_responder(pubsub_server());
    }
  });
  make()->start();
  ASSERT_TRUE(wait_transports(2));
  ASSERT_TRUE(run_until(io, [&] { return notified == 1; }));
  EXPECT_TRUE(factory.at(0).closed());
  EXPECT_EQ(sub->current_state(), subscriber::state::subscribed);
  EXPECT_EQ(factory.at(1).commands().at(0), (strings{"SUBSCRIBE", channel}));
}

TEST_F(subscriber_test, stop_closes_the_connection_and_silences_the_listener) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  sub->stop();
  EXPECT_EQ(sub->current_state(), subscriber::state::stopped);
  EXPECT_TRUE(factory.at(0).closed());
  factory.at(0).feed(message("released node-b:1 50"));
  run_for(io, milliseconds(50));
  EXPECT_EQ(notified, 0);
  EXPECT_EQ(factory.count(), 1u);
  sub->start();  // final
  run_for(io, milliseconds(20));
  EXPECT_EQ(sub->current_state(), subscriber::state::stopped);
  EXPECT_EQ(factory.count(), 1u);
}

TEST_F(subscriber_test, stop_while_waiting_cancels_the_retry) {
  options.backoff_initial = milliseconds(30);
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.fail_connect(std::make_error_code(std::errc::connection_refused));
  });
  make()->start();
  ASSERT_TRUE(wait_state(subscriber::state::waiting));
  sub->stop();
  run_for(io, milliseconds(100));
  EXPECT_EQ(factory.count(), 1u);
  EXPECT_EQ(sub->current_state(), subscriber::state::stopped);
}

TEST_F(subscriber_test, the_listener_may_stop_the_subscriber) {
  factory.on_create([](fake_redis_transport& t, std::size_t) { t.set_responder(pubsub_server()); });
  sub = subscriber::create(io, options, [this] {
    ++notified;
    sub->stop();
  });
  sub->start();
  ASSERT_TRUE(wait_state(subscriber::state::subscribed));
  factory.at(0).feed(message("released node-b:1 51") + message("released node-b:2 52"));
  ASSERT_TRUE(wait_state(subscriber::state::stopped));
  run_for(io, milliseconds(20));
  EXPECT_EQ(notified, 1);
}

}  // namespace
