// The notifier against a datagram socket the test owns, standing in for
// systemd's notification socket.
#include "baton/systemd_notify.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "support/baton_process.hpp"

namespace baton {
namespace {

using namespace std::chrono_literals;

// Saves the variables the notifier reads and restores them afterwards, so
// tests neither see the runner's systemd nor leak into each other.
class systemd_environment : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& name : systemd_notifier::environment_names()) {
      if (const char* value = std::getenv(name.c_str()); value != nullptr) {
        saved_[name] = value;
      }
      ::unsetenv(name.c_str());
    }
  }
  void TearDown() override {
    for (const auto& name : systemd_notifier::environment_names()) {
      if (auto it = saved_.find(name); it != saved_.end()) {
        ::setenv(name.c_str(), it->second.c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::string> saved_;
};

// A bound AF_UNIX datagram socket; receive() waits at most 10 s.
class notify_socket {
 public:
  // `abstract`: a name in the abstract namespace, given to NOTIFY_SOCKET as
  // "@name"; otherwise a path in `dir`.
  notify_socket(const baton::testing::temp_dir& dir, bool abstract) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      ADD_FAILURE() << "socket: " << std::strerror(errno);
      return;
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    socklen_t length = 0;
    if (abstract) {
      std::random_device random;
      const std::string name = "baton-notify-test-" + std::to_string(::getpid()) + "-" +
                               std::to_string(random());
      address.sun_path[0] = '\0';
      std::memcpy(address.sun_path + 1, name.data(), name.size());
      length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
      env_value_ = "@" + name;
    } else {
      env_value_ = (dir / "notify").string();
      std::memcpy(address.sun_path, env_value_.c_str(), env_value_.size() + 1);
      length = sizeof(address);
    }
    if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
      ADD_FAILURE() << "bind " << env_value_ << ": " << std::strerror(errno);
    }
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  ~notify_socket() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  notify_socket(const notify_socket&) = delete;
  notify_socket& operator=(const notify_socket&) = delete;

  // The value for NOTIFY_SOCKET.
  const std::string& env_value() const { return env_value_; }

  // The next datagram, or nullopt after the timeout.
  std::optional<std::string> receive() const {
    char buffer[4096];
    const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (got < 0) {
      return std::nullopt;
    }
    return std::string(buffer, static_cast<std::size_t>(got));
  }

  // True if a datagram is already waiting (does not block).
  bool has_pending() const {
    char byte = 0;
    return ::recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) >= 0;
  }

 private:
  int fd_ = -1;
  std::string env_value_;
};

TEST_F(systemd_environment, sends_ready_status_watchdog_and_stopping) {
  baton::testing::temp_dir dir("baton-sd-");
  notify_socket socket(dir, false);
  ::setenv("NOTIFY_SOCKET", socket.env_value().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "2000000", 1);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);

  systemd_notifier notifier;
  EXPECT_TRUE(notifier.enabled());
  EXPECT_EQ(notifier.watchdog_interval(), std::optional<std::chrono::microseconds>(1s));

  notifier.ready();
  EXPECT_FALSE(notifier.last_error()) << notifier.last_error().message();
  EXPECT_EQ(socket.receive(), "READY=1");
  notifier.status("leader of jobs\nsince 12:00\r");
  EXPECT_EQ(socket.receive(), "STATUS=leader of jobs since 12:00 ");
  notifier.watchdog();
  EXPECT_EQ(socket.receive(), "WATCHDOG=1");
  notifier.stopping();
  EXPECT_EQ(socket.receive(), "STOPPING=1");
  EXPECT_FALSE(notifier.last_error());

  // libsystemd was asked not to unset them: hooks rely on the daemon to drop them.
  for (const auto& name : systemd_notifier::environment_names()) {
    EXPECT_NE(std::getenv(name.c_str()), nullptr) << name;
  }
}

TEST_F(systemd_environment, abstract_socket_names_work) {
  baton::testing::temp_dir dir("baton-sd-");
  notify_socket socket(dir, true);
  ::setenv("NOTIFY_SOCKET", socket.env_value().c_str(), 1);

  systemd_notifier notifier;
  EXPECT_TRUE(notifier.enabled());
  notifier.ready();
  EXPECT_FALSE(notifier.last_error()) << notifier.last_error().message();
  EXPECT_EQ(socket.receive(), "READY=1");
}

TEST_F(systemd_environment, watchdog_for_another_pid_is_not_ours) {
  baton::testing::temp_dir dir("baton-sd-");
  notify_socket socket(dir, false);
  ::setenv("NOTIFY_SOCKET", socket.env_value().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "2000000", 1);
  ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);

  systemd_notifier notifier;
  EXPECT_TRUE(notifier.enabled());
  EXPECT_EQ(notifier.watchdog_interval(), std::nullopt);
}

TEST_F(systemd_environment, watchdog_without_pid_applies_to_us) {
  baton::testing::temp_dir dir("baton-sd-");
  notify_socket socket(dir, false);
  ::setenv("NOTIFY_SOCKET", socket.env_value().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "300000", 1);

  systemd_notifier notifier;
  EXPECT_EQ(notifier.watchdog_interval(), std::optional<std::chrono::microseconds>(150ms));
}

TEST_F(systemd_environment, invalid_watchdog_usec_means_no_watchdog) {
  baton::testing::temp_dir dir("baton-sd-");
  notify_socket socket(dir, false);
  ::setenv("NOTIFY_SOCKET", socket.env_value().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "soon", 1);

  systemd_notifier notifier;
  EXPECT_EQ(notifier.watchdog_interval(), std::nullopt);
}

TEST_F(systemd_environment, without_notify_socket_everything_is_a_no_op) {
  ::setenv("WATCHDOG_USEC", "2000000", 1);
  systemd_notifier notifier;
  EXPECT_FALSE(notifier.enabled());
  EXPECT_EQ(notifier.watchdog_interval(), std::nullopt);
  notifier.ready();
  notifier.status("x");
  notifier.watchdog();
  notifier.stopping();
  EXPECT_FALSE(notifier.last_error());
  // Nor is libsystemd loaded (it is opened under systemd only): this test
  // runs in a process of its own.
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    EXPECT_EQ(line.find("libsystemd.so"), std::string::npos) << line;
  }
}

TEST_F(systemd_environment, a_failed_send_is_remembered_not_thrown) {
  baton::testing::temp_dir dir("baton-sd-");
  ::setenv("NOTIFY_SOCKET", (dir / "nobody-listens").c_str(), 1);
  systemd_notifier notifier;
  EXPECT_TRUE(notifier.enabled());
  EXPECT_NO_THROW(notifier.ready());
  EXPECT_TRUE(notifier.last_error());
  EXPECT_NO_THROW(notifier.status("x"));
  EXPECT_TRUE(notifier.last_error());
}

TEST_F(systemd_environment, sends_nothing_extra) {
  baton::testing::temp_dir dir("baton-sd-");
  notify_socket socket(dir, false);
  ::setenv("NOTIFY_SOCKET", socket.env_value().c_str(), 1);
  systemd_notifier notifier;
  notifier.watchdog();
  EXPECT_EQ(socket.receive(), "WATCHDOG=1");
  EXPECT_FALSE(socket.has_pending());
}

}  // namespace
}  // namespace baton
