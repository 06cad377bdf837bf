// SIGCHLD-driven reaping of a known set of pids.
#include "child_reaper.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <spdlog/spdlog.h>
#include <utility>
#include <vector>

namespace baton::process {

child_reaper::child_reaper(boost::asio::io_context& io) : sigchld_(io, SIGCHLD) { arm(); }

child_reaper::~child_reaper() {
  boost::system::error_code ignored;
  sigchld_.cancel(ignored);
}

void child_reaper::watch(pid_t pid, exit_handler on_exit, std::function<void()> before_reap) {
  watched_[pid] = watched{std::move(on_exit), std::move(before_reap)};
  // A child that exited before this call has already raised SIGCHLD, which
  // the signal_set holds for us; polling once more is cheap insurance.
  boost::asio::post(sigchld_.get_executor(), [this, alive = std::weak_ptr<char>(alive_)] {
    if (!alive.expired()) poll();
  });
}

bool child_reaper::watching(pid_t pid) const { return watched_.count(pid) != 0; }

void child_reaper::reap_blocking(pid_t pid) {
  auto it = watched_.find(pid);
  if (it == watched_.end()) return;
  watched_.erase(it);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

void child_reaper::arm() {
  sigchld_.async_wait(
      [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec, int) {
        if (alive.expired() || ec) return;
        arm();
        poll();
      });
}

void child_reaper::poll() {
  std::vector<std::pair<exit_handler, exit_status>> exited;
  for (auto it = watched_.begin(); it != watched_.end();) {
    pid_t pid = it->first;
    if (it->second.before_reap) {
      // Look without reaping first: the zombie keeps pid and group id ours.
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid) {
        it->second.before_reap();
      }
    }
    int status = 0;
    pid_t rc = ::waitpid(pid, &status, WNOHANG);
    if (rc == pid) {
      exited.emplace_back(std::move(it->second.on_exit), exit_status_from_wait(status));
      it = watched_.erase(it);
    } else if (rc < 0 && errno != EINTR) {
      // ECHILD: someone else reaped it (a stray waitpid(-1)). Its status is lost;
      // report it as ended rather than wait forever.
      spdlog::error("process {} was reaped elsewhere; its exit status is unknown", pid);
      exit_status unknown;
      unknown.code = -1;
      exited.emplace_back(std::move(it->second.on_exit), unknown);
      it = watched_.erase(it);
    } else {
      ++it;
    }
  }
  // Handlers may destroy this reaper's owner (and the reaper): stop touching
  // members once the first one has run and we are gone.
  std::weak_ptr<char> alive = alive_;
  for (auto& [handler, status] : exited) {
    if (alive.expired()) return;
    if (handler) handler(status);
  }
}

}  // namespace baton::process
