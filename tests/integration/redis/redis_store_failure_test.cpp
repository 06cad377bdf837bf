// redis_store when Redis misbehaves: killed, restarted empty, frozen
// (SIGSTOP), behind a password, over a Unix socket, and closed or destroyed
// with commands in flight. Every failure must be an error code with a clear
// detail, never a crash, a hang or a handler called twice.
#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "baton/lease_keys.hpp"
#include "baton/redis_error.hpp"
#include "baton/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using baton::redis_errc;
using namespace std::chrono_literals;

using namespace baton::testing::store_test_util;

// The lease ttl of every acquire here (5 s): long enough never to run out
// within a test.
constexpr milliseconds ttl = 5000ms;

bool is_release_ok(asio::io_context& io, baton::redis_store& store) {
  int calls = 0;
  bool ok = false;
  store.async_release([&](std::error_code ec, bool released) {
    ++calls;
    ok = !ec && released;
  });
  EXPECT_TRUE(run_until(io, [&] { return calls > 0; }));
  return ok;
}

bool is_aborted(std::error_code ec) { return ec == std::errc::operation_canceled; }

TEST(redis_store_failure, killed_server_gives_clear_errors_and_restart_recovers) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  baton::redis_store store(io, options_for(server, "node-a"));
  auto before = acquire(io, store, ttl);
  ASSERT_TRUE(before.value.acquired) << store.last_error();

  server.kill_and_wait();
  auto failed = acquire(io, store, ttl);
  EXPECT_EQ(failed.calls, 1);
  ASSERT_TRUE(failed.ec);
  EXPECT_EQ(&failed.ec.category(), &baton::redis_category()) << failed.ec.message();
  EXPECT_TRUE(failed.ec == redis_errc::connection_lost || failed.ec == redis_errc::connect_failed)
      << failed.ec.message();
  EXPECT_FALSE(store.last_error().empty());

  // With the connection gone, the next attempt reconnects and is refused.
  auto refused = acquire(io, store, ttl);
  EXPECT_EQ(refused.ec, redis_errc::connect_failed);
  EXPECT_EQ(store.last_error(),
            "connect 127.0.0.1:" + std::to_string(server.port()) + ": Connection refused");
  EXPECT_EQ(store.connection_state(), "disconnected");

  // Restarted empty: no data, no cached scripts (EVALSHA -> NOSCRIPT -> EVAL).
  // The new run_id holds the acquire back for one ttl (the fence).
  server.restart();
  auto held = acquire(io, store, ttl);
  ASSERT_FALSE(held.ec) << store.last_error();
  EXPECT_FALSE(held.value.acquired);
  EXPECT_EQ(held.value.holder, "(store reset)");
  EXPECT_GT(held.value.token, before.value.token) << "tokens must grow across a data loss";
  EXPECT_EQ(store.connection_state(), "connected");
  server.command({"DEL", baton::fence_key(election)});
  auto after = acquire(io, store, ttl);
  ASSERT_FALSE(after.ec) << store.last_error();
  EXPECT_TRUE(after.value.acquired);
  EXPECT_GT(after.value.token, held.value.token);
}

TEST(redis_store_failure, frozen_server_times_out_and_store_recovers) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  auto opts = options_for(server, "node-a");
  opts.command_timeout = 300ms;
  baton::redis_store store(io, opts);
  ASSERT_TRUE(acquire(io, store, ttl).value.acquired) << store.last_error();

  server.signal(SIGSTOP);
  const auto start = std::chrono::steady_clock::now();
  auto first = start_acquire(store, ttl);
  auto second = start_acquire(store, ttl);
  ASSERT_TRUE(run_until(
      io, [&] { return first->calls > 0 && second->calls > 0; }, 10s));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(first->ec, redis_errc::timeout) << first->ec.message();
  EXPECT_EQ(second->ec, redis_errc::timeout) << second->ec.message();
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_NE(store.last_error().find("within 300 ms"), std::string::npos) << store.last_error();
  EXPECT_EQ(store.connection_state(), "disconnected");

  server.signal(SIGCONT);
  auto after = acquire(io, store, ttl);
  ASSERT_FALSE(after.ec) << store.last_error();
  EXPECT_TRUE(after.value.acquired);
  // Late replies of the timed-out commands never reach anyone twice.
  run_for(io, 200ms);
  EXPECT_EQ(first->calls, 1);
  EXPECT_EQ(second->calls, 1);
}

