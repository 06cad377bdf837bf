// The postgres store behind a real PgBouncer: in transaction mode LISTEN
// cannot work (each transaction may get another server session), which the
// store must report in one line naming the pooler, never claiming that
// announcements reach it; in session mode everything works, wake-ups included.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "postgres/postgres_store.hpp"
#include "support/servers/pgbouncer_server.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::pgbouncer_server;
using testing::postgres_server;

struct pooler : ::testing::Test {
  postgres_server pg;
  boost::asio::io_context io;
  std::vector<store_events::wakeups> wakeups;
  int releases_heard = 0;

  std::unique_ptr<postgres_store> store(const std::string& conninfo, const std::string& node) {
    postgres_store_options o;
    o.conninfo = conninfo;
    o.identity = {"e", node, milliseconds(3000)};
    o.connect_timeout = 2000ms;
    o.command_timeout = 1000ms;
    return std::make_unique<postgres_store>(io, std::move(o));
  }

  void watch(lease_store& s) {
    s.watch([this](const store_event& e) {
      if (const auto* w = std::get_if<store_events::wakeups>(&e)) wakeups.push_back(*w);
      if (std::holds_alternative<store_events::released>(e)) ++releases_heard;
    });
  }

  // Runs the io_context until `done()` holds, at most `limit`.
  template <typename Pred>
  bool run_until(Pred done, std::chrono::milliseconds limit = 15s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done() && std::chrono::steady_clock::now() < deadline) {
      if (io.stopped()) io.restart();
      io.run_one_for(50ms);
    }
    return done();
  }

  template <typename T>
  T answer(std::function<void(std::function<void(store_error, T)>)> call) {
    std::optional<T> out;
    store_error error;
    call([&](store_error e, T a) {
      error = std::move(e);
      out.emplace(std::move(a));
    });
    EXPECT_TRUE(run_until([&] { return out.has_value(); }, 10s)) << "no answer within 10 s";
    EXPECT_FALSE(error) << error.message();
    return out.value_or(T{});
  }

  bool trusted() const { return !wakeups.empty() && wakeups.back().trusted; }
};

TEST_F(pooler, transaction_pooling_is_reported_by_name_and_wakeups_are_never_trusted) {
  pgbouncer_server bouncer(pg, "transaction");
  auto s = store(bouncer.conninfo(), "n1");
  // Leases still work: every statement is a transaction of its own.
  const auto a = answer<acquire_answer>([&](auto h) { s->async_acquire(std::move(h)); });
  EXPECT_TRUE(a.acquired() || a.outcome == acquire_outcome::held_back);
  watch(*s);
  ASSERT_TRUE(run_until([&] {
    for (const auto& w : wakeups) {
      if (!w.why.empty()) return true;
    }
    return false;
  })) << "no watch failure reported within 15 s";
  const auto& reported = *std::find_if(wakeups.begin(), wakeups.end(),
                                       [](const auto& w) { return !w.why.empty(); });
  EXPECT_FALSE(reported.trusted);
  EXPECT_NE(reported.why.find("transaction mode"), std::string::npos) << reported.why;
  EXPECT_NE(reported.why.find("PgBouncer"), std::string::npos) << reported.why;
  EXPECT_NE(s->status().last_error.find("pool_mode=transaction"), std::string::npos)
      << s->status().last_error;
  // Retries keep failing the same way: still not trusted a few seconds on.
  run_until([] { return false; }, 3s);
  for (const auto& w : wakeups) EXPECT_FALSE(w.trusted) << "wake-ups trusted through the pooler";
  EXPECT_NE(s->status().wakeups, wakeup_state::subscribed);
}

TEST_F(pooler, session_pooling_works_and_releases_wake_the_standby) {
  pgbouncer_server bouncer(pg, "session");
  auto leader = store(pg.conninfo(), "leader");
  const auto a = answer<acquire_answer>([&](auto h) { leader->async_acquire(std::move(h)); });
  ASSERT_TRUE(a.acquired() || a.outcome == acquire_outcome::held_back);
  auto standby = store(bouncer.conninfo(), "standby");
  watch(*standby);
  ASSERT_TRUE(run_until([&] { return trusted(); })) << "wake-ups not trusted within 15 s";
  for (const auto& w : wakeups) EXPECT_TRUE(w.why.empty()) << w.why;
  const int before = releases_heard;
  if (a.acquired()) {
    answer<release_answer>([&](auto h) { leader->async_release(std::move(h)); });
    EXPECT_TRUE(run_until([&] { return releases_heard > before; }, 10s))
        << "the release was not heard through the session pooler";
  }
}

}  // namespace
}  // namespace baton
