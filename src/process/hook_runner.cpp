// One hook run: spawn, pipe its output to the log, time it out, reap it.
#include "hook_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>
#include <utility>

#include "spawn.hpp"
#include "close_fd.hpp"

namespace baton::process {

namespace {

constexpr milliseconds max_grace{2000};

struct pipe_pair {
  int read_end = -1;
  int write_end = -1;
};

// O_CLOEXEC on both ends: other spawns (and this hook's own exec) must not
// inherit them; posix_spawn's dup2 onto 1/2 clears the flag on the copies.
bool make_pipe(pipe_pair& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read_end = fds[0];
  p.write_end = fds[1];
  return true;
}


}  // namespace

std::string format_duration(milliseconds duration) {
  auto ms = duration.count();
  if (ms != 0 && ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string hook_result::describe() const {
  std::string prefix = name + ": ";
  if (spawn_error != 0) return prefix + spawn_error_message({command}, spawn_error);
  if (timed_out) return prefix + "timed out after " + format_duration(timeout);
  if (status.signal != 0) return prefix + status.describe();
  if (status.code != 0) return prefix + "failed with " + status.describe();
  return prefix + "succeeded";
}

hook_runner::hook_runner(boost::asio::io_context& io, child_reaper& reaper, std::string name)
    : io_(io), reaper_(reaper), timer_(io) {
  result_.name = std::move(name);
}

hook_runner::~hook_runner() {
  boost::system::error_code ignored;
  timer_.cancel(ignored);
}

void hook_runner::run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                      milliseconds timeout, done_handler done) {
  done_ = std::move(done);
  result_.command = argv.empty() ? std::string() : argv.front();
  result_.timeout = timeout;
  started_at_ = mono_clock::now();

  pipe_pair out;
  pipe_pair err;
  spawn_result spawned;
  if (!make_pipe(out) || !make_pipe(err)) {
    spawned.error = errno;
  } else {
    spawn_request request;
    request.argv = argv;
    request.env = env;
    request.stdout_fd = out.write_end;
    request.stderr_fd = err.write_end;
    spawned = spawn_process(request);
  }
  // Our copies of the write ends must go, or the pumps never see end of file.
  close_fd(out.write_end);
  close_fd(err.write_end);

  if (!spawned.ok()) {
    close_fd(out.read_end);
    close_fd(err.read_end);
    result_.spawn_error = spawned.error;
    boost::asio::post(io_, [done = std::move(done_), result = result_] { done(result); });
    return;
  }

  pid_ = spawned.pid;
  spdlog::info("{}: started {} (pid {})", result_.name, result_.command, pid_);
  stdout_ = output_pump::start(io_, out.read_end, result_.name, spdlog::level::info);
  stderr_ = output_pump::start(io_, err.read_end, result_.name, spdlog::level::warn);
  reaper_.watch(
      pid_,
      [this, alive = std::weak_ptr<char>(alive_)](exit_status status) {
        if (!alive.expired()) on_exit(status);
      },
      [this, alive = std::weak_ptr<char>(alive_)] {
        // Stragglers that survived the SIGTERM (or were forked just after it)
        // must not outlive a hook we ended.
        if (!alive.expired() && signalled_) signal_group(SIGKILL);
      });

  if (timeout > milliseconds::zero()) {
    grace_ = std::min(max_grace, timeout);
    timer_.expires_after(timeout);
    timer_.async_wait(
        [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec) {
          if (!alive.expired() && !ec) on_timeout();
        });
  }
}

void hook_runner::terminate() {
  if (pid_ == 0) return;
  spdlog::info("{}: sending SIGTERM to process group {}", result_.name, pid_);
  signal_group(SIGTERM);
}

void hook_runner::kill() {
  if (pid_ == 0) return;
  spdlog::warn("{}: sending SIGKILL to process group {}", result_.name, pid_);
  signal_group(SIGKILL);
}

void hook_runner::kill_and_reap() {
  if (pid_ == 0) return;
  signal_group(SIGKILL);
  reaper_.reap_blocking(pid_);
  pid_ = 0;
  boost::system::error_code ignored;
  timer_.cancel(ignored);
}

void hook_runner::on_timeout() {
  if (pid_ == 0) return;
  result_.timed_out = true;
  spdlog::error("{}: timed out after {}; sending SIGTERM", result_.name,
                format_duration(result_.timeout));
  signal_group(SIGTERM);
  timer_.expires_after(grace_);
  timer_.async_wait(
      [this, alive = std::weak_ptr<char>(alive_)](const boost::system::error_code& ec) {
        if (!alive.expired() && !ec) on_grace_expired();
      });
}

void hook_runner::on_grace_expired() {
  if (pid_ == 0) return;
  spdlog::error("{}: still running {} after SIGTERM; sending SIGKILL", result_.name,
                format_duration(grace_));
  signal_group(SIGKILL);
}

void hook_runner::on_exit(exit_status status) {
  pid_ = 0;
  boost::system::error_code ignored;
  timer_.cancel(ignored);
  result_.status = status;
  result_.duration = std::chrono::duration_cast<milliseconds>(mono_clock::now() - started_at_);
  // The hook is gone, so all it wrote is in the pipes: log it before the
  // result. Background children may still hold the pipes; the pumps keep
  // reading them until end of file.
  if (stdout_) stdout_->drain();
  if (stderr_) stderr_->drain();
  boost::asio::post(io_, [done = std::move(done_), result = result_] { done(result); });
}

void hook_runner::signal_group(int signal) {
  signalled_ = true;
  // pid_ is only non-zero while the process is unreaped, so its pid (and
  // with it the group id) cannot have been reused.
  if (pid_ > 0 && ::killpg(pid_, signal) != 0 && errno != ESRCH) {
    spdlog::warn("{}: cannot signal process group {}: {}", result_.name, pid_,
                 std::strerror(errno));
  }
}

}  // namespace baton::process
