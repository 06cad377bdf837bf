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
#include <variant>

#include "redis/lease_keys.hpp"
#include "redis/redis_error.hpp"
#include "redis/redis_store.hpp"
#include "store_test_util.hpp"
#include "support/servers/redis_server.hpp"

namespace {

namespace asio = boost::asio;
using baton::milliseconds;
using baton::redis_errc;
using baton::store_errc;
using namespace std::chrono_literals;

using namespace baton::testing::store_test_util;

// The lease ttl of every store here (5 s): long enough never to run out
// within a test.
constexpr milliseconds ttl = default_ttl;

bool is_release_ok(asio::io_context& io, baton::redis_store& store) {
  int calls = 0;
  bool ok = false;
  store.async_release([&](baton::store_error e, baton::release_answer r) {
    ++calls;
    ok = !e && r == baton::release_answer::released;
  });
  EXPECT_TRUE(run_until(io, [&] { return calls > 0; }));
  return ok;
}

bool is_aborted(const baton::store_error& e) {
  return e.code == std::errc::operation_canceled;
}

// A listener that counts the releases announced by other nodes (and the
// resubscribes, which stand for a release that may have gone unheard).
baton::lease_store::event_listener count_releases(int& heard) {
  return [&heard](const baton::store_event& e) {
    if (std::holds_alternative<baton::store_events::released>(e)) ++heard;
  };
}

TEST(redis_store_failure, killed_server_gives_clear_errors_and_restart_recovers) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  baton::redis_store store(io, options_for(server, "node-a"));
  auto before = acquire(io, store);
  ASSERT_TRUE(before.value.acquired()) << before.error.message();

  server.kill_and_wait();
  auto failed = acquire(io, store);
  EXPECT_EQ(failed.calls, 1);
  ASSERT_TRUE(failed.error);
  const auto& code = failed.error.code;
  EXPECT_EQ(&code.category(), &baton::redis_category()) << code.message();
  EXPECT_TRUE(code == redis_errc::connection_lost || code == redis_errc::connect_failed)
      << code.message();
  // Either way, store-neutrally: the store is unavailable.
  EXPECT_EQ(code, store_errc::unavailable) << code.message();
  EXPECT_FALSE(failed.error.detail.empty());
  EXPECT_FALSE(last_error_of(store).empty());

  // With the connection gone, the next attempt reconnects and is refused.
  auto refused = acquire(io, store);
  EXPECT_EQ(refused.error.code, redis_errc::connect_failed);
  EXPECT_EQ(refused.error.code, store_errc::unavailable);
  const auto refusal = "connect 127.0.0.1:" + std::to_string(server.port()) + ": Connection refused";
  EXPECT_EQ(refused.error.detail, refusal);
  EXPECT_EQ(last_error_of(store), refusal);
  EXPECT_EQ(store.status().last_error_kind, "unavailable");
  EXPECT_EQ(link_of(store), "disconnected");

  // Restarted empty: no data, no cached scripts (EVALSHA -> NOSCRIPT -> EVAL).
  // The new run_id holds the acquire back for one ttl (the fence), with no
  // holder to name.
  server.restart();
  auto held = acquire(io, store);
  ASSERT_FALSE(held.error) << held.error.message();
  EXPECT_FALSE(held.value.acquired());
  EXPECT_TRUE(held.value.outcome == baton::acquire_outcome::held_back && held.value.holder == "")
      << "holder \"" << held.value.holder << "\"";
  EXPECT_GT(held.value.token, before.value.token) << "tokens must grow across a data loss";
  EXPECT_EQ(link_of(store), "connected");
  server.command({"DEL", baton::fence_key(election)});
  auto after = acquire(io, store);
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_TRUE(after.value.acquired());
  EXPECT_GT(after.value.token, held.value.token);
}

