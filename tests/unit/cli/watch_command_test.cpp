// `baton watch`: the status line first, every published event after it, in
// text or as received, and the three ways it ends (daemon closes: 1; signal:
// 0; daemon unreachable or silent: 1).
#include <signal.h>

#include <regex>

#include "cli_test_util.hpp"

namespace baton::cli_test {
namespace {

json event(const char* name, json fields) {
  json e = {{"type", "event"}, {"event", name},      {"seq", 1},
            {"mono_ns", 5},    {"node_id", "web-1"}, {"election", "jobs"}};
  e.update(fields);
  return e;
}

std::vector<json> sample_events() {
  return {
      event("state", {{"from", "idle"}, {"to", "acquiring"}, {"reason", "started"}, {"token", 0}}),
      event("start", {{"reason", "acquired"}, {"token", 42}, {"lease_remaining_ms", 6'600}}),
      event("renewed", {{"token", 42}, {"lease_remaining_ms", 6'600}, {"stopping", false}}),
      event("state", {{"from", "working"},
                      {"to", "renewing"},
                      {"reason", "redis_error"},
                      {"detail", "timeout"},
                      {"token", 42}}),
      event("stop", {{"reason", "shutdown"},
                     {"token", 42},
                     {"stop_within_ms", 10'000},
                     {"ack_required", false}}),
      event("kill", {{"token", 42}}),
      event("future", {{"answer", 42}}),
  };
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

using watch_test = cli_test;

TEST_F(watch_test, prints_status_then_events_and_exits_1_when_the_daemon_closes) {
  fake_daemon daemon(socket_path(), {{"node_id", "web-1"},
                                     {"state", "working"},
                                     {"leader", "web-1"},
                                     {"token", 42},
                                     {"is_leader", true}});
  background_cli watch({"watch", "--socket", daemon.path()});
  ASSERT_TRUE(watch.out().wait_for("status: ", 10s)) << watch.err().text();
  for (const auto& e : sample_events()) daemon.publish(e);
  ASSERT_TRUE(watch.out().wait_for("future", 10s)) << watch.out().text();
  daemon.close_clients();
  EXPECT_EQ(watch.finish(), 1);
  EXPECT_EQ(watch.err().text(), "baton: the daemon closed the connection\n");

  const auto lines = lines_of(watch.out().text());
  const std::vector<std::string> expected = {
      "status: node web-1, state working, leader web-1 (this node), token 42",
      "state idle -> acquiring (started)",
      "start token 42 (acquired), lease valid 6.6s",
      "renewed, lease valid 6.6s",
      "state working -> renewing (redis_error: timeout)",
      "stop (shutdown), kill in 10000ms",
      "kill token 42",
      "future {\"answer\":42}",
  };
  ASSERT_EQ(lines.size(), expected.size()) << watch.out().text();
  const std::regex time_prefix(R"(^\d\d:\d\d:\d\d\.\d\d\d $)");
  for (std::size_t i = 0; i < lines.size(); ++i) {
    ASSERT_GT(lines[i].size(), 13u);
    EXPECT_TRUE(std::regex_match(lines[i].substr(0, 13), time_prefix)) << lines[i];
    EXPECT_EQ(lines[i].substr(13), expected[i]);
  }
}

TEST_F(watch_test, json_prints_every_message_as_received) {
  fake_daemon daemon(socket_path(), {{"node_id", "web-1"}, {"is_leader", false}});
  background_cli watch({"watch", "--json", "--socket", daemon.path()});
  ASSERT_TRUE(watch.out().wait_for("\"type\":\"status\"", 10s)) << watch.err().text();
  for (const auto& e : sample_events()) daemon.publish(e);
  ASSERT_TRUE(watch.out().wait_for("future", 10s)) << watch.out().text();
  daemon.close_clients();
  EXPECT_EQ(watch.finish(), 1);

  const auto lines = lines_of(watch.out().text());
  const auto events = sample_events();
  ASSERT_EQ(lines.size(), events.size() + 1) << watch.out().text();
  EXPECT_EQ(json::parse(lines[0]).value("node_id", ""), "web-1");
  for (std::size_t i = 0; i < events.size(); ++i) EXPECT_EQ(json::parse(lines[i + 1]), events[i]);
}

TEST_F(watch_test, sigint_ends_it_with_exit_0) {
  fake_daemon daemon(socket_path());
  background_cli watch({"watch", "--socket", daemon.path()});
  ASSERT_TRUE(watch.out().wait_for("status: ", 10s)) << watch.err().text();
  // watch has its signal handler in place since before it connected.
  ASSERT_TRUE(watch.running());
  ASSERT_EQ(::kill(::getpid(), SIGINT), 0);
  EXPECT_EQ(watch.finish(), 0);
  EXPECT_EQ(watch.err().text(), "");
}

TEST_F(watch_test, sigterm_ends_it_with_exit_0) {
  fake_daemon daemon(socket_path());
  background_cli watch({"watch", "--json", "--socket", daemon.path()});
  ASSERT_TRUE(watch.out().wait_for("\"type\":\"status\"", 10s)) << watch.err().text();
  ASSERT_TRUE(watch.running());
  ASSERT_EQ(::kill(::getpid(), SIGTERM), 0);
  EXPECT_EQ(watch.finish(), 0);
}

// Writes fail, as on a pipe whose reader left while SIGPIPE is ignored.
class closed_pipe : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

TEST_F(watch_test, ends_when_nobody_reads_its_output) {
  fake_daemon daemon(socket_path());
  closed_pipe pipe;
  std::ostream out(&pipe);
  std::ostringstream err;
  const std::string path = daemon.path();
  const char* argv[] = {"baton", "watch", "--socket", path.c_str(), nullptr};
  auto result = std::async(std::launch::async,
                           [&] { return run_client_command(4, argv, env_of(), out, err); });
  if (result.wait_for(10s) != std::future_status::ready) {
    ADD_FAILURE() << "watch kept running with nowhere to write";
    daemon.close_clients();  // lets it end, so the test does too
  }
  EXPECT_EQ(result.get(), 1);
}

TEST_F(watch_test, unreachable_daemon_exits_1) {
  auto r = run_cli({"watch", "--socket", socket_path("nobody.sock")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot reach the daemon"), std::string::npos);
}

TEST_F(watch_test, silent_daemon_times_out) {
  raw_server silent(socket_path());
  auto r = run_cli({"watch", "--socket", socket_path(), "--timeout", "300ms"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no reply within 300ms"), std::string::npos) << r.err;
}

TEST_F(watch_test, refused_subscription_exits_1) {
  raw_server refusing(socket_path(),
                      "{\"type\":\"error\",\"error\":\"too many clients (limit 256)\"}\n");
  auto r = run_cli({"watch", "--socket", socket_path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "baton: the daemon answered: too many clients (limit 256)\n");
}

}  // namespace
}  // namespace baton::cli_test
