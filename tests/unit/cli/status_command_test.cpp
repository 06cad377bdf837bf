// `baton status` and `baton health` against a real app_socket with canned
// status objects, and against sockets that are missing, silent or not baton.
#include <chrono>

#include "cli_test_util.hpp"

namespace baton::cli_test {
namespace {

json leader_status() {
  return {{"node_id", "web-1"},
          {"election", "jobs"},
          {"state", "working"},
          {"since_ms", 12'300},
          {"is_leader", true},
          {"leader", "web-1"},
          {"token", 42},
          {"redis", "connected"},
          {"lease_remaining_ms", 6'100},
          {"last_renew_latency_ms", 1},
          {"transitions", {{"idle->acquiring", 1}, {"acquiring->working", 1}}},
          {"healthy", true},
          {"health", "ok"}};
}

json standby_status() {
  return {{"node_id", "web-2"}, {"election", "jobs"},  {"state", "acquiring"},
          {"since_ms", 800},    {"is_leader", false},  {"leader", "web-1"},
          {"token", 42},        {"redis", "connected"}};
}

using status_test = cli_test;

TEST_F(status_test, leader_gets_a_table_and_exit_0) {
  fake_daemon daemon(socket_path(), leader_status());
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out,
            "node      web-1\n"
            "election  jobs\n"
            "state     working for 12.3s\n"
            "leader    web-1 (this node), token 42\n"
            "lease     6.1s left, last renewal took 1ms\n"
            "redis     connected\n"
            "health    ok\n"
            "history   acquiring->working 1, idle->acquiring 1\n");
}

TEST_F(status_test, standby_exits_3_and_names_the_leader) {
  fake_daemon daemon(socket_path(), standby_status());
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.out.find("leader    web-1, token 42\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("state     acquiring for 800ms\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("lease"), std::string::npos) << r.out;
}

TEST_F(status_test, a_leader_shows_its_terms_age_and_both_pids) {
  auto status = leader_status();
  status["since_ms"] = 43;  // renewed just now: the state is young
  status["leading_for_ms"] = 45'000;
  status["last_renewal_ms_ago"] = 43;
  status["keeper_pid"] = 4321;
  status["child_pid"] = 4321;
  status["command_pid"] = 4322;
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_NE(r.out.find("state     working, leading for 45.0s\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lease     6.1s left, renewed 43ms ago, last renewal took 1ms\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("child     pid 4322 (keeper pid 4321)\n"), std::string::npos) << r.out;
}

TEST_F(status_test, the_stores_last_error_and_a_non_redis_store_show) {
  auto status = leader_status();
  status["store"] = {{"kind", "redis"},
                     {"link", "disconnected"},
                     {"last_error", "AUTH: WRONGPASS invalid username-password pair"},
                     {"last_error_ago_ms", 4200}};
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_NE(r.out.find("redis     connected\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error     AUTH: WRONGPASS invalid username-password pair (4.2s ago)\n"),
            std::string::npos)
      << r.out;

  auto other = standby_status();
  other.erase("redis");
  other["store"] = {{"kind", "postgres"}, {"link", "connected"}, {"last_reset", "promoted"}};
  fake_daemon second(socket_path("second.sock"), other);
  r = run_cli({"status", "--socket", second.path()});
  EXPECT_NE(r.out.find("store     postgres connected (last reset: promoted)\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("error"), std::string::npos) << r.out;
}

// A store of several servers: one row each, named by its role (a
// ZooKeeper server here), with its link and its last error.
TEST_F(status_test, a_row_per_server_of_the_store) {
  auto status = standby_status();
  status.erase("redis");
  status["store"] = {
      {"kind", "zookeeper"},
      {"link", "connected"},
      {"members",
       {{{"endpoint", "10.0.0.1:2181"},
         {"link", "disconnected"},
         {"role", "server"},
         {"last_error", "the connection was lost (connecting)"}},
        {{"endpoint", "10.0.0.2:2181"}, {"link", "connected"}, {"role", "server"}}}}};
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_NE(r.out.find("store     zookeeper connected\n"
                       "server    10.0.0.1:2181 disconnected, last error: the connection was lost "
                       "(connecting)\n"
                       "server    10.0.0.2:2181 connected\n"),
            std::string::npos)
      << r.out;
}

TEST_F(status_test, the_candidates_a_reservation_and_a_hand_over_show_in_their_rows) {
  auto status = leader_status();
  const std::string self = status.value("node_id", "");
  status["candidates"] =
      nlohmann::json::array({{{"node", self}, {"priority", 0}, {"live_for_ms", 90'000}},
                             {{"node", "web-b"}, {"priority", 2}, {"live_for_ms", 31'000}},
                             {{"node", "web-c"}, {"priority", 0}, {"live_for_ms", nullptr}}});
  status["switchover_to"] = "web-b";
  status["reserved_for"] = "web-b";
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(
      r.out.find("nodes     " + self + " (this node), web-b (priority 2, live 31.0s), web-c\n"),
      std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("handover  stepping down for web-b\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reserved  the lease waits for web-b (a switchover)\n"), std::string::npos)
      << r.out;

  status["candidates"] = nullptr;
  fake_daemon later(socket_path() + "2", status);
  auto unknown = run_cli({"status", "--socket", later.path()});
  EXPECT_NE(unknown.out.find("nodes     not listed yet: the store is being asked (ask again)\n"),
            std::string::npos)
      << unknown.out;
}

TEST_F(status_test, optional_fields_show_when_present) {
  auto status = leader_status();
  status["child_pid"] = 4321;
  status["redis_reset"] = "connection lost";
  status["awaiting_ack"] = true;
  status["cooldown_remaining_ms"] = 4'200;
  status["held_back_remaining_ms"] = 2'500;
  status["held_back_why"] = "after a store reset";
  status["healthy"] = false;
  status["health"] = "redis unreachable for 12s";
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("child     pid 4321\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redis     connected (last reset: connection lost)\n"), std::string::npos);
  EXPECT_NE(r.out.find("stopping  waiting for the app's acknowledgement\n"), std::string::npos);
  EXPECT_NE(r.out.find("cooldown  out of the election for another 4.2s\n"), std::string::npos);
  EXPECT_NE(r.out.find("waiting   held back: the store grants no lease for another 2.5s (after a "
                       "store reset)\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("health    redis unreachable for 12s\n"), std::string::npos);
}

// lease.failsafe peers: a leader on its peers' confirmations says so, since
// when and how many confirmed; otherwise the row says the mode is on.
TEST_F(status_test, a_leader_on_peer_confirmations_says_so_in_its_failsafe_row) {
  auto status = leader_status();
  status["failsafe"] = {
      {"mode", "peers"},      {"on_confirmations", true}, {"on_confirmations_for_ms", 8'600},
      {"round_confirmed", 2}, {"round_asked", 2},         {"peer_address", "10.0.0.5:9465"},
      {"refused_requests", 0}};
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("failsafe  leading on peer confirmations for 8.6s: 2 of 2 peers confirmed "
                       "the last round (peer port 10.0.0.5:9465)\n"),
            std::string::npos)
      << r.out;

  auto standby = standby_status();
  standby["failsafe"] = {
      {"mode", "peers"},
      {"on_confirmations", false},
      {"promise", {{"leader", "web-1"}, {"token", 42}, {"remaining_ms", 1'900}}}};
  fake_daemon promised(socket_path("promised.sock"), standby);
  r = run_cli({"status", "--socket", promised.path()});
  EXPECT_NE(r.out.find("failsafe  confirmed web-1's term 42: takes no lease for another 1.9s\n"),
            std::string::npos)
      << r.out;

  status["failsafe"] = {{"mode", "peers"}, {"on_confirmations", false}, {"refused_requests", 3}};
  fake_daemon quiet(socket_path("quiet.sock"), status);
  r = run_cli({"status", "--socket", quiet.path()});
  EXPECT_NE(r.out.find("failsafe  peers: not needed while the store answers, 3 peer requests "
                       "refused\n"),
            std::string::npos)
      << r.out;
}

TEST_F(status_test, missing_and_mistyped_fields_are_tolerated) {
  fake_daemon daemon(socket_path(), json{{"node_id", 7},
                                         {"state", nullptr},
                                         {"is_leader", "yes"},
                                         {"since_ms", "long"},
                                         {"transitions", json::array()}});
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 3) << "is_leader must be a true bool";
  EXPECT_EQ(r.out,
            "node    ?\n"
            "state   unknown\n"
            "leader  none known\n");
}

TEST_F(status_test, control_characters_from_the_daemon_are_neutralised) {
  auto status = standby_status();
  status["leader"] = "evil\x1b[2Jnode";
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
  EXPECT_NE(r.out.find("evil?[2Jnode"), std::string::npos) << r.out;
}

TEST_F(status_test, json_prints_the_reply_without_its_type) {
  fake_daemon daemon(socket_path(), leader_status());
  auto r = run_cli({"status", "--json", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0);
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line";
  auto printed = json::parse(r.out);
  EXPECT_EQ(printed, leader_status());

  fake_daemon standby(socket_path("standby.sock"), standby_status());
  EXPECT_EQ(run_cli({"status", "--json", "--socket", standby.path()}).code, 3);
}

TEST_F(status_test, missing_socket_says_where_it_looked_and_how_to_point_elsewhere) {
  const auto path = socket_path("nobody.sock");
  auto r = run_cli({"status", "--socket", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("baton: cannot reach the daemon at " + path + ": ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("--socket"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--config"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line";
}

TEST_F(status_test, stale_socket_file_is_connection_refused) {
  const auto path = socket_path("stale.sock");
  { raw_server gone(path); }
  // raw_server unlinks its file: make a stale one by binding without listening.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  ::close(fd);
  auto r = run_cli({"status", "--socket", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("connection refused"), std::string::npos) << r.err;
}

TEST_F(status_test, silent_daemon_times_out_within_the_timeout) {
  raw_server silent(socket_path());
  const auto started = std::chrono::steady_clock::now();
  auto r = run_cli({"status", "--socket", socket_path(), "--timeout", "300ms"});
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("no reply within 300ms"), std::string::npos) << r.err;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 4s);
}

TEST_F(status_test, garbage_reply_is_a_failure) {
  raw_server liar(socket_path(), "hello there\n");
  auto r = run_cli({"status", "--socket", socket_path(), "--timeout", "5s"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "baton: cannot reach the daemon at " + socket_path() +
                       ": the daemon sent a line that is not JSON: \"hello there\"\n");
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
}

TEST_F(status_test, json_when_unreachable_prints_an_error_object) {
  const auto path = socket_path("nobody.sock");
  auto r = run_cli({"status", "--json", "--socket", path});
  EXPECT_EQ(r.code, 1);
  ASSERT_FALSE(r.out.empty()) << r.err;
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line";
  const auto printed = json::parse(r.out);
  ASSERT_TRUE(printed.is_object()) << r.out;
  EXPECT_EQ(printed.size(), 2u) << r.out;
  EXPECT_EQ(printed.value("socket", ""), path);
  const std::string error = printed.value("error", "");
  EXPECT_EQ(error.rfind("cannot reach the daemon at " + path + ": ", 0), 0u) << error;
  // stderr still says it for people.
  EXPECT_EQ(r.err, "baton: " + error + "\n");
}

TEST_F(status_test, json_when_the_daemon_fails_prints_an_error_object) {
  fake_daemon daemon(socket_path());
  daemon.set_status_fn([](int) -> json { throw std::runtime_error("redis is on fire"); });
  auto r = run_cli({"status", "--json", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(json::parse(r.out),
            (json{{"error", "the daemon answered: status unavailable: redis is on fire"},
                  {"socket", daemon.path()}}));

  raw_server liar(socket_path("liar.sock"), "hello there\n");
  r = run_cli({"status", "--json", "--socket", socket_path("liar.sock")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(json::parse(r.out).value("error", "").find("not JSON"), std::string::npos) << r.out;
}

TEST_F(status_test, reply_of_another_type_is_a_failure) {
  raw_server liar(socket_path(), "{\"type\":\"pong\"}\n");
  auto r = run_cli({"status", "--socket", socket_path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("unexpected reply to status"), std::string::npos) << r.err;
}

TEST_F(status_test, daemon_error_reply_is_a_failure) {
  fake_daemon daemon(socket_path());
  daemon.set_status_fn([](int) -> json { throw std::runtime_error("redis is on fire"); });
  auto r = run_cli({"status", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "baton: the daemon answered: status unavailable: redis is on fire\n");
}

TEST_F(status_test, overlong_socket_path_is_reported) {
  auto r = run_cli({"status", "--socket", "/" + std::string(200, 'x')});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("too long"), std::string::npos) << r.err;
}

using health_test = cli_test;

TEST_F(health_test, healthy_is_quiet_and_exits_0) {
  fake_daemon daemon(socket_path(), leader_status());
  auto r = run_cli({"health", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  auto verbose = run_cli({"health", "-v", "--socket", daemon.path()});
  EXPECT_EQ(verbose.code, 0);
  EXPECT_EQ(verbose.out.rfind("healthy: node web-1", 0), 0u) << verbose.out;
}

TEST_F(health_test, a_standby_is_healthy_too) {
  fake_daemon daemon(socket_path(), standby_status());
  EXPECT_EQ(run_cli({"health", "--socket", daemon.path()}).code, 0);
}

TEST_F(health_test, unhealthy_exits_1_with_the_reason) {
  auto status = leader_status();
  status["healthy"] = false;
  status["health"] = "redis unreachable for 12s";
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"health", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "baton: unhealthy: redis unreachable for 12s\n");
}

// The default question is liveness, which a store outage does not fail;
// --ready asks whether the store answered recently.
TEST_F(health_test, ready_asks_for_readiness_and_the_default_stays_liveness) {
  auto status = standby_status();
  status["healthy"] = true;
  status["health"] = "ok";
  status["ready"] = false;
  status["readiness"] = "the store has not answered for 12.0s: Connection refused";
  fake_daemon daemon(socket_path(), status);
  auto live = run_cli({"health", "--socket", daemon.path()});
  EXPECT_EQ(live.code, 0) << live.err;
  EXPECT_EQ(live.err, "");
  auto ready = run_cli({"health", "--ready", "--socket", daemon.path()});
  EXPECT_EQ(ready.code, 1);
  EXPECT_EQ(ready.out, "");
  EXPECT_EQ(ready.err,
            "baton: not ready: the store has not answered for 12.0s: Connection refused\n");
  auto table = run_cli({"status", "--socket", daemon.path()});
  EXPECT_NE(table.out.find("ready     the store has not answered for 12.0s"), std::string::npos)
      << table.out;
}

TEST_F(health_test, ready_verbose_says_so_on_a_ready_daemon) {
  auto status = leader_status();
  status["ready"] = true;
  status["readiness"] = "ok";
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"health", "--ready", "-v", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ready: node web-1", 0), 0u) << r.out;
}

// A daemon from before readiness counted the store in "healthy": the
// nearest answer it has to --ready.
TEST_F(health_test, ready_falls_back_to_healthy_on_an_older_daemon) {
  auto status = leader_status();
  status["healthy"] = false;
  status["health"] = "the store has not answered for 31s";
  fake_daemon daemon(socket_path(), status);
  auto r = run_cli({"health", "--ready", "--socket", daemon.path()});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "baton: not ready: the store has not answered for 31s\n");
}

TEST_F(health_test, unreachable_daemon_is_unhealthy) {
  auto r = run_cli({"health", "--socket", socket_path("nobody.sock")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot reach the daemon"), std::string::npos);
}

}  // namespace
}  // namespace baton::cli_test
