// Socket-only apps (no supervised command, no hooks) that follow the lease
// with the example client examples/follow_lease.py:
// - with --require-ack, a leader that is SIGTERMed keeps the lease until its
//   client has wound down and acknowledged the stop; only then may the standby
//   start (the client's stop line comes before the standby's start line);
// - a leader daemon frozen with SIGSTOP sends no renewals, and its client
//   stops by itself at the lease deadline it was given (its last tick is no
//   later than that deadline); after SIGCONT the daemon finds the lease lost;
// - the `stopped` command's errors, and the uid allow list refusing our uid.
#include <signal.h>
#include <unistd.h>

#include <charconv>

#include "daemon_fixture.hpp"
#include "support/built_paths.hpp"

namespace baton::testing {
namespace {

std::filesystem::path example_client() {
  return std::filesystem::path(source_root_path()) / "examples" / "follow_lease.py";
}

class safety_ack_test : public daemon_fixture {
 protected:
  std::vector<std::unique_ptr<baton_process>> clients;

  ~safety_ack_test() override { clients.clear(); }

  /// Candidate `index` with no command: its app is the socket client.
  baton_process& start_socket_node(int index, std::vector<std::string> extra = {"--require-ack"}) {
    auto args = base_args(index);
    args.insert(args.end(), extra.begin(), extra.end());
    nodes.push_back(std::make_unique<baton_process>(
        args, env_list{}, dir / ("n" + std::to_string(index) + ".log")));
    return *nodes.back();
  }

  /// The example client of candidate `index`, logging as node-<index>.
  baton_process& start_client(int index, std::vector<std::string> extra = {}) {
    std::vector<std::string> args{example_client().string(),
                                  "--socket", socket_of(index).string(),
                                  "--log", events.string(),
                                  "--name", "node-" + std::to_string(index),
                                  "--tick-ms", "10"};
    args.insert(args.end(), extra.begin(), extra.end());
    clients.push_back(std::make_unique<baton_process>(baton_process::start(
        "/usr/bin/python3", args, env_list{}, dir / ("c" + std::to_string(index) + ".log"))));
    return *clients.back();
  }

