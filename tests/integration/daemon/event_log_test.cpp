// Tests of the integration-test support itself: the event-log parser and
// overlap checker (on hand-written logs), and test_worker, baton_process and
// socket_request on real processes. If these are wrong, the daemon tests
// that rely on them prove nothing, so each check here is made able to fail.

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "support/baton_process.hpp"
#include "support/event_log.hpp"

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

// ---- parser and checker, on hand-written logs ----------------------------

TEST(event_log_parse, builds_one_interval_per_start) {
  const auto log = event_log::parse(
      "100 a 11 start\n"
      "101 a 11 env token=7 node=n1\n"
      "110 a 11 tick\n"
      "120 a 11 tick\n"
      "125 a 11 term\n"
      "130 a 11 tick\n"
      "135 a 11 stop\n");
  EXPECT_TRUE(log.bad_lines().empty());
  ASSERT_EQ(log.intervals().size(), 1u);
  const interval& i = log.intervals()[0];
  EXPECT_EQ(i.name, "a");
  EXPECT_EQ(i.pid, 11);
  EXPECT_EQ(i.start_ns, 100);
  EXPECT_EQ(i.end_ns, 135);
  EXPECT_TRUE(i.ended);
  EXPECT_EQ(i.ticks, 3u);
  EXPECT_EQ(i.terms, 1u);
  EXPECT_EQ(i.first_term_ns, 125);
  EXPECT_EQ(i.token, "7");
  EXPECT_EQ(i.node_id, "n1");
  EXPECT_EQ(log.events().size(), 7u);
  EXPECT_EQ(log.events()[1].kind, event_kind::env);
  EXPECT_EQ(log.events()[1].details, "token=7 node=n1");
  EXPECT_EQ(log.start_count(), 1u);
  EXPECT_EQ(log.end_count(), 1u);
  EXPECT_EQ(log.last_ns(), 135);
}

TEST(event_log_parse, killed_worker_ends_at_its_last_tick) {
  const auto log = event_log::parse("100 a 11 start\n110 a 11 tick\n120 a 11 tick\n125 a 11 term\n");
  ASSERT_EQ(log.intervals().size(), 1u);
  EXPECT_EQ(log.intervals()[0].end_ns, 120);
  EXPECT_FALSE(log.intervals()[0].ended);
  EXPECT_EQ(log.open_intervals().size(), 1u);
}

TEST(event_log_parse, exit_line_after_last_tick_is_the_end) {
  const auto log = event_log::parse("100 a 11 start\n110 a 11 tick\n150 a 11 exit code=3\n");
  ASSERT_EQ(log.intervals().size(), 1u);
  EXPECT_EQ(log.intervals()[0].end_ns, 150);
  EXPECT_TRUE(log.intervals()[0].ended);
}

TEST(event_log_parse, start_without_more_lines_is_a_point) {
  const auto log = event_log::parse("100 a 11 start");  // no final newline
  ASSERT_EQ(log.intervals().size(), 1u);
  EXPECT_EQ(log.intervals()[0].start_ns, 100);
  EXPECT_EQ(log.intervals()[0].end_ns, 100);
}

TEST(event_log_parse, reports_bad_lines_and_skips_blank_ones) {
  const auto log = event_log::parse(
      "\n"
      "garbage\n"
      "x a 11 start\n"
      "100 a -3 start\n"
      "100 a 11\n"
      "105 b 12 tick\n"  // tick from a worker that never started
      "110 a 11 start\n"
      "  \n"
      "120 a 11 tick\n");
  EXPECT_EQ(log.bad_lines().size(), 5u);
  ASSERT_EQ(log.intervals().size(), 1u);
  EXPECT_EQ(log.intervals()[0].ticks, 1u);
}

TEST(event_log_parse, unknown_words_are_kept_but_are_not_work) {
  const auto log = event_log::parse("100 a 11 start\n110 a 11 tick\n200 a 11 orphan\n");
  EXPECT_TRUE(log.bad_lines().empty());
  ASSERT_EQ(log.events().size(), 3u);
  EXPECT_EQ(log.events()[2].kind, event_kind::other);
  EXPECT_EQ(log.intervals()[0].end_ns, 110);
}

