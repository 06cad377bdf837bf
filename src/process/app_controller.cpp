// app_controller: the phases of one term of the app. start() runs on_start,
// then spawns the child; stop() terminates whichever of the two runs, waits
// for it, then runs on_stop. Everything happens on the io_context's thread;
// at most one of {on_start, child, on_stop} runs at any time. The child is
// spawned under a keeper, which gets the lease deadline through its socket
// pair and reports the command's end back on it the moment it reaps it.
#include "baton/app_controller.hpp"

#include <signal.h>

#include <boost/asio/post.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <spdlog/spdlog.h>
#include <utility>

#include "app_environment.hpp"
#include "baton/keeper.hpp"
#include "child_reaper.hpp"
#include "hook_runner.hpp"
#include "keeper_fork.hpp"
#include "keeper_link.hpp"
#include "keeper_report_watch.hpp"
#include "proc_children.hpp"
#include "spawn.hpp"

namespace baton {

using process::hook_result;

struct app_controller::impl {
  impl(boost::asio::io_context& io, hooks_config hooks, child_config child, listener events,
       app_controller_options options)
      : io_(io),
        hooks_(std::move(hooks)),
        child_(std::move(child)),
        events_(std::move(events)),
        fork_keeper_(options.keeper_program.empty()),
        keeper_program_(options.keeper_program.empty() ? process::self_executable_path()
                                                       : std::move(options.keeper_program)),
        reaper_(io) {}

  void start(const app_context& context);
  void prepare(const app_context& context);
  void stop(const app_context& context);
  void kill();
  void shutdown();
  void set_deadline(time_point valid_until);
  void send_deadline();

  using hook_done = void (impl::*)(const hook_result&);
  void run_hook(const char* name, const std::vector<std::string>& argv,
                const app_context& context, const char* event, hook_done done);
  void retire_hook(const hook_result& result);
  void on_start_finished(const hook_result& result);
  void spawn_child_and_report();
  bool launch_child();
  bool release_parked(bool trace);
  void discard_parked();
  void close_parked_pipes();
  void watch_keeper(pid_t pid);
  void watch_report();
  void close_keeper();
  void on_keeper_exit(pid_t pid, exit_status status);
  void on_end_reported(pid_t pid, exit_status status);
  void report_start_failure(std::string detail);
  void on_child_exit(exit_status status);
  void continue_stop();
  void on_stop_finished(const hook_result& result);
  void finish_stop();
  void signal_child(int signal);

  // Posts `f` to run later, unless the controller is gone by then.
  template <typename F>
  void post_event(F f) {
    boost::asio::post(io_, [alive = std::weak_ptr<char>(alive_), f = std::move(f)]() mutable {
      if (!alive.expired()) f();
    });
  }
  // Like post_event, but dropped if stop() was called or a new term began
  // in between: a start result or child exit is stale once stopping began.
  template <typename F>
  void post_term_event(F f) {
    post_event([this, generation = generation_, f = std::move(f)]() mutable {
      if (generation == generation_ && !stop_requested_) f();
    });
  }

