// app_socket over real Unix sockets in a temporary directory. The server runs
// on the test's io_context; the clients are plain non-blocking POSIX sockets,
// so a test can also play a client that never reads. Every wait drives the
// io_context in bounded run_one_for steps until the awaited condition holds.
#include "baton/app_socket.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using baton::app_socket;

// Connects once to `path`; -1 with errno on failure.
int connect_to(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// A client end that never blocks: pump() and flush() move what the kernel
// allows right now.
class test_client {
 public:
  explicit test_client(const std::string& path) : fd_(connect_to(path)) {}
  ~test_client() { close(); }
  test_client(const test_client&) = delete;
  test_client& operator=(const test_client&) = delete;

  bool connected() const { return fd_ >= 0; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  void queue(const std::string& bytes) { out_ += bytes; }
  /// True when everything queued has been sent (or the peer is gone).
  bool flush() {
    while (!out_.empty() && fd_ >= 0) {
      const ssize_t n = ::send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EAGAIN || errno == EINTR) return false;
        out_.clear();
        send_failed_ = true;
        break;
      }
      out_.erase(0, static_cast<std::size_t>(n));
    }
    return out_.empty();
  }
  /// Read what is available; true once the server has closed the connection.
  bool pump() {
    char buffer[65536];
    while (fd_ >= 0 && !eof_) {
      const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (n > 0) {
        in_.append(buffer, static_cast<std::size_t>(n));
        received_ += static_cast<std::size_t>(n);
      } else if (n == 0) {
        eof_ = true;
      } else if (errno == EAGAIN || errno == EINTR) {
        break;
      } else {
        eof_ = true;  // reset by the server
      }
    }
    return eof_;
  }
  std::optional<std::string> take_line() {
    const auto newline = in_.find('\n');
    if (newline == std::string::npos) return std::nullopt;
    std::string line = in_.substr(0, newline);
    in_.erase(0, newline + 1);
    return line;
  }
  bool eof() const { return eof_; }
  const std::string& unread() const { return in_; }
  std::size_t received() const { return received_; }

 private:
  int fd_;
  std::string out_;
  std::string in_;
  std::size_t received_ = 0;
  bool eof_ = false;
  bool send_failed_ = false;
};

std::size_t open_fd_count() {
  std::size_t count = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

class app_socket_test : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/baton-socket-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr) << std::strerror(errno);
    dir_ = pattern;
    path_ = dir_ + "/app.sock";
  }

  void TearDown() override {
    if (dir_.empty()) return;
    if (DIR* dir = ::opendir(dir_.c_str())) {
      std::vector<std::string> names;
      while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(dir);
      for (const auto& name : names) ::unlink((dir_ + "/" + name).c_str());
    }
    ::rmdir(dir_.c_str());
  }

  std::unique_ptr<app_socket> make_socket(app_socket::status_provider status = {},
                                          unsigned mode = 0660) {
    return std::make_unique<app_socket>(io_, baton::socket_config{path_, mode},
                                        std::move(status));
  }

  std::unique_ptr<app_socket> open_socket(app_socket::status_provider status = {}) {
    auto socket = make_socket(std::move(status));
    std::error_code ec;
    socket->open(ec);
    EXPECT_FALSE(ec) << ec.message() << ": " << socket->last_error();
    return socket;
  }

  /// Runs the io_context until `done()` or `timeout`; returns done().
  template <class Predicate>
  bool run_until(Predicate done, std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
      if (std::chrono::steady_clock::now() > deadline) return done();
      if (io_.stopped()) io_.restart();
      io_.run_one_for(20ms);
    }
    return true;
  }

  void send(test_client& client, const std::string& bytes) {
    client.queue(bytes);
    ASSERT_TRUE(run_until([&] { return client.flush(); })) << "could not send";
  }

  std::optional<json> read_message(test_client& client) {
    std::optional<std::string> line;
    run_until([&] {
      client.pump();
      line = client.take_line();
      return line.has_value() || client.eof();
    });
    if (!line) return std::nullopt;
    return json::parse(*line);
  }

  json request(test_client& client, const json& message) {
    send(client, message.dump() + "\n");
    auto reply = read_message(client);
    EXPECT_TRUE(reply.has_value()) << "no reply to " << message.dump();
    return reply.value_or(json());
  }

  bool wait_eof(test_client& client) {
    return run_until([&] {
      client.pump();
      client.take_line();
      return client.eof();
    });
  }

  boost::asio::io_context io_;
  std::string dir_;
  std::string path_;
};

