// Entering and leaving a private network namespace, and running iptables in
// it (see private_network.hpp).

#include "support/private_network.hpp"
#include "support/errno_error.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

extern char** environ;

namespace baton::testing {
namespace {

unsigned long long inode_of_current_namespace() {
  struct stat info {};
  if (::stat("/proc/thread-self/ns/net", &info) != 0) return 0;
  return static_cast<unsigned long long>(info.st_ino);
}

void bring_loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw errno_error(errno, "socket for SIOCSIFFLAGS");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(fd, SIOCGIFFLAGS, &request);
  if (rc == 0) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    rc = ::ioctl(fd, SIOCSIFFLAGS, &request);
  }
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw errno_error(saved, "bring lo up");
}

// The iptables executable: root's PATH usually has /usr/sbin, ctest's may not.
std::string iptables_path() {
  for (const char* candidate : {"/usr/sbin/iptables", "/sbin/iptables"}) {
    if (::access(candidate, X_OK) == 0) return candidate;
  }
  return "iptables";
}

}  // namespace

private_network::private_network() {
  original_fd_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (original_fd_ < 0) throw errno_error(errno, "open /proc/thread-self/ns/net");
  const unsigned long long original_inode = inode_of_current_namespace();
  if (::unshare(CLONE_NEWNET) != 0) {
    const int saved = errno;
    ::close(original_fd_);
    throw errno_error(saved, "unshare(CLONE_NEWNET) (needs root)");
  }
  own_inode_ = inode_of_current_namespace();
  try {
    if (own_inode_ == 0 || own_inode_ == original_inode) {
      throw std::system_error(std::make_error_code(std::errc::operation_not_permitted),
                              "the new network namespace is not distinct");
    }
    bring_loopback_up();
  } catch (...) {
    ::setns(original_fd_, CLONE_NEWNET);
    ::close(original_fd_);
    throw;
  }
}

private_network::~private_network() {
  if (original_fd_ >= 0) {
    ::setns(original_fd_, CLONE_NEWNET);
    ::close(original_fd_);
  }
}

bool private_network::inside() const {
  return own_inode_ != 0 && inode_of_current_namespace() == own_inode_;
}

int private_network::iptables(const std::vector<std::string>& args, std::string* output) const {
  // The one guard that keeps the host's firewall out of reach.
  if (!inside()) {
    if (output != nullptr) *output = "refused: not inside the private network namespace";
    return -1;
  }
  std::array<int, 2> pipe_fds{};
  if (::pipe2(pipe_fds.data(), O_CLOEXEC) != 0) return 127;

  const std::string program = iptables_path();
  std::vector<std::string> argv_text{program};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_text) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string text;
  if (rc == 0) {
    std::array<char, 4096> buffer{};
    // iptables finishes in milliseconds; the poll bound keeps a wedged one
    // from hanging the test.
    for (int rounds = 0; rounds < 1000; ++rounds) {
      pollfd pfd{pipe_fds[0], POLLIN, 0};
      if (::poll(&pfd, 1, 10'000) <= 0) break;
      const ssize_t n = ::read(pipe_fds[0], buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      text.append(buffer.data(), static_cast<std::size_t>(n));
    }
  }
  ::close(pipe_fds[0]);
  if (output != nullptr) *output = rc == 0 ? text : std::string("cannot run ") + program;
  if (rc != 0) return 127;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void private_network::must_iptables(const std::vector<std::string>& args) const {
  std::string output;
  const int status = iptables(args, &output);
  if (status != 0) {
    std::string command = "iptables";
    for (const auto& arg : args) command += " " + arg;
    throw std::runtime_error(command + " failed (status " + std::to_string(status) +
                             "): " + output);
  }
}

std::string enter_private_network(std::optional<private_network>& net) {
  try {
    net.emplace();
  } catch (const std::system_error& e) {
    return std::string("no private network namespace: ") + e.what();
  }
  std::string out;
  if (net->iptables({"-t", "nat", "-L", "OUTPUT"}, &out) != 0) {
    return "iptables does not run in the namespace: " + out;
  }
  return {};
}

std::string private_network_unavailable() {
  std::optional<private_network> net;
  return enter_private_network(net);
}

}  // namespace baton::testing
