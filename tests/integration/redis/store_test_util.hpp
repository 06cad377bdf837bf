// Helpers shared by the redis_store integration tests (redis_store_test.cpp,
// redis_store_failure_test.cpp, redis_store_reset_test.cpp): the election
// they compete in, bounded ways to drive the io_context, store options
// pointing at the test's redis-server, seeding the token counter, an acquire
// whose outcome is captured for the test to check, and status() as text.
// Helpers that a single file shapes on purpose (its renew, release, retries)
// stay in it. A store's ttl is fixed when it is made: a test that needs
// another ttl makes another store (with the same node id it has the same
// lease value, so it acts on the same lease).
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <system_error>

#include "redis/lease_keys.hpp"
#include "redis/redis_store.hpp"
#include "baton/time.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing::store_test_util {

using namespace std::chrono_literals;

/// The election every store in these tests competes in.
inline const std::string election = "jobs";

/// Runs `io` until `done()` holds or `limit` (default 10 s) passes; false on
/// timeout or when nothing is left that could make `done()` true.
inline bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
                      milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(deadline - now) == 0 && io.stopped()) return done();
  }
  return true;
}

/// Runs `io` for `d` of wall time, whatever happens in it.
inline void run_for(boost::asio::io_context& io, milliseconds d) {
  io.restart();
  io.run_for(d);
}

/// The lease ttl of a store unless a test asks for another (5 s): long
/// enough never to run out within a test.
inline constexpr milliseconds default_ttl{5000};

/// Options for a store named `node` in `election` on `server` over TCP, with
/// lease ttl `ttl` and 2 s connect and command timeouts.
inline redis_store_options options_for(const redis_server& server, const std::string& node,
                                       milliseconds ttl = default_ttl) {
  redis_store_options o;
  o.endpoint.host = server.host();
  o.endpoint.port = server.port();
  o.identity = store_identity{election, node, ttl};
  o.connect_timeout = 2s;
  o.command_timeout = 2s;
  return o;
}

/// Makes `election` one that has run before on database `db` (default 0):
/// its token counter exists (1000), so the first acquire is not held back
/// (see redis_store_reset_test.cpp). Database 0 gets a plain SET, so no
/// script shows up in INFO commandstats; SELECT inside a script changes only
/// the script's database.
inline void seed_counter(const redis_server& server, int db = 0) {
  if (db == 0) {
    server.command({"SET", token_key(election), "1000"});
    return;
  }
  server.command({"EVAL", "redis.call('SELECT', ARGV[1]) return redis.call('SET', KEYS[1], '1000')",
                  "1", token_key(election), std::to_string(db)});
}

/// What a store's handler was called with, and how many times.
template <typename T>
struct outcome {
  int calls = 0;
  /// The call's own error: code and detail (empty on success).
  store_error error;
  T value{};
};

/// The outcome of an async_acquire.
using acquired = outcome<acquire_answer>;

/// Starts an acquire (for the store's ttl) whose outcome lands in the
/// returned object; shared so that a handler running after the test gave up
/// stays harmless.
inline std::shared_ptr<acquired> start_acquire(lease_store& store) {
  auto out = std::make_shared<acquired>();
  store.async_acquire([out](store_error e, acquire_answer r) {
    ++out->calls;
    out->error = std::move(e);
    out->value = std::move(r);
  });
  return out;
}

/// Acquires and runs `io` until the handler ran, failing the test if that
/// takes longer than `limit` (default 10 s).
inline acquired acquire(boost::asio::io_context& io, lease_store& store,
                        milliseconds limit = 10s) {
  auto out = start_acquire(store);
  EXPECT_TRUE(run_until(
      io, [&] { return out->calls > 0; }, limit))
      << "acquire never completed";
  return *out;
}

/// Runs `call(handler)` and `io` until the handler ran (10 s at most,
/// failing the test otherwise, naming `what`); its outcome.
template <typename T>
outcome<T> completed(boost::asio::io_context& io, const char* what,
                     const std::function<void(std::function<void(store_error, T)>)>& call) {
  auto out = std::make_shared<outcome<T>>();
  call([out](store_error e, T r) {
    ++out->calls;
    out->error = std::move(e);
    out->value = std::move(r);
  });
  EXPECT_TRUE(run_until(io, [&] { return out->calls > 0; })) << what << " never completed";
  return *out;
}

/// Renews and runs `io` until the handler ran.
inline outcome<renew_answer> renew(boost::asio::io_context& io, lease_store& store) {
  return completed<renew_answer>(io, "renew", [&](auto h) { store.async_renew(std::move(h)); });
}

/// Releases and runs `io` until the handler ran.
inline outcome<release_answer> release(boost::asio::io_context& io, lease_store& store) {
  return completed<release_answer>(io, "release",
                                   [&](auto h) { store.async_release(std::move(h)); });
}

/// status().link as text: "connected", "connecting" or "disconnected".
inline std::string link_of(const lease_store& store) { return to_string(store.status().link); }

/// status().wakeups as text: "off", "connecting", "subscribed" or
/// "disconnected".
inline std::string wakeups_of(const lease_store& store) {
  return to_string(store.status().wakeups);
}

/// status().last_error: the most recent failure ("" = none yet).
inline std::string last_error_of(const lease_store& store) { return store.status().last_error; }

}  // namespace baton::testing::store_test_util
