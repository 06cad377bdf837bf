// fork() + run_keeper() in the child. Everything that allocates is prepared
// before the fork; the child only makes system calls until run_keeper(), and
// leaves with _exit() so none of the daemon's destructors or atexit handlers
// run a second time in the copy.
#include "keeper_fork.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "baton/keeper.hpp"

extern char** environ;

namespace baton::process {

namespace {

[[noreturn]] void become_keeper(std::vector<char*>& args, std::vector<char*>& envp,
                                int deadline_fd) {
  // The daemon's signal handlers (asio's) must not run in the copy: block
  // everything while resetting them, then start from an empty mask, as an
  // exec'd keeper would.
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, nullptr);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);  // 32/33 fail harmlessly
  }
  ::setpgid(0, 0);
  if (deadline_fd == keeper_deadline_fd) {
    ::fcntl(keeper_deadline_fd, F_SETFD, 0);
  } else if (::dup2(deadline_fd, keeper_deadline_fd) < 0) {
    ::_exit(125);
  }
  ::close_range(keeper_deadline_fd + 1, ~0U, 0);
  environ = envp.data();
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::_exit(run_keeper(static_cast<int>(args.size() - 1), args.data()));
}

}  // namespace

spawn_result fork_keeper(const std::vector<std::string>& keeper_args,
                         const std::vector<std::string>& env, int deadline_fd) {
  auto args = c_strings(keeper_args);
  auto envp = c_strings(env);
  pid_t pid = ::fork();
  if (pid < 0) return {-1, errno};
  if (pid == 0) become_keeper(args, envp, deadline_fd);
  // Set the group from both sides, so it exists before either side goes on:
  // the daemon may signal the group as soon as it has the pid.
  ::setpgid(pid, pid);
  return {pid, 0};
}

}  // namespace baton::process
