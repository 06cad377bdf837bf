// The fixture of the Redlock store's integration tests
// (redlock_store_test.cpp, redlock_switchover_test.cpp): three real
// redis-servers as the masters, started fresh per test, on which the
// election has run before (each token counter is seeded, so the first
// acquire is not held back); stores made on them; each store call run until
// its handler ran. A test may freeze a master (SIGSTOP): the fixture thaws
// every master before the servers are stopped.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"
#include "integration/redis/store_test_util.hpp"
#include "integration/redlock/redlock_test_util.hpp"
#include "redis/lease_keys.hpp"
#include "redlock/redlock_store.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::testing {

using namespace std::chrono_literals;

class redlock_fixture : public ::testing::Test {
 protected:
  redlock_fixture() {
    for (auto& server : servers_) store_test_util::seed_counter(server);
  }
  ~redlock_fixture() override {
    // Thaw anything a test froze, so the servers can be stopped.
    for (auto& server : servers_) server.signal(SIGCONT);
  }

  /// A store named `node` on the three masters, with lease ttl `ttl`, connect
  /// and command timeouts `command_timeout`, registered with `priority`
  /// (0 = no preference).
  std::unique_ptr<redlock_store> make(const std::string& node, milliseconds ttl = 5s,
                                      milliseconds command_timeout = 4s, int priority = 0) {
    auto o = redlock_test_util::options_for(servers_, node, ttl);
    o.identity.priority = priority;
    o.connect_timeout = command_timeout;
    o.command_timeout = command_timeout;
    return std::make_unique<redlock_store>(io_, std::move(o));
  }

  store_test_util::acquired acquire(lease_store& s) { return store_test_util::acquire(io_, s); }

  store_test_util::outcome<renew_answer> renew(lease_store& s) {
    return store_test_util::renew(io_, s);
  }
  store_test_util::outcome<release_answer> release(lease_store& s) {
    return store_test_util::release(io_, s);
  }

  /// The election's token counter on `server` ("" = none).
  std::string counter_on(const redis_server& server) const {
    const auto reply = server.command({"GET", token_key(store_test_util::election)});
    return reply.empty() ? "" : reply.front();
  }

  boost::asio::io_context io_;
  std::array<redis_server, 3> servers_;
};

}  // namespace baton::testing