TEST_F(app_socket_test, hello_names_the_protocol_version_and_the_daemon) {
  auto socket = open_socket();
  test_client client(path_);
  ASSERT_TRUE(client.connected());
  EXPECT_EQ(request(client, {{"cmd", "hello"}, {"id", 1}}),
            (json{{"type", "hello"}, {"protocol", 1}, {"baton", BATON_VERSION}, {"id", 1}}));
}

TEST_F(app_socket_test, ping_pongs_and_echoes_the_id) {
  auto socket = open_socket();
  test_client client(path_);
  ASSERT_TRUE(client.connected());
  EXPECT_EQ(request(client, {{"cmd", "ping"}}), (json{{"type", "pong"}}));
  EXPECT_EQ(request(client, {{"cmd", "ping"}, {"id", 7}}), (json{{"type", "pong"}, {"id", 7}}));
  EXPECT_EQ(request(client, {{"cmd", "ping"}, {"id", "abc"}}),
            (json{{"type", "pong"}, {"id", "abc"}}));
  const json unknown = request(client, {{"cmd", "frobnicate"}, {"id", 8}});
  EXPECT_EQ(unknown, (json{{"type", "error"}, {"error", "unknown command 'frobnicate'"},
                           {"id", 8}}));
}

TEST_F(app_socket_test, status_merges_the_provider_fields) {
  auto socket = open_socket([] {
    return json{{"role", "leader"}, {"token", 42}, {"type", "ignored"}};
  });
  test_client client(path_);
  const json reply = request(client, {{"cmd", "status"}, {"id", 1}});
  EXPECT_EQ(reply, (json{{"type", "status"}, {"role", "leader"}, {"token", 42}, {"id", 1}}));
}