TEST(redis_store_failure, password_is_sent_and_wrong_password_is_auth_failed) {
  const std::string secret = "s3cret-pass";
  baton::testing::redis_server server(baton::testing::redis_server_options{secret, false});
  seed_counter(server);
  asio::io_context io;

  auto good_opts = options_for(server, "node-a");
  good_opts.password = secret;
  baton::redis_store good(io, good_opts);
  auto ok = acquire(io, good, ttl);
  ASSERT_FALSE(ok.ec) << good.last_error();
  EXPECT_TRUE(ok.value.acquired);

  // The password from the URL, with the ACL user named.
  auto user_opts = options_for(server, "node-u");
  user_opts.endpoint.username = "default";
  user_opts.endpoint.password = secret;
  baton::redis_store user(io, user_opts);
  auto user_r = acquire(io, user, ttl);
  ASSERT_FALSE(user_r.ec) << user.last_error();
  EXPECT_FALSE(user_r.value.acquired);
  EXPECT_EQ(user_r.value.holder, "node-a");

  auto bad_opts = options_for(server, "node-b");
  bad_opts.password = "wrong-guess";
  baton::redis_store bad(io, bad_opts);
  auto denied = acquire(io, bad, ttl);
  EXPECT_EQ(denied.ec, redis_errc::auth_failed) << denied.ec.message();
  EXPECT_NE(bad.last_error().find("AUTH"), std::string::npos) << bad.last_error();
  EXPECT_EQ(bad.last_error().find("wrong-guess"), std::string::npos) << "password leaked";

  baton::redis_store none(io, options_for(server, "node-c"));
  auto noauth = acquire(io, none, ttl);
  EXPECT_EQ(noauth.ec, redis_errc::auth_failed) << none.last_error();
  EXPECT_NE(none.last_error().find("NOAUTH"), std::string::npos) << none.last_error();
}

TEST(redis_store_failure, unix_socket_transport_works) {
  baton::testing::redis_server server(baton::testing::redis_server_options{"", true});
  seed_counter(server);
  asio::io_context io;
  auto opts = options_for(server, "node-a");
  opts.endpoint.kind = baton::redis_endpoint::transport::unix_socket;
  opts.endpoint.path = server.unix_path();
  opts.endpoint.host.clear();
  baton::redis_store store(io, opts);
  auto r = acquire(io, store, ttl);
  ASSERT_FALSE(r.ec) << store.last_error();
  EXPECT_TRUE(r.value.acquired);
  EXPECT_EQ(server.command({"GET", baton::lease_key(election)}),
            std::vector<std::string>{store.lease_value()});
  EXPECT_TRUE(is_release_ok(io, store));
}

TEST(redis_store_failure, endpoints_parsed_from_urls_connect) {
  const std::string secret = "url-secret";
  baton::testing::redis_server server(baton::testing::redis_server_options{secret, true});
  seed_counter(server, 2);
  asio::io_context io;
  auto tcp = options_for(server, "node-a");
  tcp.endpoint = baton::parse_redis_url("redis://:" + secret + "@127.0.0.1:" +
                                        std::to_string(server.port()) + "/2");
  baton::redis_store over_tcp(io, tcp);
  auto r = acquire(io, over_tcp, ttl);
  ASSERT_FALSE(r.ec) << over_tcp.last_error();
  EXPECT_TRUE(r.value.acquired);

  auto local = options_for(server, "node-b");
  local.endpoint = baton::parse_redis_url(server.unix_url() + "?db=2");
  local.password = secret;
  baton::redis_store over_unix(io, local);
  auto seen = acquire(io, over_unix, ttl);
  ASSERT_FALSE(seen.ec) << over_unix.last_error();
  EXPECT_FALSE(seen.value.acquired);
  EXPECT_EQ(seen.value.holder, "node-a");
}

TEST(redis_store_failure, missing_unix_socket_is_connect_failed) {
  asio::io_context io;
  baton::redis_store_options opts;
  opts.endpoint.kind = baton::redis_endpoint::transport::unix_socket;
  opts.endpoint.path = "/nonexistent/baton-test/redis.sock";
  opts.election = election;
  opts.node_id = "node-a";
  baton::redis_store store(io, opts);
  auto r = acquire(io, store, ttl);
  EXPECT_EQ(r.ec, redis_errc::connect_failed);
  EXPECT_NE(store.last_error().find("/nonexistent/baton-test/redis.sock"), std::string::npos)
      << store.last_error();
}

TEST(redis_store_failure, close_aborts_a_command_in_flight_exactly_once) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  auto opts = options_for(server, "node-a");
  opts.command_timeout = 5s;
  baton::redis_store store(io, opts);
  ASSERT_TRUE(acquire(io, store, ttl).value.acquired) << store.last_error();

  // Frozen, so the command is written and stays unanswered.
  server.signal(SIGSTOP);
  auto pending = start_acquire(store, ttl);
  run_for(io, 100ms);
  ASSERT_EQ(pending->calls, 0);
  store.close();
  EXPECT_EQ(pending->calls, 0) << "completed inline inside close()";
  ASSERT_TRUE(run_until(
      io, [&] { return pending->calls > 0; }, 5s));
  EXPECT_TRUE(is_aborted(pending->ec)) << pending->ec.message();
  server.signal(SIGCONT);
  run_for(io, 300ms);
  EXPECT_EQ(pending->calls, 1);

  // After close everything is aborted, still never inline.
  auto later = start_acquire(store, ttl);
  EXPECT_EQ(later->calls, 0);
  ASSERT_TRUE(run_until(
      io, [&] { return later->calls > 0; }, 5s));
  EXPECT_TRUE(is_aborted(later->ec));
  EXPECT_EQ(store.connection_state(), "disconnected");
}