  std::string all_logs() const {
    auto text = logs();
    for (const auto& c : clients) text += "---- " + c->log_path().string() + "\n" + c->log_text();
    text += "---- events\n";
    // A named log: the range of a temporary's member would dangle.
    const auto log = event_log::read(events);
    for (const auto& e : log.events()) {
      text += std::to_string(e.ns) + " " + e.name + " " + e.word + " " + e.details + "\n";
    }
    return text;
  }
};

/// The number after `key=` in `details`, or -1.
std::int64_t number_field(const std::string& details, const std::string& key) {
  auto at = details.find(key + "=");
  if (at == std::string::npos) return -1;
  std::int64_t value = -1;
  const char* begin = details.data() + at + key.size() + 1;
  std::from_chars(begin, details.data() + details.size(), value);
  return value;
}

TEST_F(safety_ack_test, sigterm_waits_for_the_clients_acknowledgement_before_releasing) {
  start_socket_node(1);
  start_socket_node(2);
  // Each client takes 600 ms to wind down after a stop event, working all
  // along: releasing before its acknowledgement would overlap the next app.
  start_client(1, {"--stop-delay-ms", "600"});
  start_client(2, {"--stop-delay-ms", "600"});
  auto leader = wait_for_single_worker(20s);
  ASSERT_FALSE(leader.name.empty()) << all_logs();
  auto& leader_process = *nodes[static_cast<std::size_t>(index_of(leader) - 1)];

  line_stream stream(socket_of(index_of(leader)));
  ASSERT_TRUE(stream.valid());
  ASSERT_EQ(stream.next_line(5s), std::optional<std::string>(R"({"type":"subscribed"})"));

  const auto sigterm_at = now_ns();
  leader_process.signal(SIGTERM);
  std::optional<std::string> stop_event;
  for (int i = 0; i < 50 && !stop_event; ++i) {
    auto line = stream.next_line(5s);
    if (!line) break;
    if (line->find("\"event\":\"stop\"") != std::string::npos) stop_event = line;
  }
  ASSERT_TRUE(stop_event) << all_logs();
  EXPECT_NE(stop_event->find("\"ack_required\":true"), std::string::npos) << *stop_event;
  EXPECT_NE(stop_event->find("\"token\":" + leader.token), std::string::npos)
      << *stop_event << " vs token " << leader.token;

  auto code = leader_process.wait_exit(15s);
  ASSERT_TRUE(code) << all_logs();
  EXPECT_EQ(*code, 0);
  event_log log(events);
  ASSERT_TRUE(wait_for(log, [](const event_log& l) { return l.start_count() >= 2; }, 15s))
      << all_logs();
  const auto& old_app = log.intervals()[0];
  const auto& next_app = log.intervals()[1];
  EXPECT_EQ(old_app.name, leader.name);
  ASSERT_TRUE(old_app.ended) << "the old client wrote its stop line\n" << all_logs();
  // It wound down for its 600 ms after the SIGTERM, and the standby started
  // only after its stop line.
  EXPECT_GE(old_app.end_ns, sigterm_at + 500'000'000LL) << all_logs();
  EXPECT_GT(next_app.start_ns, old_app.end_ns) << all_logs();
  expect_no_overlap();

  // The daemon says so, in this order.
  const auto text = leader_process.log_text();
  const auto waiting = text.find("waiting for a socket client to acknowledge");
  const auto acked = text.find("acknowledged by pid");
  const auto releasing = text.find("state pausing -> releasing");
  ASSERT_NE(waiting, std::string::npos) << text;
  ASSERT_NE(acked, std::string::npos) << text;
  ASSERT_NE(releasing, std::string::npos) << text;
  EXPECT_LT(waiting, acked);
  EXPECT_LT(acked, releasing);
  EXPECT_EQ(text.find("before the kill deadline"), std::string::npos)
      << "released by the acknowledgement, not the deadline\n" << text;
}

TEST_F(safety_ack_test, frozen_daemon_cannot_make_its_client_overrun_the_deadline) {
  start_socket_node(1);
  start_socket_node(2);
  start_client(1);
  start_client(2);
  auto leader = wait_for_single_worker(20s);
  ASSERT_FALSE(leader.name.empty()) << all_logs();
  auto& leader_process = *nodes[static_cast<std::size_t>(index_of(leader) - 1)];

  const auto frozen_at = now_ns();
  ASSERT_TRUE(leader_process.signal(SIGSTOP));
  event_log log(events);
  ASSERT_TRUE(wait_for(
      log, [](const event_log& l) { return l.end_count() >= 1 && l.start_count() >= 2; }, 15s))
      << all_logs();
  const auto& old_app = log.intervals()[0];
  ASSERT_EQ(old_app.name, leader.name);
  ASSERT_TRUE(old_app.ended) << all_logs();

  // Its stop line says it stopped at the deadline, by itself.
  std::optional<event> stop_line;
  std::int64_t last_tick = 0;
  for (const auto& e : log.events()) {
    if (e.pid != old_app.pid) continue;
    if (e.kind == event_kind::tick) last_tick = e.ns;
    if (e.kind == event_kind::stop && !stop_line) stop_line = e;
  }
  ASSERT_TRUE(stop_line) << all_logs();
  EXPECT_EQ(stop_line->details.rfind("deadline", 0), 0u) << stop_line->details;
  const auto valid_until = number_field(stop_line->details, "valid_until");
  ASSERT_GT(valid_until, frozen_at) << stop_line->details;
  EXPECT_LE(last_tick, valid_until) << "a tick after the lease deadline\n" << all_logs();
  EXPECT_GE(stop_line->ns, valid_until) << "it stopped at the deadline, not earlier";
  // The deadline came from renewals before the freeze: at most one ttl (2 s)
  // after it.
  EXPECT_LE(valid_until, frozen_at + 2'000'000'000LL);

  const auto& next_app = log.intervals()[1];
  EXPECT_NE(next_app.name, leader.name);
  EXPECT_GT(next_app.start_ns, stop_line->ns);
  expect_no_overlap();

  // Thawed, the daemon finds its lease gone and stands by; its client stays
  // stopped.
  ASSERT_TRUE(leader_process.signal(SIGCONT));
  ASSERT_TRUE(leader_process.wait_for_log("-> idle", 10s)) << all_logs();
  log.refresh();
  EXPECT_EQ(log.start_count(leader.name), 1u) << all_logs();
  EXPECT_FALSE(leader_process.exited());
  expect_no_overlap();
}

TEST_F(safety_ack_test, stopped_command_errors_and_the_uid_allow_list) {
  start_socket_node(1);
  // Node 2 allows only a uid that is not ours.
  const auto other_uid = std::to_string(::geteuid() == 4242 ? 4243 : 4242);
  start_socket_node(2, {"--require-ack", "--allowed-uid", other_uid});
  // A socket file exists from bind() on; it answers once the daemon listens.
  const auto answers = [&](int node) {
    return std::filesystem::exists(socket_of(node)) &&
           socket_request(socket_of(node), R"({"cmd":"status"})", 1s).has_value();
  };
  ASSERT_TRUE(wait_until([&] { return answers(1) && answers(2); }, 10s)) << all_logs();

  auto reply = socket_request(socket_of(1), R"({"cmd":"stopped","token":1,"id":7})", 5s);
  ASSERT_TRUE(reply) << all_logs();
  EXPECT_EQ(*reply, R"({"error":"nothing to acknowledge","id":7,"type":"error"})");
  reply = socket_request(socket_of(1), R"({"cmd":"stopped","token":"x"})", 5s);
  ASSERT_TRUE(reply);
  EXPECT_NE(reply->find("\"token\\\" must be"), std::string::npos) << *reply;

  reply = socket_request(socket_of(2), R"({"cmd":"stopped","token":1})", 5s);
  ASSERT_TRUE(reply);
  EXPECT_EQ(*reply, R"({"error":"permission denied: uid )" + std::to_string(::geteuid()) +
                        R"( may not send stopped","type":"error"})");
  // Reading is not restricted.
  reply = socket_request(socket_of(2), R"({"cmd":"status"})", 5s);
  ASSERT_TRUE(reply);
  EXPECT_NE(reply->find("\"type\":\"status\""), std::string::npos) << *reply;
}

}  // namespace
}  // namespace baton::testing
