// The harness's check that a test server's port is held by the process the
// test started (support/listening_process.hpp), not by another test's
// server that took the port first: a probe's answer alone cannot tell.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "support/listening_process.hpp"

namespace baton::testing {
namespace {

// A socket listening on a loopback port the kernel picks; -1 on failure.
int listen_on_any_port(unsigned short& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 1) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

TEST(listening_process, a_process_listening_on_the_port_is_found) {
  unsigned short port = 0;
  const int fd = listen_on_any_port(port);
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(process_listens_on(::getpid(), port));
  ::close(fd);
  EXPECT_FALSE(process_listens_on(::getpid(), port)) << "closed: nobody listens";
}

// The case it exists for: the port answers, but another process holds it.
TEST(listening_process, another_process_on_the_port_is_not_ours) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    unsigned short port = 0;
    if (listen_on_any_port(port) < 0) ::_exit(2);
    if (::write(ready[1], &port, sizeof port) != sizeof port) ::_exit(3);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  unsigned short port = 0;
  const auto got = ::read(ready[0], &port, sizeof port);
  ::close(ready[0]);
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof port));

  EXPECT_TRUE(process_listens_on(child, port));
  EXPECT_FALSE(process_listens_on(::getpid(), port));
  EXPECT_FALSE(process_listens_on(child, static_cast<unsigned short>(port + 1)));

  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_FALSE(process_listens_on(child, port)) << "reaped: no process";
}

}  // namespace
}  // namespace baton::testing