TEST(event_log_parse, restarted_pid_opens_a_new_interval) {
  const auto log = event_log::parse(
      "100 a 11 start\n110 a 11 stop\n200 a 11 start\n210 a 11 tick\n");
  ASSERT_EQ(log.intervals().size(), 2u);
  EXPECT_TRUE(log.intervals()[0].ended);
  EXPECT_EQ(log.intervals()[1].end_ns, 210);
  EXPECT_FALSE(log.intervals()[1].ended);
  EXPECT_EQ(log.start_count("a"), 2u);
  EXPECT_EQ(log.start_count("b"), 0u);
}

TEST(event_log_feed, waits_for_the_rest_of_a_partial_line) {
  event_log log;
  log.feed("100 a 11 start\n110 a 11 ti");
  EXPECT_EQ(log.events().size(), 1u);
  EXPECT_EQ(log.intervals()[0].ticks, 0u);
  log.feed("ck\n120 a");
  EXPECT_EQ(log.events().size(), 2u);
  EXPECT_EQ(log.intervals()[0].ticks, 1u);
  EXPECT_TRUE(log.bad_lines().empty());
}

TEST(event_log_overlaps, none_in_a_clean_handover) {
  const auto log = event_log::parse(
      "100 a 11 start\n150 a 11 tick\n160 a 11 stop\n"
      "170 b 12 start\n180 b 12 tick\n");
  EXPECT_TRUE(log.overlaps().empty()) << to_string(log.overlaps());
  const auto handovers = log.handovers();
  ASSERT_EQ(handovers.size(), 1u);
  EXPECT_EQ(handovers[0].from.name, "a");
  EXPECT_EQ(handovers[0].to.name, "b");
  EXPECT_EQ(handovers[0].gap_ns, 10);
}

TEST(event_log_overlaps, finds_work_after_another_started) {
  // b starts at 150 while a still ticks at 160: 10 ns of double work.
  const auto log = event_log::parse(
      "100 a 11 start\n"
      "150 b 12 start\n"
      "160 a 11 tick\n"
      "170 b 12 tick\n");
  const auto overlaps = log.overlaps();
  ASSERT_EQ(overlaps.size(), 1u);
  EXPECT_EQ(overlaps[0].first.name, "a");
  EXPECT_EQ(overlaps[0].second.name, "b");
  EXPECT_EQ(overlaps[0].overlap_ns, 10);
  EXPECT_NE(to_string(overlaps).find("overlaps"), std::string::npos);
  EXPECT_LT(log.handovers()[0].gap_ns, 0);
}

TEST(event_log_overlaps, touching_intervals_count) {
  const auto log = event_log::parse("100 a 11 start\n150 a 11 tick\n150 b 12 start\n");
  ASSERT_EQ(log.overlaps().size(), 1u);
  EXPECT_EQ(log.overlaps()[0].overlap_ns, 0);
}

TEST(event_log_overlaps, only_between_different_pids) {
  std::vector<interval> intervals(2);
  intervals[0].pid = 5;
  intervals[0].start_ns = 0;
  intervals[0].end_ns = 100;
  intervals[1].pid = 5;
  intervals[1].start_ns = 50;
  intervals[1].end_ns = 150;
  EXPECT_TRUE(find_overlaps(intervals).empty());
  intervals[1].pid = 6;
  EXPECT_EQ(find_overlaps(intervals).size(), 1u);
}

TEST(event_log_overlaps, every_pair_is_reported_in_start_order) {
  const auto log = event_log::parse(
      "300 c 13 start\n"
      "100 a 11 start\n"
      "200 b 12 start\n"
      "400 a 11 tick\n400 b 12 tick\n400 c 13 tick\n");
  const auto overlaps = log.overlaps();
  ASSERT_EQ(overlaps.size(), 3u);
  for (const auto& o : overlaps) EXPECT_LE(o.first.start_ns, o.second.start_ns);
}