TEST_F(app_socket_test, failing_status_provider_gives_an_error_reply) {
  auto socket = open_socket([]() -> json { throw std::runtime_error("not ready"); });
  test_client client(path_);
  const json reply = request(client, {{"cmd", "status"}});
  EXPECT_EQ(reply["type"], "error");
  EXPECT_NE(reply["error"].get<std::string>().find("not ready"), std::string::npos);
  EXPECT_EQ(request(client, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, subscriber_gets_published_events_in_order) {
  auto socket = open_socket();
  test_client client(path_);
  EXPECT_EQ(request(client, {{"cmd", "subscribe"}}), (json{{"type", "subscribed"}}));
  EXPECT_EQ(socket->subscriber_count(), 1u);
  for (int i = 0; i < 3; ++i) socket->publish({{"type", "event"}, {"seq", i}});
  for (int i = 0; i < 3; ++i) {
    const auto event = read_message(client);
    ASSERT_TRUE(event.has_value());
    EXPECT_EQ(*event, (json{{"type", "event"}, {"seq", i}}));
  }
  // A subscriber can still send commands.
  EXPECT_EQ(request(client, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, every_subscriber_gets_every_event_and_others_none) {
  auto socket = open_socket();
  test_client first(path_);
  test_client second(path_);
  test_client bystander(path_);
  EXPECT_EQ(request(first, {{"cmd", "subscribe"}})["type"], "subscribed");
  EXPECT_EQ(request(second, {{"cmd", "subscribe"}})["type"], "subscribed");
  EXPECT_EQ(request(bystander, {{"cmd", "ping"}})["type"], "pong");
  for (int i = 0; i < 5; ++i) socket->publish({{"type", "event"}, {"seq", i}});
  for (auto* client : {&first, &second}) {
    for (int i = 0; i < 5; ++i) {
      const auto event = read_message(*client);
      ASSERT_TRUE(event.has_value());
      EXPECT_EQ((*event)["seq"], i);
    }
  }
  // The bystander's next line is the reply to its next request, no event.
  EXPECT_EQ(request(bystander, {{"cmd", "ping"}})["type"], "pong");
  EXPECT_TRUE(bystander.unread().empty());
}

TEST_F(app_socket_test, bad_requests_get_errors_and_the_connection_stays_usable) {
  auto socket = open_socket();
  test_client client(path_);
  const auto error_for = [&](const std::string& line) {
    send(client, line + "\n");
    const auto reply = read_message(client);
    EXPECT_TRUE(reply.has_value()) << line;
    if (!reply) return std::string();
    EXPECT_EQ((*reply)["type"], "error") << line;
    return (*reply)["error"].get<std::string>();
  };
  EXPECT_EQ(error_for("this is not json").rfind("invalid JSON", 0), 0u);
  EXPECT_EQ(error_for("{\"cmd\":").rfind("invalid JSON", 0), 0u);
  EXPECT_EQ(error_for("[1,2]"), "request must be a JSON object");
  EXPECT_EQ(error_for("\"ping\""), "request must be a JSON object");
  EXPECT_EQ(error_for("{\"x\":1}"), "request has no \"cmd\" string");
  EXPECT_EQ(error_for("{\"cmd\":5}"), "request has no \"cmd\" string");
  EXPECT_EQ(error_for(std::string("{\"cmd\":\"\xff\xfe\"}")).rfind("invalid JSON", 0), 0u);
  EXPECT_EQ(error_for(std::string(1000, '[')).rfind("invalid JSON", 0), 0u);
  // An id is echoed even when the request is refused.
  send(client, "{\"id\":3}\n");
  EXPECT_EQ(read_message(client).value_or(json())["id"], 3);
  // Blank lines are skipped, CRLF is accepted, several requests in one write.
  send(client, "\n  \r\n{\"cmd\":\"ping\",\"id\":1}\r\n{\"cmd\":\"ping\",\"id\":2}\n");
  EXPECT_EQ(read_message(client).value_or(json())["id"], 1);
  EXPECT_EQ(read_message(client).value_or(json())["id"], 2);
  EXPECT_EQ(socket->client_count(), 1u);
}

TEST_F(app_socket_test, line_at_the_limit_is_accepted) {
  auto socket = open_socket();
  test_client client(path_);
  json ping{{"cmd", "ping"}, {"pad", ""}};
  const std::size_t overhead = ping.dump().size();
  ping["pad"] = std::string(app_socket::max_line_bytes - overhead, 'x');
  ASSERT_EQ(ping.dump().size(), app_socket::max_line_bytes);
  EXPECT_EQ(request(client, ping)["type"], "pong");
}

TEST_F(app_socket_test, oversized_line_gets_an_error_and_a_disconnect) {
  auto socket = open_socket();
  test_client other(path_);
  EXPECT_EQ(request(other, {{"cmd", "subscribe"}})["type"], "subscribed");
  test_client client(path_);
  ASSERT_TRUE(run_until([&] { return socket->client_count() == 2; }));
  client.queue(std::string(app_socket::max_line_bytes + 4096, 'x'));
  std::optional<std::string> line;
  ASSERT_TRUE(run_until([&] {
    client.flush();
    client.pump();
    if (!line) line = client.take_line();
    return line.has_value() && client.eof();
  }));
  const json reply = json::parse(*line);
  EXPECT_EQ(reply["type"], "error");
  EXPECT_EQ(reply["error"], "line too long (limit 65536 bytes)");
  EXPECT_TRUE(run_until([&] { return socket->client_count() == 1; }));
  // The server still serves the others.
  socket->publish({{"type", "event"}, {"seq", 1}});
  EXPECT_EQ(read_message(other).value_or(json())["seq"], 1);
  EXPECT_EQ(request(other, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, client_leaving_mid_line_is_just_closed) {
  auto socket = open_socket();
  test_client other(path_);
  {
    test_client client(path_);
    ASSERT_TRUE(run_until([&] { return socket->client_count() == 2; }));
    send(client, "{\"cmd\":\"pi");
    io_.poll();
  }
  EXPECT_TRUE(run_until([&] { return socket->client_count() == 1; }));
  EXPECT_EQ(request(other, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, subscriber_that_never_reads_is_dropped_without_blocking) {
  auto socket = open_socket();
  test_client stuck(path_);
  test_client reader(path_);
  EXPECT_EQ(request(stuck, {{"cmd", "subscribe"}})["type"], "subscribed");
  EXPECT_EQ(request(reader, {{"cmd", "subscribe"}})["type"], "subscribed");

  constexpr int events = 10000;
  const std::string padding(200, 'p');
  std::string pending;
  int next_seq = 0;
  bool in_order = true;
  const auto consume = [&] {
    reader.pump();
    while (auto line = reader.take_line()) {
      const json event = json::parse(*line);
      if (event["seq"] != next_seq) in_order = false;
      ++next_seq;
    }
  };
  auto slowest = std::chrono::steady_clock::duration::zero();
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < events; ++i) {
    const auto before = std::chrono::steady_clock::now();
    socket->publish({{"type", "event"}, {"seq", i}, {"padding", padding}});
    slowest = std::max(slowest, std::chrono::steady_clock::now() - before);
    // Let the writes complete and the reader keep up, as the daemon's loop
    // would between events.
    io_.poll();
    consume();
  }
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_LT(elapsed, 30s);
  EXPECT_LT(slowest, 1s);
  EXPECT_TRUE(run_until([&] {
    consume();
    return next_seq == events;
  }));
  EXPECT_EQ(next_seq, events);
  EXPECT_TRUE(in_order);
  EXPECT_EQ(socket->client_count(), 1u);
  EXPECT_EQ(socket->subscriber_count(), 1u);
  // The stuck client finds the end of the stream once it does read: what the
  // kernel held, then EOF, far fewer than all the events.
  EXPECT_TRUE(wait_eof(stuck));
  EXPECT_LT(stuck.received(), static_cast<std::size_t>(events) * padding.size());
}

TEST_F(app_socket_test, subscriber_gone_while_events_are_published) {
  auto socket = open_socket();
  auto client = std::make_unique<test_client>(path_);
  EXPECT_EQ(request(*client, {{"cmd", "subscribe"}})["type"], "subscribed");
  client.reset();
  // Writes to the closed peer fail (EPIPE, no signal) or the read sees EOF
  // first; either way the client is forgotten.
  for (int i = 0; i < 100; ++i) {
    socket->publish({{"type", "event"}, {"seq", i}});
    io_.poll();
  }
  EXPECT_TRUE(run_until([&] { return socket->client_count() == 0; }));
}

TEST_F(app_socket_test, connect_disconnect_cycles_leave_no_clients_and_no_fds) {
  auto socket = open_socket();
  // Warm up whatever the first accept allocates (epoll registrations etc.).
  {
    test_client client(path_);
    ASSERT_TRUE(run_until([&] { return socket->client_count() == 1; }));
  }
  ASSERT_TRUE(run_until([&] { return socket->client_count() == 0; }));
  const std::size_t fds_before = open_fd_count();
  for (int i = 0; i < 1000; ++i) {
    test_client client(path_);
    ASSERT_TRUE(client.connected()) << "cycle " << i;
    ASSERT_TRUE(run_until([&] { return socket->client_count() == 1; })) << "cycle " << i;
    if (i % 10 == 0) EXPECT_EQ(request(client, {{"cmd", "subscribe"}})["type"], "subscribed");
    client.close();
    ASSERT_TRUE(run_until([&] { return socket->client_count() == 0; })) << "cycle " << i;
  }
  EXPECT_EQ(socket->client_count(), 0u);
  EXPECT_EQ(open_fd_count(), fds_before);
}

TEST_F(app_socket_test, stale_socket_file_is_replaced) {
  {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.data(), path_.size());
    ASSERT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    ::close(fd);  // the file stays behind, as after a crash
  }
  struct stat st {};
  ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
  ASSERT_TRUE(S_ISSOCK(st.st_mode));
  auto socket = open_socket();
  test_client client(path_);
  EXPECT_EQ(request(client, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, live_socket_is_refused) {
  auto first = open_socket();
  auto second = make_socket();
  std::error_code ec;
  second->open(ec);
  EXPECT_EQ(ec, baton::socket_errc::in_use);
  EXPECT_EQ(second->last_error(), "another process is listening on " + path_);
  try {
    second->open();
    ADD_FAILURE() << "open() did not throw";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code(), baton::socket_errc::in_use);
    EXPECT_EQ(std::string(e.what()), "another process is listening on " + path_);
  }
  second.reset();  // must not remove the first one's file
  test_client client(path_);
  EXPECT_EQ(request(client, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, regular_file_at_the_path_is_refused_and_kept) {
  { std::ofstream(path_) << "precious"; }
  auto socket = make_socket();
  std::error_code ec;
  socket->open(ec);
  EXPECT_EQ(ec, baton::socket_errc::not_a_socket);
  EXPECT_EQ(socket->last_error(), path_ + " exists and is not a socket");
  socket->close();
  socket.reset();
  EXPECT_EQ(read_file(path_), "precious");
}

TEST_F(app_socket_test, missing_parent_directory_is_an_error) {
  path_ = dir_ + "/missing/app.sock";
  auto socket = make_socket();
  std::error_code ec;
  socket->open(ec);
  EXPECT_EQ(ec, std::errc::no_such_file_or_directory);
  EXPECT_EQ(socket->last_error(),
            "cannot create socket " + path_ + ": directory " + dir_ + "/missing does not exist");
}

TEST_F(app_socket_test, overlong_path_is_an_error) {
  path_ = dir_ + "/" + std::string(120, 'a');
  auto socket = make_socket();
  std::error_code ec;
  socket->open(ec);
  EXPECT_EQ(ec, baton::socket_errc::path_too_long);
}

TEST_F(app_socket_test, empty_path_listens_nowhere) {
  path_.clear();
  auto socket = make_socket();
  std::error_code ec;
  socket->open(ec);
  EXPECT_FALSE(ec);
  socket->publish({{"type", "event"}});
  EXPECT_EQ(socket->client_count(), 0u);
}

TEST_F(app_socket_test, mode_is_applied) {
  for (const unsigned mode : {0600u, 0640u, 0666u}) {
    auto socket = make_socket({}, mode);
    std::error_code ec;
    socket->open(ec);
    ASSERT_FALSE(ec) << socket->last_error();
    struct stat st {};
    ASSERT_EQ(::lstat(path_.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, mode);
    socket->close();
  }
}

TEST_F(app_socket_test, close_removes_only_its_own_file) {
  auto socket = open_socket();
  socket->close();
  struct stat st {};
  EXPECT_NE(::lstat(path_.c_str(), &st), 0);

  std::error_code ec;
  socket->open(ec);  // reopening works
  ASSERT_FALSE(ec) << socket->last_error();
  ASSERT_EQ(::unlink(path_.c_str()), 0);
  { std::ofstream(path_) << "someone else's"; }
  socket->close();
  EXPECT_EQ(read_file(path_), "someone else's");
}

TEST_F(app_socket_test, close_disconnects_clients) {
  auto socket = open_socket();
  test_client client(path_);
  EXPECT_EQ(request(client, {{"cmd", "subscribe"}})["type"], "subscribed");
  socket->publish({{"type", "event"}});
  socket->close();
  EXPECT_EQ(socket->client_count(), 0u);
  EXPECT_TRUE(wait_eof(client));
  socket.reset();
  io_.restart();
  io_.poll();  // handlers of aborted operations must find nothing dangling
}

TEST_F(app_socket_test, destroying_with_pending_operations_is_safe) {
  auto socket = open_socket();
  test_client client(path_);
  EXPECT_EQ(request(client, {{"cmd", "subscribe"}})["type"], "subscribed");
  send(client, "{\"cmd\":\"ping\"}\n{\"cmd\":\"pi");
  socket->publish({{"type", "event"}});
  socket.reset();
  io_.restart();
  io_.poll();
  EXPECT_TRUE(wait_eof(client));
}

TEST_F(app_socket_test, registered_command_gets_the_peer_credentials) {
  auto socket = open_socket();
  baton::peer_info seen;
  json seen_request;
  socket->add_command("whoami", [&](const json& request, const baton::peer_info& peer) {
    seen = peer;
    seen_request = request;
    return json{{"uid", peer.uid}};
  });
  test_client client(path_);
  const json reply = request(client, {{"cmd", "whoami"}, {"id", 5}, {"arg", "x"}});
  EXPECT_EQ(reply, (json{{"type", "whoami"}, {"uid", ::getuid()}, {"id", 5}}));
  EXPECT_EQ(seen.uid, ::getuid());
  EXPECT_EQ(seen.gid, ::getgid());
  EXPECT_EQ(seen.pid, ::getpid());
  EXPECT_EQ(seen_request["arg"], "x");
}

TEST_F(app_socket_test, registered_command_results_and_failures) {
  auto socket = open_socket();
  socket->add_command("answer", [](const json&, const baton::peer_info&) { return json(42); });
  socket->add_command("typed", [](const json&, const baton::peer_info&) {
    return json{{"type", "custom"}};
  });
  socket->add_command("resign", [](const json&, const baton::peer_info&) -> json {
    throw std::runtime_error("permission denied: uid 1234 is not allowed");
  });
  EXPECT_THROW(socket->add_command("ping", [](const json&, const baton::peer_info&) {
    return json();
  }),
               std::invalid_argument);
  EXPECT_THROW(socket->add_command("empty", {}), std::invalid_argument);
  test_client client(path_);
  EXPECT_EQ(request(client, {{"cmd", "answer"}}), (json{{"type", "answer"}, {"result", 42}}));
  EXPECT_EQ(request(client, {{"cmd", "typed"}}), (json{{"type", "custom"}}));
  EXPECT_EQ(request(client, {{"cmd", "resign"}, {"id", 2}}),
            (json{{"type", "error"},
                  {"error", "permission denied: uid 1234 is not allowed"},
                  {"id", 2}}));
  EXPECT_EQ(request(client, {{"cmd", "ping"}})["type"], "pong");
}

TEST_F(app_socket_test, handler_may_close_the_socket) {
  auto socket = open_socket();
  socket->add_command("stop", [&](const json&, const baton::peer_info&) {
    socket->close();
    return json{{"ok", true}};
  });
  test_client client(path_);
  send(client, "{\"cmd\":\"stop\"}\n{\"cmd\":\"ping\"}\n");
  EXPECT_TRUE(wait_eof(client));
  EXPECT_EQ(socket->client_count(), 0u);
}

TEST_F(app_socket_test, clients_over_the_limit_are_told_and_closed) {
  auto socket = open_socket();
  std::vector<std::unique_ptr<test_client>> clients;
  for (std::size_t i = 0; i < app_socket::max_clients; ++i) {
    clients.push_back(std::make_unique<test_client>(path_));
    ASSERT_TRUE(clients.back()->connected());
  }
  ASSERT_TRUE(run_until([&] { return socket->client_count() == app_socket::max_clients; }));
  test_client extra(path_);
  const auto reply = read_message(extra);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(*reply, (json{{"type", "error"}, {"error", "too many clients (limit 256)"}}));
  EXPECT_TRUE(wait_eof(extra));
  EXPECT_EQ(socket->client_count(), app_socket::max_clients);
  // A freed slot is usable again.
  clients.front().reset();
  ASSERT_TRUE(run_until([&] { return socket->client_count() == app_socket::max_clients - 1; }));
  test_client late(path_);
  EXPECT_EQ(request(late, {{"cmd", "ping"}})["type"], "pong");
}

}  // namespace
