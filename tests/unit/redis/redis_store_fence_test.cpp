// The run_id fence without a server: the Redis store over a scripted
// transport sees its server's run_id change across a reconnect (a restart or
// a failover) and must run the fence script on the new connection before any
// queued command, then tell its watcher of the reset. A first connection is
// no change, and a reconnect to the same server sets no fence.
#include "redis/redis_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "support/fakes/fake_redis_transport.hpp"

namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using baton::test::fake_redis_factory;
using baton::test::fake_redis_transport;
using baton::test::run_until;
namespace resp = baton::test::resp;

const std::string run_a(40, 'a');
const std::string run_b(40, 'b');

// A server whose INFO names `run_id` and that answers the lease scripts: the
// acquire with {1, 5}, the fence with its PTTL, the renew with 1. A script's
// first call on a connection is an EVAL, later ones EVALSHA.
bool is_fence(const fake_redis_transport::command& c) {
  return c.at(0) == "EVAL" && c.back() == "run_id changed";
}

fake_redis_transport::responder server(const std::string& run_id) {
  return [run_id](fake_redis_transport& t, const fake_redis_transport::command& c) {
    const auto& name = c.at(0);
    if (name == "INFO") {
      t.feed(resp::bulk("# Server\r\nredis_version:7.0.15\r\nrun_id:" + run_id + "\r\n"));
    } else if (is_fence(c)) {
      t.feed(resp::integer(3000));  // the fence script: its PTTL
    } else if ((name == "EVAL" || name == "EVALSHA") && c.size() > 3 && c.at(2) == "6") {
      t.feed(resp::array({resp::integer(1), resp::integer(5)}));  // acquire: 6 keys
    } else if (name == "EVAL" || name == "EVALSHA") {
      t.feed(resp::integer(1));  // renew
    } else {
      t.feed(resp::error("ERR unexpected " + name));
    }
  };
}

struct fence_test : ::testing::Test {
  // node-a in election jobs, ttl 3 s, over the fake transports.
  baton::redis_store_options options() {
    baton::redis_store_options o;
    o.endpoint.host = "127.0.0.1";
    o.endpoint.port = 6399;
    o.identity = {"jobs", "node-a", 3000ms};
    o.transport = factory.factory();
    return o;
  }

  asio::io_context io;
  fake_redis_factory factory;
};

TEST_F(fence_test, a_changed_run_id_fences_before_the_queued_command_and_reports_a_reset) {
  // Command connections only (the watch's sends no INFO): the first talks to
  // server A, every later one to server B.
  auto command_connections = std::make_shared<int>(0);
  factory.on_create([command_connections](fake_redis_transport& t, std::size_t) {
    t.set_responder([command_connections, a = server(run_a), b = server(run_b), which = -1](
                        fake_redis_transport& tr, const fake_redis_transport::command& c) mutable {
      if (which < 0 && c.at(0) == "INFO") which = (*command_connections)++;
      if (c.at(0) == "SUBSCRIBE") {
        tr.feed(resp::array({resp::bulk("subscribe"), resp::bulk(c.at(1)), resp::integer(1)}));
        return;
      }
      (which <= 0 ? a : b)(tr, c);
    });
  });
  baton::redis_store store(io, options());
  std::vector<baton::store_events::reset> resets;
  store.watch([&](const baton::store_event& e) {
    if (auto r = std::get_if<baton::store_events::reset>(&e)) resets.push_back(*r);
  });

  int acquired = 0;
  store.async_acquire([&](baton::store_error e, baton::acquire_answer a) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_TRUE(a.acquired());
    ++acquired;
  });
  ASSERT_TRUE(run_until(io, [&] { return acquired == 1; }));
  // The command connection is the one that asked INFO (the watch makes its own).
  fake_redis_transport* command_connection = nullptr;
  for (const auto& t : factory.transports()) {
    const auto names = t->command_names();
    if (!names.empty() && names.front() == "INFO") command_connection = t.get();
  }
  ASSERT_NE(command_connection, nullptr);
  auto& first = *command_connection;
  EXPECT_EQ(first.command_names(), (std::vector<std::string>{"INFO", "EVAL"}))
      << "a first connection sets no fence";
  EXPECT_TRUE(resets.empty());

  // The server goes away; the next command reconnects to one with another run_id.
  first.close_with_eof();
  ASSERT_TRUE(run_until(io, [&] { return store.status().link == baton::link_state::disconnected; }));
  int renewed = 0;
  store.async_renew([&](baton::store_error e, baton::renew_answer r) {
    EXPECT_FALSE(e) << e.message();
    EXPECT_EQ(r, baton::renew_answer::renewed);
    ++renewed;
  });
  ASSERT_TRUE(run_until(io, [&] { return renewed == 1; }));
  fake_redis_transport* second = nullptr;
  for (const auto& t : factory.transports()) {
    const auto names = t->command_names();
    if (t.get() != &first && !names.empty() && names.front() == "INFO") second = t.get();
  }
  ASSERT_NE(second, nullptr) << "no second command connection";
  EXPECT_EQ(second->command_names(), (std::vector<std::string>{"INFO", "EVAL", "EVAL"}))
      << "the fence runs after the handshake and before the queued renew";
  EXPECT_TRUE(is_fence(second->commands().at(1)));
  EXPECT_FALSE(is_fence(second->commands().at(2)));
  const auto& fence = second->commands().at(1);
  EXPECT_EQ(fence.at(3), "baton:{jobs}:token");
  EXPECT_EQ(fence.at(4), "baton:{jobs}:fence");
  EXPECT_EQ(fence.at(5), "3000") << "the fence lasts the store's ttl";
  ASSERT_TRUE(run_until(io, [&] { return resets.size() == 1; }));
  EXPECT_EQ(resets[0].why, "run_id changed from " + run_a + " to " + run_b);
  EXPECT_FALSE(resets[0].record_missing);
  EXPECT_EQ(store.status().last_reset, resets[0].why);
}

TEST_F(fence_test, a_reconnect_to_the_same_server_sets_no_fence) {
  factory.on_create([](fake_redis_transport& t, std::size_t) {
    t.set_responder([a = server(run_a)](fake_redis_transport& tr,
                                        const fake_redis_transport::command& c) { a(tr, c); });
  });
  baton::redis_store store(io, options());
  int done = 0;
  store.async_acquire([&](baton::store_error, baton::acquire_answer) { ++done; });
  ASSERT_TRUE(run_until(io, [&] { return done == 1; }));
  for (const auto& t : factory.transports()) {
    if (!t->command_names().empty() && t->command_names().front() == "INFO") t->close_with_eof();
  }
  ASSERT_TRUE(run_until(io, [&] { return store.status().link == baton::link_state::disconnected; }));
  bool renewed = false;
  store.async_renew([&](baton::store_error e, baton::renew_answer r) {
    EXPECT_FALSE(e) << e.message();
    renewed = r == baton::renew_answer::renewed;
    ++done;
  });
  ASSERT_TRUE(run_until(io, [&] { return done == 2; }));
  EXPECT_TRUE(renewed);
  int handshakes = 0;
  for (const auto& t : factory.transports()) {
    const auto names = t->command_names();
    if (!names.empty() && names.front() == "INFO") ++handshakes;
  }
  EXPECT_EQ(handshakes, 2) << "the renew went over a new connection";
  for (const auto& t : factory.transports()) {
    for (const auto& c : t->commands()) EXPECT_FALSE(is_fence(c)) << "a fence was set";
  }
  EXPECT_EQ(store.status().last_reset, "");
}

}  // namespace