TEST(event_log_workers, current_worker_is_the_live_open_one) {
  const auto log = event_log::parse(
      "100 a 11 start\n110 a 11 stop\n"
      "200 b 12 start\n210 b 12 tick\n"     // killed: open but dead
      "300 c 13 start\n310 c 13 tick\n");  // running
  const auto alive = [](pid_t pid) { return pid == 13; };
  const auto current = log.current_worker(alive);
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->name, "c");
  EXPECT_EQ(log.live_workers(alive).size(), 1u);
  EXPECT_EQ(log.open_intervals().size(), 2u);
  EXPECT_FALSE(log.current_worker([](pid_t) { return false; }).has_value());
  // Two live workers: the later start is reported, and the test can see both.
  EXPECT_EQ(log.current_worker([](pid_t) { return true; })->name, "c");
  EXPECT_EQ(log.live_workers([](pid_t) { return true; }).size(), 2u);
}

TEST(event_log_workers, process_alive_knows_this_process_and_rejects_nonsense) {
  EXPECT_TRUE(process_alive(::getpid()));
  EXPECT_FALSE(process_alive(0));
  EXPECT_FALSE(process_alive(-1));
}

// ---- following a file ----------------------------------------------------

TEST(event_log_file, refresh_reads_only_complete_new_lines) {
  temp_dir dir;
  const auto path = dir / "events.log";
  event_log log(path);
  EXPECT_FALSE(log.refresh());  // no file yet: empty, not an error
  std::ofstream out(path, std::ios::binary);
  out << "100 a 11 start\n110 a 11 ti" << std::flush;
  EXPECT_TRUE(log.refresh());
  EXPECT_EQ(log.events().size(), 1u);
  EXPECT_FALSE(log.refresh());
  out << "ck\n" << std::flush;
  EXPECT_TRUE(log.refresh());
  EXPECT_EQ(log.intervals()[0].ticks, 1u);
  EXPECT_TRUE(log.bad_lines().empty());
  EXPECT_EQ(event_log::read(path).events().size(), 2u);
}

TEST(event_log_file, wait_for_sees_lines_appended_later_and_can_time_out) {
  temp_dir dir;
  const auto path = dir / "events.log";
  std::thread writer([&] {
    std::this_thread::sleep_for(50ms);  // the delay is the point of the test
    std::ofstream(path, std::ios::binary) << "100 a 11 start\n";
  });
  event_log log(path);
  const bool seen = wait_for(log, [](const event_log& l) { return l.start_count() == 1; }, 10s);
  writer.join();
  EXPECT_TRUE(seen);

  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(wait_for(path, [](const event_log& l) { return l.start_count() == 2; }, 100ms));
  EXPECT_GE(std::chrono::steady_clock::now() - before, 100ms);
}

// ---- test_worker and baton_process on real processes ---------------------

class worker_test : public ::testing::Test {
 protected:
  temp_dir dir_;
  std::filesystem::path events_ = dir_ / "events.log";
  event_log log_{events_};

  baton_process start_worker(const std::string& name, std::vector<std::string> extra = {},
                             env_list env = {}) {
    std::vector<std::string> args = {"--log", events_.string(), "--name", name};
    args.insert(args.end(), extra.begin(), extra.end());
    return baton_process::start(test_worker_binary(), std::move(args), std::move(env),
                                dir_ / (name + ".out"));
  }

  bool wait_events(const std::function<bool(const event_log&)>& predicate) {
    return wait_for(log_, predicate, 20s);
  }

  void TearDown() override { kill_leftover_workers(log_); }
};