TEST(redis_store_failure, frozen_server_times_out_and_store_recovers) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  auto opts = options_for(server, "node-a");
  opts.command_timeout = 300ms;
  baton::redis_store store(io, opts);
  ASSERT_TRUE(acquire(io, store).value.acquired()) << last_error_of(store);

  server.signal(SIGSTOP);
  const auto start = std::chrono::steady_clock::now();
  auto first = start_acquire(store);
  auto second = start_acquire(store);
  ASSERT_TRUE(run_until(
      io, [&] { return first->calls > 0 && second->calls > 0; }, 10s));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(first->error.code, redis_errc::timeout) << first->error.message();
  EXPECT_EQ(second->error.code, redis_errc::timeout) << second->error.message();
  EXPECT_GE(elapsed, 250ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_NE(first->error.detail.find("within 300 ms"), std::string::npos) << first->error.detail;
  EXPECT_NE(last_error_of(store).find("within 300 ms"), std::string::npos) << last_error_of(store);
  EXPECT_EQ(link_of(store), "disconnected");

  server.signal(SIGCONT);
  auto after = acquire(io, store);
  ASSERT_FALSE(after.error) << after.error.message();
  EXPECT_TRUE(after.value.acquired());
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
  auto ok = acquire(io, good);
  ASSERT_FALSE(ok.error) << ok.error.message();
  EXPECT_TRUE(ok.value.acquired());

  // The password from the URL, with the ACL user named.
  auto user_opts = options_for(server, "node-u");
  user_opts.endpoint.username = "default";
  user_opts.endpoint.password = secret;
  baton::redis_store user(io, user_opts);
  auto user_r = acquire(io, user);
  ASSERT_FALSE(user_r.error) << user_r.error.message();
  EXPECT_FALSE(user_r.value.acquired());
  EXPECT_EQ(user_r.value.holder, "node-a");

  auto bad_opts = options_for(server, "node-b");
  bad_opts.password = "wrong-guess";
  baton::redis_store bad(io, bad_opts);
  auto denied = acquire(io, bad);
  EXPECT_EQ(denied.error.code, redis_errc::auth_failed) << denied.error.message();
  EXPECT_NE(denied.error.detail.find("AUTH"), std::string::npos) << denied.error.detail;
  EXPECT_NE(last_error_of(bad).find("AUTH"), std::string::npos) << last_error_of(bad);
  EXPECT_EQ(denied.error.detail.find("wrong-guess"), std::string::npos) << "password leaked";
  EXPECT_EQ(last_error_of(bad).find("wrong-guess"), std::string::npos) << "password leaked";
  // Store-neutrally: an auth failure, also as status()'s kind of error.
  EXPECT_EQ(denied.error.code, store_errc::auth);
  EXPECT_EQ(bad.status().last_error_kind, "auth");
  EXPECT_TRUE(bad.status().last_error_at.has_value());

  baton::redis_store none(io, options_for(server, "node-c"));
  auto noauth = acquire(io, none);
  EXPECT_EQ(noauth.error.code, redis_errc::auth_failed) << noauth.error.message();
  EXPECT_NE(noauth.error.detail.find("NOAUTH"), std::string::npos) << noauth.error.detail;
  EXPECT_NE(last_error_of(none).find("NOAUTH"), std::string::npos) << last_error_of(none);
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
  auto r = acquire(io, store);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());
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
  auto r = acquire(io, over_tcp);
  ASSERT_FALSE(r.error) << r.error.message();
  EXPECT_TRUE(r.value.acquired());

  auto local = options_for(server, "node-b");
  local.endpoint = baton::parse_redis_url(server.unix_url() + "?db=2");
  local.password = secret;
  baton::redis_store over_unix(io, local);
  auto seen = acquire(io, over_unix);
  ASSERT_FALSE(seen.error) << seen.error.message();
  EXPECT_FALSE(seen.value.acquired());
  EXPECT_EQ(seen.value.holder, "node-a");
}

TEST(redis_store_failure, missing_unix_socket_is_connect_failed) {
  asio::io_context io;
  baton::redis_store_options opts;
  opts.endpoint.kind = baton::redis_endpoint::transport::unix_socket;
  opts.endpoint.path = "/nonexistent/baton-test/redis.sock";
  opts.identity = baton::store_identity{election, "node-a", ttl};
  baton::redis_store store(io, opts);
  auto r = acquire(io, store);
  EXPECT_EQ(r.error.code, redis_errc::connect_failed);
  EXPECT_NE(r.error.detail.find("/nonexistent/baton-test/redis.sock"), std::string::npos)
      << r.error.detail;
  EXPECT_NE(last_error_of(store).find("/nonexistent/baton-test/redis.sock"), std::string::npos)
      << last_error_of(store);
}

TEST(redis_store_failure, close_aborts_a_command_in_flight_exactly_once) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  auto opts = options_for(server, "node-a");
  opts.command_timeout = 5s;
  baton::redis_store store(io, opts);
  ASSERT_TRUE(acquire(io, store).value.acquired()) << last_error_of(store);

  // Frozen, so the command is written and stays unanswered.
  server.signal(SIGSTOP);
  auto pending = start_acquire(store);
  run_for(io, 100ms);
  ASSERT_EQ(pending->calls, 0);
  store.close();
  EXPECT_EQ(pending->calls, 0) << "completed inline inside close()";
  ASSERT_TRUE(run_until(
      io, [&] { return pending->calls > 0; }, 5s));
  EXPECT_TRUE(is_aborted(pending->error)) << pending->error.message();
  server.signal(SIGCONT);
  run_for(io, 300ms);
  EXPECT_EQ(pending->calls, 1);

  // After close everything is aborted, still never inline.
  auto later = start_acquire(store);
  EXPECT_EQ(later->calls, 0);
  ASSERT_TRUE(run_until(
      io, [&] { return later->calls > 0; }, 5s));
  EXPECT_TRUE(is_aborted(later->error));
  EXPECT_EQ(link_of(store), "disconnected");
}

