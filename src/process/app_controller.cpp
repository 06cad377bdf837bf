// app_controller: the phases of one term of the app. start() runs on_start,
// then spawns the child; stop() terminates whichever of the two runs, waits
// for it, then runs on_stop. Everything happens on the io_context's thread;
// at most one of {on_start, child, on_stop} runs at any time.
#include "baton/app_controller.hpp"

#include <signal.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <spdlog/spdlog.h>
#include <utility>

#include "app_environment.hpp"
#include "child_reaper.hpp"
#include "hook_runner.hpp"
#include "spawn.hpp"

namespace baton {

using process::hook_result;

struct app_controller::impl {
  impl(boost::asio::io_context& io, hooks_config hooks, child_config child, listener events)
      : io_(io),
        hooks_(std::move(hooks)),
        child_(std::move(child)),
        events_(std::move(events)),
        reaper_(io) {}

  void start(const app_context& context);
  void stop(const app_context& context);
  void kill();
  void shutdown();

  using hook_done = void (impl::*)(const hook_result&);
  void run_hook(const char* name, const std::vector<std::string>& argv,
                const app_context& context, const char* event, hook_done done);
  void retire_hook(const hook_result& result);
  void on_start_finished(const hook_result& result);
  void spawn_child_and_report();
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
  process::child_reaper reaper_;
  std::unique_ptr<process::hook_runner> hook_;
  pid_t child_pid_ = 0;  // non-zero only while the child is unreaped
  bool active_ = false;
  bool stop_requested_ = false;
  bool on_stop_started_ = false;
  std::uint64_t generation_ = 0;  // one per start()
  app_context start_context_;
  app_context stop_context_;
  std::vector<std::weak_ptr<process::output_pump>> pumps_;
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

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
    spdlog::info("app: stopping child (pid {}): SIGTERM to its process group", child_pid_);
    signal_child(SIGTERM);
    return;
  }
  continue_stop();
}

void app_controller::impl::kill() {
  if (hook_ && hook_->pid() != 0) hook_->kill();
  if (child_pid_ != 0) {
    spdlog::warn("app: killing child (pid {}): SIGKILL to its process group", child_pid_);
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
  if (!child_.command.empty()) {
    process::spawn_request request;
    request.argv = child_.command;
    request.env = process::app_environment(start_context_, "start");
    // stdout/stderr stay the daemon's: the child's logs show up as the app's.
    auto spawned = process::spawn_process(request);
    if (!spawned.ok()) {
      std::string detail = "child: " + process::spawn_error_message(child_.command, spawned.error);
      spdlog::error("{}", detail);
      post_term_event([this, detail] {
        auto cb = events_.start_failed;
        if (cb) cb(detail);
      });
      return;
    }
    child_pid_ = spawned.pid;
    spdlog::info("app: child started: {} (pid {})", child_.command.front(), child_pid_);
    reaper_.watch(child_pid_, [this, alive = std::weak_ptr<char>(alive_)](exit_status status) {
      if (!alive.expired()) on_child_exit(status);
    });
  }
  post_term_event([this] {
    auto cb = events_.started;
    if (cb) cb();
  });
}

void app_controller::impl::on_child_exit(exit_status status) {
  pid_t pid = child_pid_;
  child_pid_ = 0;
  std::string how = status.signal != 0 ? status.describe() : "exited with " + status.describe();
  if (stop_requested_) {
    spdlog::info("app: child (pid {}) {}", pid, how);
    continue_stop();
    return;
  }
  spdlog::warn("app: child (pid {}) {}", pid, how);
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
  // child_pid_ is cleared when the child is reaped, so this never reaches a
  // reused pid; the group id equals the pid (spawn_process made it leader).
  if (child_pid_ != 0 && ::killpg(child_pid_, signal) != 0 && errno != ESRCH) {
    spdlog::warn("app: cannot signal process group {}: {}", child_pid_, std::strerror(errno));
  }
}

app_controller::app_controller(boost::asio::io_context& io, hooks_config hooks,
                               child_config child, listener events)
    : impl_(std::make_unique<impl>(io, std::move(hooks), std::move(child), std::move(events))) {}

app_controller::~app_controller() {
  if (impl_) impl_->shutdown();
}

void app_controller::start(const app_context& context) { impl_->start(context); }
void app_controller::stop(const app_context& context) { impl_->stop(context); }
void app_controller::kill() { impl_->kill(); }
bool app_controller::active() const { return impl_->active_; }
pid_t app_controller::child_pid() const { return impl_->child_pid_; }
pid_t app_controller::hook_pid() const { return impl_->hook_ ? impl_->hook_->pid() : 0; }

}  // namespace baton