TEST_F(worker_test, sigterm_logs_term_keeps_working_for_the_delay_then_stops) {
  auto worker = start_worker("w1", {"--tick-ms", "5", "--term-delay-ms", "100"},
                             {{"BATON_TOKEN", "42"}, {"BATON_NODE_ID", "node-a"}});
  ASSERT_TRUE(wait_events([](const event_log& l) {
    return !l.intervals().empty() && l.intervals()[0].ticks >= 2;
  }));
  ASSERT_TRUE(log_.current_worker().has_value());
  EXPECT_EQ(log_.current_worker()->pid, worker.pid());
  EXPECT_TRUE(worker.signal(SIGTERM));
  EXPECT_EQ(worker.wait_exit(20s), 0);
  log_.refresh();
  ASSERT_EQ(log_.intervals().size(), 1u);
  const interval& i = log_.intervals()[0];
  EXPECT_TRUE(i.ended);
  EXPECT_EQ(i.pid, worker.pid());
  EXPECT_EQ(i.token, "42");
  EXPECT_EQ(i.node_id, "node-a");
  ASSERT_TRUE(i.first_term_ns.has_value());
  EXPECT_GE(i.end_ns - *i.first_term_ns, 100'000'000);  // worked through the delay
  EXPECT_GT(i.end_ns, *i.first_term_ns);
  EXPECT_TRUE(log_.bad_lines().empty());
  EXPECT_FALSE(log_.current_worker().has_value());
}

TEST_F(worker_test, ignore_term_keeps_working_until_sigkill) {
  auto worker = start_worker("w1", {"--tick-ms", "5", "--ignore-term"});
  ASSERT_TRUE(wait_events([](const event_log& l) { return l.start_count() == 1; }));
  EXPECT_TRUE(worker.signal(SIGTERM));
  ASSERT_TRUE(wait_events([](const event_log& l) { return l.intervals()[0].terms == 1; }));
  const std::size_t ticks_at_term = log_.intervals()[0].ticks;
  ASSERT_TRUE(wait_events([&](const event_log& l) {
    return l.intervals()[0].ticks >= ticks_at_term + 3;
  }));
  EXPECT_FALSE(worker.wait_exit(0ms).has_value());
  EXPECT_TRUE(worker.signal_group(SIGKILL));
  EXPECT_EQ(worker.wait_exit(20s), 128 + SIGKILL);
  EXPECT_EQ(worker.wait_exit(0ms), 128 + SIGKILL);  // stable once known
  log_.refresh();
  EXPECT_FALSE(log_.intervals()[0].ended);
  EXPECT_FALSE(log_.current_worker().has_value());  // a zombie is not a worker
}

TEST_F(worker_test, exit_after_logs_exit_and_uses_the_code) {
  auto worker = start_worker("w1", {"--tick-ms", "5", "--exit-after-ms", "50", "--exit-code", "3"});
  EXPECT_EQ(worker.wait_exit(20s), 3);
  log_.refresh();
  ASSERT_EQ(log_.intervals().size(), 1u);
  EXPECT_TRUE(log_.intervals()[0].ended);
  EXPECT_EQ(log_.events().back().word, "exit");
}

TEST_F(worker_test, bad_arguments_exit_2_with_a_message) {
  auto worker = start_worker("w1", {"--tick-ms", "nope"});
  EXPECT_EQ(worker.wait_exit(20s), 2);
  EXPECT_TRUE(worker.wait_for_log("--tick-ms", 5s));
  // Gives up at once on a dead process instead of waiting out the timeout.
  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(worker.wait_for_log("never printed", 20s));
  EXPECT_LT(std::chrono::steady_clock::now() - before, 10s);
  log_.refresh();
  EXPECT_EQ(log_.start_count(), 0u);
}

TEST_F(worker_test, concurrent_writers_keep_lines_whole_and_overlap_is_detected) {
  auto a = start_worker("a", {"--tick-ms", "1"});
  auto b = start_worker("b", {"--tick-ms", "1"});
  ASSERT_TRUE(wait_events([](const event_log& l) {
    return l.intervals().size() == 2 && l.intervals()[0].ticks >= 50 && l.intervals()[1].ticks >= 50;
  }));
  a.signal(SIGTERM);
  b.signal(SIGTERM);
  EXPECT_EQ(a.wait_exit(20s), 0);
  EXPECT_EQ(b.wait_exit(20s), 0);
  log_.refresh();
  EXPECT_TRUE(log_.bad_lines().empty()) << log_.bad_lines().front();
  EXPECT_EQ(log_.overlaps().size(), 1u);  // two apps at work at once: the checker must say so
}