TEST(redis_store_failure, close_right_after_a_call_aborts_it) {
  baton::testing::redis_server server;
  asio::io_context io;
  baton::redis_store store(io, options_for(server, "node-a"));
  auto pending = start_acquire(store);
  int renews = 0;
  baton::store_error renew_error;
  store.async_renew([&](baton::store_error e, baton::renew_answer) {
    ++renews;
    renew_error = std::move(e);
  });
  store.close();
  run_for(io, 500ms);
  EXPECT_EQ(pending->calls, 1);
  EXPECT_TRUE(is_aborted(pending->error)) << pending->error.message();
  EXPECT_EQ(renews, 1);
  EXPECT_TRUE(is_aborted(renew_error));
}

TEST(redis_store_failure, destroyed_store_never_calls_back) {
  baton::testing::redis_server server;
  asio::io_context io;
  std::shared_ptr<acquired> pending;
  int heard = 0;
  {
    baton::redis_store store(io, options_for(server, "node-a"));
    store.watch(count_releases(heard));
    pending = start_acquire(store);
    run_for(io, 5ms);
    store.close();
  }
  {
    baton::redis_store store(io, options_for(server, "node-b"));
    pending = start_acquire(store);
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
  watcher.watch(count_releases(heard));
  ASSERT_TRUE(run_until(io, [&] { return wakeups_of(watcher) == "subscribed"; }));

  server.restart();
  // The resubscribe itself is announced once: a release may have been missed.
  ASSERT_TRUE(run_until(
      io, [&] { return heard >= 1; }, 20s))
      << "no call after resubscribing; state " << wakeups_of(watcher);
  EXPECT_EQ(heard, 1);
  EXPECT_EQ(wakeups_of(watcher), "subscribed");

  seed_counter(server);
  ASSERT_TRUE(acquire(io, holder).value.acquired()) << last_error_of(holder);
  ASSERT_TRUE(is_release_ok(io, holder)) << last_error_of(holder);
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
  watcher.watch(count_releases(heard));
  ASSERT_TRUE(run_until(io, [&] { return wakeups_of(watcher) == "subscribed"; }));

  server.signal(SIGSTOP);
  EXPECT_TRUE(run_until(
      io, [&] { return wakeups_of(watcher) != "subscribed"; }, 10s));
  server.signal(SIGCONT);
  ASSERT_TRUE(run_until(
      io, [&] { return heard >= 1 && wakeups_of(watcher) == "subscribed"; }, 20s))
      << wakeups_of(watcher);
  EXPECT_EQ(heard, 1);
}

TEST(redis_store_failure, watching_a_dead_server_is_bounded_and_quiet) {
  baton::testing::redis_server server;
  const auto port = server.port();
  server.kill_and_wait();
  asio::io_context io;
  baton::redis_store_options opts;
  opts.endpoint.port = port;
  opts.identity = baton::store_identity{election, "node-b", ttl};
  opts.resubscribe_backoff_initial = 10ms;
  opts.resubscribe_backoff_max = 40ms;
  baton::redis_store watcher(io, opts);
  int heard = 0;
  watcher.watch(count_releases(heard));
  run_for(io, 500ms);
  EXPECT_EQ(heard, 0);
  EXPECT_NE(wakeups_of(watcher), "subscribed");
  watcher.close();
  EXPECT_EQ(wakeups_of(watcher), "off");
}

TEST(redis_store_failure, store_may_be_destroyed_from_its_own_callbacks) {
  baton::testing::redis_server server;
  seed_counter(server);
  asio::io_context io;
  auto holder = std::make_unique<baton::redis_store>(io, options_for(server, "node-a"));
  auto watcher = std::make_unique<baton::redis_store>(io, options_for(server, "node-b"));
  bool heard = false;
  watcher->watch([&](const baton::store_event& e) {
    if (!std::holds_alternative<baton::store_events::released>(e)) return;
    heard = true;
    watcher.reset();
  });
  ASSERT_TRUE(run_until(io, [&] { return wakeups_of(*watcher) == "subscribed"; }));
  ASSERT_TRUE(acquire(io, *holder).value.acquired()) << last_error_of(*holder);

  bool released = false;
  holder->async_release([&](baton::store_error e, baton::release_answer r) {
    EXPECT_FALSE(e) << e.message();
    released = r == baton::release_answer::released;
    holder.reset();
  });
  ASSERT_TRUE(run_until(io, [&] { return released && heard; }));
  EXPECT_FALSE(holder);
  EXPECT_FALSE(watcher);
  run_for(io, 200ms);
}

}  // namespace
