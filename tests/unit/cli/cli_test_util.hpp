// Test doubles for the client verbs: a real app_socket served on a background
// thread with canned status and resign answers (fake_daemon), stand-ins that
// answer garbage or nothing at all (raw_server), and ways to run
// run_client_command synchronously (run_cli) or on a thread while the test
// watches its output grow (background_cli). Every wait is bounded.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "baton/app_socket.hpp"
#include "baton/cli.hpp"
#include "support/baton_process.hpp"

namespace baton::cli_test {

using json = nlohmann::json;
using namespace std::chrono_literals;

/// An environment made of exactly these variables.
inline environment env_of(std::map<std::string, std::string> vars = {}) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

/// A daemon's socket with scripted answers, served on its own thread.
class fake_daemon {
 public:
  using status_fn = std::function<json(int call)>;
  using resign_fn = std::function<json(const json& request)>;

  explicit fake_daemon(std::string path, json status = {{"node_id", "web-1"}, {"is_leader", true}})
      : path_(std::move(path)), socket_(io_, config_for(path_), [this] { return status_now(); }) {
    set_status(std::move(status));
    socket_.add_command("resign", [this](const json& request, const peer_info&) {
      resign_fn handler;
      {
        std::lock_guard lock(mutex_);
        ++resign_calls_;
        handler = resign_;
      }
      if (!handler) throw std::runtime_error("not the leader: no handler scripted");
      return handler(request);
    });
    socket_.open();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~fake_daemon() { stop(); }
  fake_daemon(const fake_daemon&) = delete;
  fake_daemon& operator=(const fake_daemon&) = delete;

  const std::string& path() const { return path_; }

  void set_status(json status) {
    set_status_fn([status = std::move(status)](int) { return status; });
  }
  /// `fn` gets the number of status requests before this one.
  void set_status_fn(status_fn fn) {
    std::lock_guard lock(mutex_);
    status_ = std::move(fn);
  }
  void set_resign(resign_fn fn) {
    std::lock_guard lock(mutex_);
    resign_ = std::move(fn);
  }
  int resign_calls() {
    std::lock_guard lock(mutex_);
    return resign_calls_;
  }
  int status_calls() {
    std::lock_guard lock(mutex_);
    return status_calls_;
  }

  void publish(json event) {
    boost::asio::post(io_, [this, event = std::move(event)] { socket_.publish(event); });
  }
  /// Closes every client connection (and the listener).
  void close_clients() {
    boost::asio::post(io_, [this] { socket_.close(); });
  }
  void stop() {
    if (!thread_.joinable()) return;
    boost::asio::post(io_, [this] {
      socket_.close();
      io_.stop();
    });
    thread_.join();
  }

 private:
  static socket_config config_for(const std::string& path) {
    socket_config config;
    config.path = path;
    config.mode = 0600;
    return config;
  }

  // Scripts run unlocked: they may call back into this object.
  json status_now() {
    status_fn script;
    int call = 0;
    {
      std::lock_guard lock(mutex_);
      script = status_;
      call = status_calls_++;
    }
    return script(call);
  }

  std::string path_;
  boost::asio::io_context io_;
  app_socket socket_;
  std::mutex mutex_;
  status_fn status_;
  resign_fn resign_;
  int resign_calls_ = 0;
  int status_calls_ = 0;
  std::thread thread_;
};

/// A listening Unix socket that is not baton: it either never accepts (the
/// kernel still completes connects into its backlog, so clients wait for a
/// reply that never comes), or accepts one client and answers every request
/// with `answer`.
class raw_server {
 public:
  explicit raw_server(std::string path, std::optional<std::string> answer = std::nullopt)
      : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.data(), path_.size());
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0 ||
        ::listen(fd_, 8) != 0) {
      throw std::runtime_error("raw_server: cannot listen on " + path_);
    }
    if (answer) thread_ = std::thread([this, a = *answer] { serve(a); });
  }
  ~raw_server() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
  }
  raw_server(const raw_server&) = delete;
  raw_server& operator=(const raw_server&) = delete;

 private:
  void serve(const std::string& answer) {
    int client = -1;
    // 10 s in 50 ms steps, so the destructor is never held up for long.
    for (int i = 0; i < 200 && !stop_ && client < 0; ++i) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) == 1) client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    }
    for (int i = 0; i < 200 && !stop_ && client >= 0; ++i) {
      pollfd p{client, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      char buffer[4096];
      if (::recv(client, buffer, sizeof buffer, 0) <= 0) break;
      if (::send(client, answer.data(), answer.size(), MSG_NOSIGNAL) < 0) break;
    }
    if (client >= 0) ::close(client);
  }

  std::string path_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

