// Faults on the leader's app socket: a subscriber that never reads while it
// floods requests, 1,000 connect/disconnect cycles, garbage and oversized
// lines, and clients that disconnect in the middle of a line. Throughout, the
// daemon must keep leading (no new leader, its app keeps working), answer
// status on other connections, and not leak descriptors.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "scenario.hpp"

namespace baton::testing::socket_faults_test {
namespace {

constexpr auto ttl = 2000ms;

// A blocking Unix-socket client with deadlines, closed on destruction.
class raw_client {
 public:
  explicit raw_client(const std::filesystem::path& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    if (fd_ >= 0 &&
        ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~raw_client() { close(); }
  raw_client(const raw_client&) = delete;
  raw_client& operator=(const raw_client&) = delete;

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  /// Send all of `bytes` within `timeout`; false on error or timeout.
  bool send_all(std::string_view bytes, std::chrono::milliseconds timeout = 2s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n =
          ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    }
    return true;
  }

  /// The next line (without '\n'); nullopt on EOF, error or timeout.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 2s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (int reads = 0; reads < 100'000; ++reads) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[8192];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    return std::nullopt;
  }

  /// Wait for the daemon to close the connection (EOF), discarding data.
  bool wait_eof(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (int reads = 0; reads < 100'000; ++reads) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char chunk[8192];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

std::size_t open_descriptors(pid_t pid) {
  std::error_code ec;
  std::size_t count = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++count;
  }
  return count;
}

bool answers_status(fault_cluster& c, int index) {
  auto s = c.status(index, 1s);
  return s && (*s)["type"] == "status";
}

// A cluster of two with a settled leader, and the checks every socket fault
// ends with.
class socket_round {
 public:
  explicit socket_round(std::string name) : c(std::move(name), ttl) {
    c.start_node(1);
    c.start_node(2);
    std::string why;
    auto w = c.wait_for_single_worker(15s, &why);
    if (!w) throw std::runtime_error(why);
    leader = *w;
    l = fault_cluster::index_of(leader);
    daemon_pid = c.node(l).pid();
    descriptors_before = open_descriptors(daemon_pid);
    inject = mono_now_ns();
  }

  /// Still the leader, its app still working, status answered, no leak.
  void expect_unharmed() {
    event_log log(c.events());
    const auto before = interval_of(c.log(), leader.pid);
    ASSERT_TRUE(before);
    EXPECT_TRUE(wait_for(
        log,
        [&](const event_log& x) {
          auto now = interval_of(x, leader.pid);
          return now && now->ticks > before->ticks + 5;
        },
        5s))
        << "the leader's app stopped working\n"
        << c.logs();
    EXPECT_EQ(log.start_count(), 1u) << "leadership changed\n" << c.logs();
    EXPECT_FALSE(c.node(l).exited()) << c.log_of(l);
    auto s = c.status(l);
    ASSERT_TRUE(s) << "no status reply\n" << c.log_of(l);
    EXPECT_TRUE((*s)["is_leader"].get<bool>()) << s->dump();
    // Closed clients are released: allow the listener's own churn.
    EXPECT_TRUE(
        wait_until([&] { return open_descriptors(daemon_pid) <= descriptors_before + 2; }, 5s))
        << "descriptors: " << descriptors_before << " before, " << open_descriptors(daemon_pid)
        << " after";
  }

  void record(const std::string& kind, int injected) {
    const auto overlaps = check_no_overlap(c);
    fault_record r;
    r.kind = kind;
    r.injected = injected;
    r.overlaps = overlaps;
    r.kept_working = true;
    record_fault(r);
  }

  fault_cluster c;
  interval leader;
  int l = 0;
  pid_t daemon_pid = 0;
  std::size_t descriptors_before = 0;
  std::int64_t inject = 0;
};

TEST(socket_faults, subscriber_that_never_reads_while_flooding_requests_is_dropped) {
  for (int round = 1; round <= rounds; ++round) {
    socket_round r(round_name(round));
    // Subscribed, never reads, never writes again: events keep flowing past it.
    raw_client lurker(r.c.socket_of(r.l));
    ASSERT_TRUE(lurker.valid());
    ASSERT_TRUE(lurker.send_all("{\"cmd\":\"subscribe\"}\n"));
    raw_client hog(r.c.socket_of(r.l));
    ASSERT_TRUE(hog.valid());
    ASSERT_TRUE(hog.send_all("{\"cmd\":\"subscribe\"}\n"));
    ::fcntl(hog.fd(), F_SETFL, ::fcntl(hog.fd(), F_GETFL) | O_NONBLOCK);

    // Requests (each answered with a ~600-byte status) without ever reading,
    // until the daemon gives up on this client; a status probe on another
    // connection every 10 ms must be answered meanwhile.
    const std::string request = "{\"cmd\":\"status\"}\n";
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    auto next_probe = std::chrono::steady_clock::now();
    int sent = 0;
    int probes = 0;
    int unanswered = 0;
    bool dropped = false;
    while (std::chrono::steady_clock::now() < deadline && sent < 200'000) {
      const ssize_t n = ::send(hog.fd(), request.data(), request.size(), MSG_NOSIGNAL);
      if (n == static_cast<ssize_t>(request.size())) {
        ++sent;
      } else if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
        dropped = true;
        break;
      } else {
        pollfd p{hog.fd(), POLLOUT, 0};
        ::poll(&p, 1, 20);  // the daemon reads on; its replies pile up
      }
      if (std::chrono::steady_clock::now() >= next_probe) {
        ++probes;
        if (!answers_status(r.c, r.l)) ++unanswered;
        next_probe = std::chrono::steady_clock::now() + 10ms;
      }
    }
    EXPECT_TRUE(dropped) << "the daemon kept a client that never reads (" << sent
                         << " requests sent)\n"
                         << r.c.log_of(r.l);
    EXPECT_EQ(unanswered, 0) << unanswered << " of " << probes << " status probes unanswered";
    EXPECT_NE(r.c.log_of(r.l).find("not reading"), std::string::npos) << r.c.log_of(r.l);
    r.expect_unharmed();
    // A reading subscriber still gets the leader's renewals on time, with the
    // lurker connected.
    raw_client reader(r.c.socket_of(r.l));
    ASSERT_TRUE(reader.send_all("{\"cmd\":\"subscribe\"}\n"));
    int renewals = 0;
    for (int lines = 0; lines < 50 && renewals < 3; ++lines) {
      const auto line = reader.read_line(2s);
      ASSERT_TRUE(line) << "events stopped flowing\n" << r.c.log_of(r.l);
      if (line->find("\"event\":\"renewed\"") != std::string::npos) ++renewals;
    }
    EXPECT_EQ(renewals, 3);
    std::printf("dropped after %d requests; %d probes answered\n", sent, probes - unanswered);
    r.record("socket: subscriber never reads, floods requests", 1);
  }
}

TEST(socket_faults, a_thousand_connect_disconnect_cycles) {
  for (int round = 1; round <= rounds; ++round) {
    socket_round r(round_name(round));
    constexpr int cycles = 1000;
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    int done = 0;
    int unanswered = 0;
    for (int i = 0; i < cycles && std::chrono::steady_clock::now() < deadline; ++i, ++done) {
      raw_client client(r.c.socket_of(r.l));
      ASSERT_TRUE(client.valid()) << "connect " << i << " failed\n" << r.c.log_of(r.l);
      switch (i % 3) {
        case 0:  // a full exchange
          ASSERT_TRUE(client.send_all("{\"cmd\":\"ping\"}\n"));
          if (!client.read_line(2s)) ++unanswered;
          break;
        case 1:  // subscribe, then leave at once
          client.send_all("{\"cmd\":\"subscribe\"}\n");
          break;
        default:  // connect and leave
          break;
      }
      if (i % 100 == 99 && !answers_status(r.c, r.l)) ++unanswered;
    }
    EXPECT_EQ(done, cycles);
    EXPECT_EQ(unanswered, 0);
    r.expect_unharmed();
    r.record("socket: connect/disconnect cycles", done);
  }
}

TEST(socket_faults, garbage_and_oversized_lines_get_errors_and_nothing_else) {
  for (int round = 1; round <= rounds; ++round) {
    socket_round r(round_name(round));
    raw_client client(r.c.socket_of(r.l));
    ASSERT_TRUE(client.valid());
    const std::string deep = std::string(32'000, '[') + std::string(32'000, ']');
    const std::vector<std::string> garbage = {
        "garbage",
        "{",
        "}",
        "[1,2]",
        "{}",
        "null",
        "\"cmd\"",
        "{\"cmd\":42}",
        "{\"cmd\":\"nope\"}",
        std::string("\x00\x01\x02\xff\xfe{\"cmd\":\"status\"}", 22),
        "{\"cmd\":\"st\xc3\x28tus\"}",
        "{\"cmd\":\"status\"" + std::string(1000, ' ') + ",}",
        "{\"a\":" + std::string(10'000, '9') + "}",
        deep,
    };
    int injected = 0;
    for (const auto& line : garbage) {
      ASSERT_TRUE(client.send_all(line + "\n")) << r.c.log_of(r.l);
      ++injected;
      const auto reply = client.read_line(3s);
      ASSERT_TRUE(reply) << "no reply to garbage line " << injected << "\n" << r.c.log_of(r.l);
      EXPECT_NE(reply->find("\"type\":\"error\""), std::string::npos)
          << "garbage line " << injected << " was answered as valid: " << *reply;
    }
    // The same connection still works.
    ASSERT_TRUE(client.send_all("{\"cmd\":\"status\",\"id\":7}\n"));
    const auto status = client.read_line(3s);
    ASSERT_TRUE(status) << r.c.log_of(r.l);
    EXPECT_NE(status->find("\"type\":\"status\""), std::string::npos) << *status;
    EXPECT_NE(status->find("\"id\":7"), std::string::npos) << *status;
    // Only scalar ids are echoed; a nested one is left out, the command runs.
    ASSERT_TRUE(client.send_all("{\"cmd\":\"ping\",\"id\":{\"no\":[\"objects\"]}}\n"));
    ++injected;
    const auto pong = client.read_line(3s);
    ASSERT_TRUE(pong) << r.c.log_of(r.l);
    EXPECT_EQ(*pong, "{\"type\":\"pong\"}");

    // Oversized: an error, then the daemon closes the connection.
    for (const std::size_t size : {70'000u, 1'000'000u}) {
      raw_client big(r.c.socket_of(r.l));
      ASSERT_TRUE(big.valid());
      // The daemon may close before taking all of it: a failed send is fine.
      big.send_all(std::string(size, 'x') + "\n", 5s);
      ++injected;
      const auto reply = big.read_line(3s);
      ASSERT_TRUE(reply) << "no error for a " << size << "-byte line\n" << r.c.log_of(r.l);
      EXPECT_NE(reply->find("too long"), std::string::npos) << *reply;
      EXPECT_TRUE(big.wait_eof(5s)) << "a client over the line limit was not disconnected";
    }
    r.expect_unharmed();
    r.record("socket: garbage and oversized lines", injected);
  }
}

TEST(socket_faults, clients_that_disconnect_mid_line) {
  for (int round = 1; round <= rounds; ++round) {
    socket_round r(round_name(round));
    const std::string request = "{\"cmd\":\"status\"}";
    int injected = 0;
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    for (int i = 0; i < 300 && std::chrono::steady_clock::now() < deadline; ++i) {
      raw_client client(r.c.socket_of(r.l));
      ASSERT_TRUE(client.valid());
      const std::string part =
          request.substr(0, 1 + static_cast<std::size_t>(i) % (request.size() - 1));
      if (i % 3 == 0) client.send_all("{\"cmd\":\"subscribe\"}\n");
      client.send_all(part);
      if (i % 10 == 0) {
        // Half-close mid-line: the daemon must end the session, not wait.
        ::shutdown(client.fd(), SHUT_WR);
        EXPECT_TRUE(client.wait_eof(3s)) << "a half-closed client was kept open";
      }
      ++injected;
    }
    EXPECT_TRUE(answers_status(r.c, r.l));
    r.expect_unharmed();
    r.record("socket: clients disconnect mid-line", injected);
  }
}

}  // namespace
}  // namespace baton::testing::socket_faults_test