TEST_F(worker_test, destructor_kills_the_whole_group) {
  // A shell stands in for the daemon: the worker it starts shares its group.
  // While the test runs, this process is a subreaper, so the worker orphaned by
  // the shell's death becomes our child and can be reaped (and its cause of
  // death checked) instead of lingering as a zombie.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string command = "'" + test_worker_binary().string() + "' --log '" +
                              events_.string() + "' --name child --ignore-term & wait";
  pid_t shell_pid = 0;
  pid_t worker_pid = 0;
  {
    auto shell = baton_process::start("/bin/sh", {"-c", command}, {}, dir_ / "sh.out");
    shell_pid = shell.pid();
    EXPECT_EQ(shell.pgid(), ::getpgid(shell.pid()));
    EXPECT_TRUE(wait_events([](const event_log& l) { return l.live_workers().size() == 1; }));
    if (!log_.intervals().empty()) worker_pid = log_.intervals()[0].pid;
  }
  EXPECT_FALSE(process_alive(shell_pid));
  if (worker_pid > 0) {
    int status = 0;
    // Already dead (SIGKILL cannot be ignored): this does not block.
    EXPECT_EQ(::waitpid(worker_pid, &status, 0), worker_pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_GT(worker_pid, 0);
  log_.refresh();
  EXPECT_TRUE(log_.live_workers().empty());
}

TEST_F(worker_test, start_throws_for_a_missing_program) {
  EXPECT_THROW(baton_process::start(dir_ / "no-such-program", {}, {}, dir_ / "x.out"),
               std::system_error);
}

// ---- socket_request --------------------------------------------------------

// A one-connection Unix socket server on a thread: reads one line, answers
// with `reply` (or nothing), then closes.
class line_server {
 public:
  line_server(std::filesystem::path path, std::string reply, bool answer)
      : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof(address.sun_path) - 1);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(fd_, 4) != 0) {
      ADD_FAILURE() << "cannot listen on " << path_ << ": " << std::strerror(errno);
      return;
    }
    thread_ = std::thread([this, reply = std::move(reply), answer] {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 20'000) <= 0) return;
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string line;
      char c = 0;
      while (::read(client, &c, 1) == 1 && c != '\n') line += c;
      received_ = line;
      if (answer) {
        (void)!::write(client, reply.data(), reply.size());
      } else {
        pollfd wait{client, POLLIN, 0};
        ::poll(&wait, 1, 5'000);  // hold the connection open, say nothing
      }
      ::close(client);
    });
  }
  ~line_server() {
    if (thread_.joinable()) thread_.join();
    ::close(fd_);
  }
  line_server(const line_server&) = delete;
  line_server& operator=(const line_server&) = delete;
  std::string received() {
    if (thread_.joinable()) thread_.join();
    return received_;
  }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::thread thread_;
  std::string received_;
};

TEST(socket_request, returns_the_first_reply_line) {
  temp_dir dir;
  line_server server(dir / "s.sock", "{\"state\":\"idle\"}\n{\"event\":\"x\"}\n", true);
  const auto reply = socket_request(dir / "s.sock", R"({"cmd":"status"})", 10s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, R"({"state":"idle"})");
  EXPECT_EQ(server.received(), R"({"cmd":"status"})");
}

TEST(socket_request, nullopt_without_a_server) {
  temp_dir dir;
  EXPECT_FALSE(socket_request(dir / "absent.sock", "{}", 1s).has_value());
  EXPECT_FALSE(socket_request(std::string(200, 'x'), "{}", 1s).has_value());
}

TEST(socket_request, nullopt_after_the_timeout_when_the_server_is_silent) {
  temp_dir dir;
  line_server server(dir / "s.sock", "", false);
  const auto before = std::chrono::steady_clock::now();
  EXPECT_FALSE(socket_request(dir / "s.sock", "{}", 200ms).has_value());
  const auto took = std::chrono::steady_clock::now() - before;
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 4s);
}

TEST(socket_request, nullopt_when_closed_before_a_whole_line) {
  temp_dir dir;
  line_server server(dir / "s.sock", "{\"partial\":", true);
  EXPECT_FALSE(socket_request(dir / "s.sock", "{}", 10s).has_value());
}

}  // namespace
}  // namespace baton::testing