/// What one run of run_client_command produced.
struct cli_result {
  std::optional<int> code;
  std::string out;
  std::string err;
};

/// Runs `baton args...` to completion on this thread.
inline cli_result run_cli(std::vector<std::string> args, const environment& env = env_of()) {
  args.insert(args.begin(), "baton");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::ostringstream out;
  std::ostringstream err;
  auto code = run_client_command(static_cast<int>(args.size()), argv.data(), env, out, err);
  return {code, out.str(), err.str()};
}

/// An ostream target that another thread may read while it is written, and
/// wait on.
class shared_output : public std::streambuf {
 public:
  std::string text() {
    std::lock_guard lock(mutex_);
    return text_;
  }
  /// Waits until the text contains `needle`.
  bool wait_for(const std::string& needle, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return grew_.wait_for(lock, timeout, [&] { return text_.find(needle) != std::string::npos; });
  }

 protected:
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) {
      char ch = traits_type::to_char_type(c);
      xsputn(&ch, 1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    {
      std::lock_guard lock(mutex_);
      text_.append(s, static_cast<std::size_t>(n));
    }
    grew_.notify_all();
    return n;
  }

 private:
  std::mutex mutex_;
  std::condition_variable grew_;
  std::string text_;
};

/// `baton args...` running on a thread of its own.
class background_cli {
 public:
  explicit background_cli(std::vector<std::string> args, environment env = env_of())
      : args_(std::move(args)), env_(std::move(env)) {
    args_.insert(args_.begin(), "baton");
    for (const auto& a : args_) argv_.push_back(a.c_str());
    argv_.push_back(nullptr);
    result_ = std::async(std::launch::async, [this] {
      return run_client_command(static_cast<int>(args_.size()), argv_.data(), env_, out_stream_,
                                err_stream_);
    });
  }
  ~background_cli() {
    // A client that is still running at this point is a failed test; a
    // signal ends watch (the only verb that waits without a deadline).
    if (result_.valid() && result_.wait_for(10s) != std::future_status::ready) {
      ADD_FAILURE() << "the client did not finish; sending SIGTERM";
      ::kill(::getpid(), SIGTERM);
    }
  }
  background_cli(const background_cli&) = delete;
  background_cli& operator=(const background_cli&) = delete;

  shared_output& out() { return out_; }
  shared_output& err() { return err_; }
  bool running() { return result_.wait_for(0s) != std::future_status::ready; }

  /// The exit code, or nullopt (and a test failure) if it takes longer than `timeout`.
  std::optional<int> finish(std::chrono::milliseconds timeout = 10s) {
    if (result_.wait_for(timeout) != std::future_status::ready) {
      ADD_FAILURE() << "the client did not finish within " << timeout.count() << "ms";
      return std::nullopt;
    }
    auto code = result_.get();
    EXPECT_TRUE(code.has_value());
    return code.value_or(-1);
  }

 private:
  std::vector<std::string> args_;
  std::vector<const char*> argv_;
  environment env_;
  shared_output out_;
  shared_output err_;
  std::ostream out_stream_{&out_};
  std::ostream err_stream_{&err_};
  std::future<std::optional<int>> result_;
};

/// A temporary directory with socket and file paths in it.
class cli_test : public ::testing::Test {
 protected:
  baton::testing::temp_dir dir{"baton-cli-"};
  std::string socket_path(const std::string& name = "baton.sock") const {
    return (dir / name).string();
  }
  std::string write_file(const std::string& name, const std::string& text) const {
    auto path = (dir / name).string();
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) throw std::runtime_error("cannot write " + path);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    return path;
  }
};

}  // namespace baton::cli_test