TEST(redis_store_failure, close_right_after_a_call_aborts_it) {
  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store store(io, options_for(server, "node-a"));
  auto pending = start_acquire(store, ttl);
  int renews = 0;
  std::error_code renew_ec;
  store.async_renew(1000ms, [&](std::error_code ec, baton::renew_reply) {
    ++renews;
    renew_ec = ec;
  });
  store.close();
  run_for(io, 500ms);
  EXPECT_EQ(pending->calls, 1);
  EXPECT_TRUE(is_aborted(pending->ec)) << pending->ec.message();
  EXPECT_EQ(renews, 1);
  EXPECT_TRUE(is_aborted(renew_ec));
}

TEST(redis_store_failure, destroyed_store_never_calls_back) {
  baton::testing::redis_server server;
  asio::io_context io;
  std::shared_ptr<acquired> pending;
  int heard = 0;
  {
    baton::redis_store store(io, options_for(server, "node-a"));
    store.watch_releases([&] { ++heard; });
    pending = start_acquire(store, ttl);
    run_for(io, 5ms);
    store.close();
  }
  {
    baton::redis_store store(io, options_for(server, "node-b"));
    pending = start_acquire(store, ttl);
  }
  run_for(io, 500ms);
  EXPECT_EQ(pending->calls, 0);
  EXPECT_EQ(heard, 0);
}

TEST(redis_store_failure, subscription_survives_a_restart) {
  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store holder(io, options_for(server, "node-a"));
  baton::redis_store watcher(io, options_for(server, "node-b"));
  int heard = 0;
  watcher.watch_releases([&] { ++heard; });
  ASSERT_TRUE(run_until(io, [&] { return watcher.subscription_state() == "subscribed"; }));

  server.restart();
  // The resubscribe itself is announced once: a release may have been missed.
  ASSERT_TRUE(run_until(
      io, [&] { return heard >= 1; }, 20s))
      << "no call after resubscribing; state " << watcher.subscription_state();
  EXPECT_EQ(heard, 1);
  EXPECT_EQ(watcher.subscription_state(), "subscribed");

  seed_counter(server);
  ASSERT_TRUE(acquire(io, holder, ttl).value.acquired) << holder.last_error();
  ASSERT_TRUE(is_release_ok(io, holder)) << holder.last_error();
  ASSERT_TRUE(run_until(io, [&] { return heard >= 2; })) << "release after restart not heard";
}

TEST(redis_store_failure, subscription_ping_notices_a_frozen_server) {
  baton::testing::redis_server server;
  asio::io_context io;
  auto opts = options_for(server, "node-b");
  opts.command_timeout = 300ms;
  opts.subscription_ping_interval = 100ms;
  baton::redis_store watcher(io, opts);
  int heard = 0;
  watcher.watch_releases([&] { ++heard; });
  ASSERT_TRUE(run_until(io, [&] { return watcher.subscription_state() == "subscribed"; }));

  server.signal(SIGSTOP);
  EXPECT_TRUE(run_until(
      io, [&] { return watcher.subscription_state() != "subscribed"; }, 10s));
  server.signal(SIGCONT);
  ASSERT_TRUE(run_until(
      io, [&] { return heard >= 1 && watcher.subscription_state() == "subscribed"; }, 20s))
      << watcher.subscription_state();
  EXPECT_EQ(heard, 1);
}

TEST(redis_store_failure, watching_a_dead_server_is_bounded_and_quiet) {
  baton::testing::redis_server server;
  const auto port = server.port();
  server.kill_and_wait();
  asio::io_context io;
  baton::redis_store_options opts;
  opts.endpoint.port = port;
  opts.election = election;
  opts.node_id = "node-b";
  opts.resubscribe_backoff_initial = 10ms;
  opts.resubscribe_backoff_max = 40ms;
  baton::redis_store watcher(io, opts);
  int heard = 0;
  watcher.watch_releases([&] { ++heard; });
  run_for(io, 500ms);
  EXPECT_EQ(heard, 0);
  EXPECT_NE(watcher.subscription_state(), "subscribed");
  watcher.close();
  EXPECT_EQ(watcher.subscription_state(), "off");
}

TEST(redis_store_failure, store_may_be_destroyed_from_its_own_callbacks) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  auto holder = std::make_unique<baton::redis_store>(io, options_for(server, "node-a"));
  auto watcher = std::make_unique<baton::redis_store>(io, options_for(server, "node-b"));
  bool heard = false;
  watcher->watch_releases([&] {
    heard = true;
    watcher.reset();
  });
  ASSERT_TRUE(run_until(io, [&] { return watcher->subscription_state() == "subscribed"; }));
  ASSERT_TRUE(acquire(io, *holder, ttl).value.acquired) << holder->last_error();

  bool released = false;
  holder->async_release([&](std::error_code ec, bool r) {
    EXPECT_FALSE(ec);
    released = r;
    holder.reset();
  });
  ASSERT_TRUE(run_until(io, [&] { return released && heard; }));
  EXPECT_FALSE(holder);
  EXPECT_FALSE(watcher);
  run_for(io, 200ms);
}

}  // namespace
