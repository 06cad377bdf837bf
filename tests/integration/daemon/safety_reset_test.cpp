// Redis that forgets, end to end: real batons supervising test workers. When
// Redis restarts empty under a working leader, its lease key is gone at once,
// yet the old app may work until its daemon's next renewal finds that out. No
// standby may start within one ttl of the restart: the fence holds every
// acquisition back, and the log says why.
#include <signal.h>

#include "daemon_fixture.hpp"

namespace baton::testing {
namespace {

TEST_F(daemon_fixture, first_start_on_an_empty_redis_is_held_back_one_ttl) {
  const auto started_at = now_ns();
  auto& node = start_node(1);
  auto worker = wait_for_single_worker(20s);
  // The token counter did not exist: nothing tells a new candidate that no
  // one was working a moment ago, so even the first leader waits a ttl (2 s).
  EXPECT_GE(worker.start_ns, started_at + 1'900'000'000LL) << logs();
  // The warning says both things a missing record can mean, and the way out.
  const auto text = node.log_text();
  EXPECT_NE(text.find("(token counter missing): holding every acquisition back for one ttl "
                      "(2000ms). Either this is the election's first start on this store"),
            std::string::npos)
      << logs();
  EXPECT_NE(text.find("baton init-store"), std::string::npos) << logs();
  EXPECT_NE(text.find("Redis lost its data"), std::string::npos) << logs();
}

TEST_F(daemon_fixture, redis_restarted_empty_holds_the_standbys_back_one_ttl) {
  start_node(1);
  start_node(2);
  auto leader = wait_for_single_worker(20s);
  ASSERT_FALSE(leader.name.empty());
  const auto old_token = std::stoull(leader.token);

  const auto restarted_at = now_ns();
  redis->restart();
  event_log log(events);
  // The worker writes its start line, then the one with its token.
  ASSERT_TRUE(wait_for(
      log,
      [](const event_log& l) { return l.start_count() >= 2 && !l.intervals()[1].token.empty(); },
      20s))
      << logs();
  const auto& old_app = log.intervals()[0];
  const auto& next_app = log.intervals()[1];
  // The old app stopped once its daemon's renewal found the lease gone; the
  // next one (whichever node) started no sooner than a ttl after the restart.
  EXPECT_TRUE(old_app.ended) << logs();
  EXPECT_GE(next_app.start_ns, restarted_at + 1'900'000'000LL) << logs();
  EXPECT_GT(next_app.start_ns, old_app.end_ns);
  ASSERT_FALSE(next_app.token.empty());
  EXPECT_GT(std::stoull(next_app.token), old_token) << "tokens grow across the data loss";
  expect_no_overlap();

  bool logged = false;
  for (const auto& n : nodes) {
    logged = logged || n->log_text().find("Redis lost its data or failed over (run_id changed from") !=
                           std::string::npos;
  }
  EXPECT_TRUE(logged) << logs();
  auto status = socket_request(socket_of(index_of(next_app)), R"({"cmd":"status"})", 2s);
  ASSERT_TRUE(status);
  EXPECT_NE(status->find("\"redis_reset\":\""), std::string::npos) << *status;
}

}  // namespace
}  // namespace baton::testing