  boost::asio::io_context& io_;
  hooks_config hooks_;
  child_config child_;
  listener events_;
  bool fork_keeper_;  // fork the keeper rather than exec keeper_program_
  std::string keeper_program_;
  process::child_reaper reaper_;
  process::keeper_link keeper_;          // open while child_pid_ is set
  // Watches keeper_ for the keeper's report; reset before keeper_ closes.
  std::unique_ptr<process::keeper_report_watch> report_watch_;
  // Keepers whose report ended their term, killed and not yet reaped: their
  // exit says nothing new.
  std::vector<pid_t> reported_keepers_;
  std::optional<time_point> deadline_;  // the last set_deadline()
  std::unique_ptr<process::hook_runner> hook_;
  pid_t child_pid_ = 0;  // the keeper; non-zero until it reports the end or is reaped
  bool active_ = false;
  bool stop_requested_ = false;
  bool on_stop_started_ = false;
  std::uint64_t generation_ = 0;  // one per start()
  app_context start_context_;
  app_context stop_context_;
  std::vector<std::weak_ptr<process::output_pump>> pumps_;
  // The next term's keeper, started while standing by (prepare()).
  struct {
    process::keeper_link link;
    int start_fd = -1;             // write end of the command's start pipe
    pid_t pid = 0;
    app_context context;           // node, election and ttl it was started for
    std::vector<std::string> env;  // its environment (PATH, for find_executable)
  } parked_;
  time_point park_retry_after_{};
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

namespace {
// After a parked keeper failed, the next attempt waits this long.
constexpr std::chrono::seconds park_retry_delay{30};
}  // namespace

void app_controller::impl::prepare(const app_context& context) {
  if (!child_.park || child_.command.empty() || active_ || parked_.pid != 0 ||
      mono_clock::now() < park_retry_after_) {
    return;
  }
  app_context term = context;
  term.reason = "prepared";  // both replaced at the release
  term.token = 0;
  auto env = process::app_environment(term, "start");
  // Nothing to park: the start will say why in the usual words.
  if (process::find_executable(child_.command.front(), env) != 0) return;
  int start_pipe[2] = {-1, -1};
  int error = parked_.link.open();
  if (error == 0) error = process::open_start_pipe(start_pipe);
  if (error != 0) {
    parked_.link.close();
    spdlog::warn("app: cannot park a keeper for the next term: {}", std::strerror(error));
    park_retry_after_ = mono_clock::now() + park_retry_delay;
    return;
  }
  process::spawn_request request;
  // Exec'd, not forked from the daemon: a small program waits in the standby.
  const std::string& program =
      fork_keeper_ ? process::parked_keeper_program() : keeper_program_;
  request.argv = process::keeper_argv(program, child_.command, {}, true);
  request.env = env;
  request.keep_fd = parked_.link.keeper_end();
  request.start_fd = start_pipe[0];
  auto spawned = process::spawn_process(request);
  parked_.link.close_keeper_end();
  ::close(start_pipe[0]);
  if (!spawned.ok()) {
    parked_.link.close();
    ::close(start_pipe[1]);
    spdlog::warn("app: cannot park a keeper for the next term: {}",
                 process::spawn_error_message({program}, spawned.error));
    park_retry_after_ = mono_clock::now() + park_retry_delay;
    return;
  }
  parked_.pid = spawned.pid;
  parked_.start_fd = start_pipe[1];
  parked_.context = context;
  parked_.env = std::move(env);
  watch_keeper(spawned.pid);
  spdlog::debug("app: keeper parked for the next term: {} (pid {})", program, spawned.pid);
}

// Lets the parked keeper go away (its pipe closes; it kills its waiting
// command and exits). Its exit is then ignored.
void app_controller::impl::discard_parked() {
  if (parked_.pid == 0) return;
  spdlog::debug("app: discarding the parked keeper (pid {})", parked_.pid);
  parked_.pid = 0;
  close_parked_pipes();
}

void app_controller::impl::close_parked_pipes() {
  parked_.link.close();
  if (parked_.start_fd >= 0) ::close(parked_.start_fd);
  parked_.start_fd = -1;
}

// Reaps a keeper (the running child's or a parked one) and reports its exit.
void app_controller::impl::watch_keeper(pid_t pid) {
  reaper_.watch(
      pid,
      [this, alive = std::weak_ptr<char>(alive_), pid](exit_status status) {
        if (!alive.expired()) on_keeper_exit(pid, status);
      },
      [pid] {
        // The keeper is a zombie, so the group id is still ours. Anything
        // left in the group runs unsupervised from now on (background
        // processes of the command, or the command itself if the keeper was
        // killed alone): it goes too.
        if (::killpg(pid, SIGKILL) != 0 && errno != ESRCH) {
          spdlog::warn("app: cannot clear process group {}: {}", pid, std::strerror(errno));
        }
      });
}

void app_controller::impl::on_keeper_exit(pid_t pid, exit_status status) {
  if (std::erase(reported_keepers_, pid) != 0) return;
  if (pid == child_pid_) {
    on_child_exit(status);
    return;
  }
  if (pid != parked_.pid) return;  // a discarded one
  parked_.pid = 0;
  close_parked_pipes();
  park_retry_after_ = mono_clock::now() + park_retry_delay;
  spdlog::warn("app: the parked keeper (pid {}) {} before it was needed; the next start "
               "begins a keeper of its own",
               pid, status.signal != 0 ? status.describe() : "exited with " + status.describe());
}

// Listens for the running keeper's report of the command's end (see
// baton/keeper.hpp): the moment it reaped the command, a stop may go on,
// without waiting for the keeper's exit and its SIGCHLD.
void app_controller::impl::watch_report() {
  report_watch_ = std::make_unique<process::keeper_report_watch>(
      io_, keeper_.daemon_end(),
      [this, alive = std::weak_ptr<char>(alive_), pid = child_pid_](exit_status status) {
        if (!alive.expired()) on_end_reported(pid, status);
      });
}

void app_controller::impl::close_keeper() {
  report_watch_.reset();
  keeper_.close();
}

void app_controller::impl::on_end_reported(pid_t pid, exit_status status) {
  if (pid != child_pid_) return;
  // The command is reaped. What else runs in its group (its background
  // processes, and the keeper, which has nothing left to do but exit) goes
  // now, as the reaper would do at the keeper's exit: the keeper is not
  // reaped yet, so the group id is still ours. Once SIGKILL is sent, nothing
  // of the group runs another instruction of its own.
  if (::killpg(pid, SIGKILL) != 0 && errno != ESRCH) {
    spdlog::warn("app: cannot clear process group {}: {}", pid, std::strerror(errno));
  }
  reported_keepers_.push_back(pid);
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("handover timing: the keeper reported the command's end at monotonic {} ns",
                  std::chrono::duration_cast<std::chrono::nanoseconds>(
                      mono_clock::now().time_since_epoch())
                      .count());
  }
  on_child_exit(status);
}

void app_controller::impl::start(const app_context& context) {
  if (active_) {
    spdlog::warn("app: start() while the app is still active; ignored");
    return;
  }
  active_ = true;
  stop_requested_ = false;
  on_stop_started_ = false;
  ++generation_;
  start_context_ = context;
  if (!hooks_.on_start.empty()) {
    run_hook("on_start", hooks_.on_start, context, "start", &impl::on_start_finished);
  } else {
    spawn_child_and_report();
  }
}

void app_controller::impl::stop(const app_context& context) {
  if (!active_) {
    post_event([this] {
      auto cb = events_.stopped;
      if (cb) cb();
    });
    return;
  }
  if (stop_requested_) return;  // the first stop() reports for both
  stop_requested_ = true;
  stop_context_ = context;
  if (hook_) {
    // Only on_start can run before stop(); it may already have exited, with
    // its result on the way, in which case terminate() does nothing.
    hook_->terminate();
    return;
  }
  if (child_pid_ != 0) {
    spdlog::info("app: stopping the child: SIGTERM to its process group {} (keeper pid {})",
                 child_pid_, child_pid_);
    signal_child(SIGTERM);
    return;
  }
  continue_stop();
}

void app_controller::impl::kill() {
  if (hook_ && hook_->pid() != 0) hook_->kill();
  if (child_pid_ != 0) {
    spdlog::warn("app: killing the child: SIGKILL to its process group {} (keeper pid {})",
                 child_pid_, child_pid_);
    signal_child(SIGKILL);
  }
}

void app_controller::impl::shutdown() {
  events_ = listener{};
  if (hook_) hook_->kill_and_reap();
  if (child_pid_ != 0) {
    signal_child(SIGKILL);
    reaper_.reap_blocking(child_pid_);
    child_pid_ = 0;
  }
  // Killed already when their report came.
  for (pid_t pid : reported_keepers_) reaper_.reap_blocking(pid);
  reported_keepers_.clear();
  close_keeper();
  if (parked_.pid != 0) {
    ::killpg(parked_.pid, SIGKILL);
    reaper_.reap_blocking(parked_.pid);
    parked_.pid = 0;
  }
  close_parked_pipes();
  for (auto& weak : pumps_) {
    if (auto pump = weak.lock()) pump->close();
  }
}

void app_controller::impl::run_hook(const char* name, const std::vector<std::string>& argv,
                                    const app_context& context, const char* event,
                                    hook_done done) {
  hook_ = std::make_unique<process::hook_runner>(io_, reaper_, name);
  hook_->run(argv, process::app_environment(context, event), hooks_.timeout,
             [this, alive = std::weak_ptr<char>(alive_), done](hook_result result) {
               if (!alive.expired()) (this->*done)(result);
             });
  std::erase_if(pumps_, [](const auto& weak) { return weak.expired(); });
  for (auto& pump : hook_->pumps()) pumps_.push_back(pump);
}

void app_controller::impl::retire_hook(const hook_result& result) {
  // The result is posted, so the runner is not on the call stack here.
  hook_.reset();
  if (result.ok()) {
    spdlog::info("{}: succeeded in {}", result.name, process::format_duration(result.duration));
  } else {
    spdlog::error("{}", result.describe());
  }
  if (events_.hook_finished) {
    post_event([this, name = result.name, duration = result.duration, ok = result.ok()] {
      auto cb = events_.hook_finished;
      if (cb) cb(name, duration, ok);
    });
  }
}

void app_controller::impl::on_start_finished(const hook_result& result) {
  retire_hook(result);
  if (stop_requested_) {
    continue_stop();
    return;
  }
  if (!result.ok()) {
    post_term_event([this, detail = result.describe()] {
      auto cb = events_.start_failed;
      if (cb) cb(detail);
    });
    return;
  }
  spawn_child_and_report();
}

void app_controller::impl::spawn_child_and_report() {
  if (!child_.command.empty() && !launch_child()) return;
  post_term_event([this] {
    auto cb = events_.started;
    if (cb) cb();
  });
}

// Releases the parked keeper's command: one write, then one exec in the
// waiting process. False when it is gone (its pipe is closed).
bool app_controller::impl::release_parked(bool trace) {
  // The command's process first: it is what the takeover waits for. Its
  // keeper gets the deadline right after, as a new keeper would.
  const auto line = process::start_message(start_context_.token, start_context_.reason,
                                           trace ? start_context_.acquire_sent : time_point{});
  if (process::write_lines(parked_.start_fd, line) != 0) {
    discard_parked();
    return false;
  }
  ::close(parked_.start_fd);
  parked_.start_fd = -1;
  report_watch_.reset();
  keeper_ = std::move(parked_.link);
  child_pid_ = parked_.pid;
  parked_.pid = 0;
  send_deadline();
  watch_report();
  if (trace) {
    spdlog::debug("takeover timing: parked keeper released {} after the acquire was sent",
                  microseconds_text(mono_clock::now() - start_context_.acquire_sent));
  }
  spdlog::info("app: child started: {} (keeper pid {}, process group {}; parked)",
               child_.command.front(), child_pid_, child_pid_);
  return true;
}

// Starts the command under a keeper: the parked one when it fits this term,
// else a new one. False after reporting a start failure.
bool app_controller::impl::launch_child() {
  const bool trace = start_context_.acquire_sent != time_point{} &&
                     spdlog::should_log(spdlog::level::debug);
  if (parked_.pid != 0) {
    const auto& parked = parked_.context;
    if (parked.node_id == start_context_.node_id && parked.election == start_context_.election &&
        parked.lease_ttl == start_context_.lease_ttl) {
      if (int error = process::find_executable(child_.command.front(), parked_.env)) {
        report_start_failure("child: " + process::spawn_error_message(child_.command, error));
        return false;
      }
      if (release_parked(trace)) return true;
    } else {
      discard_parked();
    }
  }
  {
    auto env = process::app_environment(start_context_, "start");
    // The keeper would only report these by exiting 127; checking first keeps
    // a missing or non-executable command a start failure, as it always was.
    if (int error = process::find_executable(child_.command.front(), env)) {
      report_start_failure("child: " + process::spawn_error_message(child_.command, error));
      return false;
    }
    report_watch_.reset();
    if (int error = keeper_.open()) {
      report_start_failure(std::string("child: cannot create the keeper's socket pair: ") +
                           std::strerror(error));
      return false;
    }
    process::spawn_request request;
    request.argv = process::keeper_argv(keeper_program_, child_.command,
                                        trace ? start_context_.acquire_sent : time_point{});
    request.env = std::move(env);
    request.keep_fd = keeper_.keeper_end();
    // stdout/stderr stay the daemon's: the child's logs show up as the app's.
    // A keeper program given explicitly (tests) is exec'd; otherwise this very
    // process forks one, which is several milliseconds faster per start.
    auto spawned = fork_keeper_ ? process::fork_keeper(request.argv, request.env, request.keep_fd)
                                : process::spawn_process(request);
    keeper_.close_keeper_end();
    if (!spawned.ok()) {
      keeper_.close();
      report_start_failure("child: cannot start its keeper: " +
                           process::spawn_error_message({keeper_program_}, spawned.error));
      return false;
    }
    child_pid_ = spawned.pid;
    if (trace) {
      spdlog::debug("takeover timing: keeper started {} after the acquire was sent",
                    microseconds_text(mono_clock::now() - start_context_.acquire_sent));
    }
    spdlog::info("app: child started: {} (keeper pid {}, process group {})",
                 child_.command.front(), child_pid_, child_pid_);
    send_deadline();
    watch_keeper(child_pid_);
    watch_report();
  }
  return true;
}

void app_controller::impl::report_start_failure(std::string detail) {
  spdlog::error("{}", detail);
  post_term_event([this, detail = std::move(detail)] {
    auto cb = events_.start_failed;
    if (cb) cb(detail);
  });
}

void app_controller::impl::set_deadline(time_point valid_until) {
  deadline_ = valid_until;
  send_deadline();
}

void app_controller::impl::send_deadline() {
  if (!deadline_ || child_pid_ == 0 || !keeper_.is_open()) return;
  int error = keeper_.send_deadline(*deadline_);
  // EAGAIN: the keeper is behind; the next renewal writes again. EPIPE: it
  // has exited and its reaping is on the way.
  if (error == EAGAIN) {
    spdlog::debug("app: the keeper's socket buffer is full; this deadline is skipped");
  } else if (error != 0 && error != EPIPE) {
    spdlog::warn("app: cannot send the lease deadline to the keeper (pid {}): {}", child_pid_,
                 std::strerror(error));
  }
}

void app_controller::impl::on_child_exit(exit_status status) {
  pid_t pid = child_pid_;
  child_pid_ = 0;
  close_keeper();
  std::string how = status.signal != 0 ? status.describe() : "exited with " + status.describe();
  if (stop_requested_) {
    spdlog::info("app: child (keeper pid {}) {}", pid, how);
    continue_stop();
    return;
  }
  spdlog::warn("app: child (keeper pid {}) {}", pid, how);
  post_term_event([this, status] {
    auto cb = events_.child_exited;
    if (cb) cb(status);
  });
}

void app_controller::impl::continue_stop() {
  // Nothing of this term runs any more: on_stop may start.
  if (!on_stop_started_ && !hooks_.on_stop.empty()) {
    on_stop_started_ = true;
    run_hook("on_stop", hooks_.on_stop, stop_context_, "stop", &impl::on_stop_finished);
    return;
  }
  finish_stop();
}

void app_controller::impl::on_stop_finished(const hook_result& result) {
  retire_hook(result);
  finish_stop();
}

void app_controller::impl::finish_stop() {
  spdlog::info("app: stopped");
  // active() stays true until stopped is delivered, so a start() cannot slip
  // in ahead of it and a late stop() still just waits for it.
  post_event([this] {
    active_ = false;
    auto cb = events_.stopped;
    if (cb) cb();
  });
}

void app_controller::impl::signal_child(int signal) {
  // child_pid_ is cleared before the keeper is reaped, so this never reaches a
  // reused pid; the group id equals the pid (spawn_process made it leader).
  if (child_pid_ != 0 && ::killpg(child_pid_, signal) != 0 && errno != ESRCH) {
    spdlog::warn("app: cannot signal process group {}: {}", child_pid_, std::strerror(errno));
  }
}

void app_controller::set_hooks(hooks_config hooks) { impl_->hooks_ = std::move(hooks); }

app_controller::app_controller(boost::asio::io_context& io, hooks_config hooks,
                               child_config child, listener events,
                               app_controller_options options)
    : impl_(std::make_unique<impl>(io, std::move(hooks), std::move(child), std::move(events),
                                   std::move(options))) {}

app_controller::~app_controller() {
  if (impl_) impl_->shutdown();
}

void app_controller::start(const app_context& context) { impl_->start(context); }
void app_controller::prepare(const app_context& context) { impl_->prepare(context); }
pid_t app_controller::parked_pid() const { return impl_->parked_.pid; }
void app_controller::stop(const app_context& context) { impl_->stop(context); }
void app_controller::kill() { impl_->kill(); }
void app_controller::set_deadline(time_point valid_until) { impl_->set_deadline(valid_until); }
void app_controller::close_keeper_pipe() { impl_->close_keeper(); }
bool app_controller::active() const { return impl_->active_; }
pid_t app_controller::child_pid() const { return impl_->child_pid_; }
pid_t app_controller::command_pid() const {
  const auto children = children_of(impl_->child_pid_);
  return children.size() == 1 ? children.front() : 0;
}
bool app_controller::can_execute(std::string* why) const {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) env.emplace_back(*entry);
  const std::pair<const char*, const std::vector<std::string>*> programs[] = {
      {"child", &impl_->child_.command},
      {"on_start", &impl_->hooks_.on_start},
      {"on_stop", &impl_->hooks_.on_stop}};
  for (const auto& [name, argv] : programs) {
    if (argv->empty()) continue;
    if (int error = process::find_executable(argv->front(), env)) {
      if (why != nullptr) *why = std::string(name) + ": " + process::spawn_error_message(*argv, error);
      return false;
    }
  }
  return true;
}

pid_t app_controller::hook_pid() const { return impl_->hook_ ? impl_->hook_->pid() : 0; }

}  // namespace baton
