// fenced_writer: an app that writes to a resource through a baton fence
// (fence/postgresql/baton_fence.sql or fence/redis/baton_fence.lua), as the
// fence pages tell an app to: it takes its term's fencing token from
// BATON_TOKEN, passes it with every write, and stops at once when a write is
// refused, because a newer leader exists.
//
// Every write also appends (token, writer:seq) to the resource's history in
// the same transaction or script, so the test reads from the resource itself
// which writes landed and in what order. The event log (format in
// tests/worker/event_writer.hpp) records what the app saw: `start`, `env`,
// `tick seq=N` for a write that landed, `refused seq=N` for one the fence
// refused (then the app exits 3), `failed seq=N` for any other error.
//
// Usage: fenced_writer --log FILE --name NAME --resource R
//                      (--postgres CONNINFO | --redis HOST:PORT --script FILE)
//                      [--pause-ms 2] [--unfenced]
// --unfenced writes the same history without the fence (the tests' control).
// Exit codes: 2 bad arguments or no token, 3 refused, 4 the resource kept
// failing, 1 the event log could not be written.

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include "../worker/event_writer.hpp"
#include "../worker/fence_writes.hpp"

using baton::testing::env_word;
using baton::testing::event_writer;
using baton::testing::exit_log_failed;
using baton::testing::postgres_fence_writer;
using baton::testing::redis_fence_writer;
using baton::testing::write_outcome;
using baton::testing::write_result;

namespace {

constexpr int exit_bad_args = 2;
constexpr int exit_refused = 3;
constexpr int exit_failing = 4;
constexpr int max_failures_in_a_row = 100;
constexpr auto failure_pause = std::chrono::milliseconds(20);

struct options {
  std::string log_path;
  std::string name;
  std::string resource;
  std::string postgres;
  std::string redis;
  std::string script_path;
  int pause_ms = 2;
  bool unfenced = false;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "fenced_writer: %s\nusage: fenced_writer --log FILE --name NAME --resource R\n"
               "       (--postgres CONNINFO | --redis HOST:PORT --script FILE) [--pause-ms 2] "
               "[--unfenced]\n",
               message.c_str());
  std::exit(exit_bad_args);
}

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--log") {
      o.log_path = value();
    } else if (arg == "--name") {
      o.name = value();
    } else if (arg == "--resource") {
      o.resource = value();
    } else if (arg == "--postgres") {
      o.postgres = value();
    } else if (arg == "--redis") {
      o.redis = value();
    } else if (arg == "--script") {
      o.script_path = value();
    } else if (arg == "--pause-ms") {
      const std::string text = value();
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), o.pause_ms);
      if (ec != std::errc{} || ptr != text.data() + text.size() || o.pause_ms < 0) {
        usage_error("--pause-ms wants a non-negative integer, got '" + text + "'");
      }
    } else if (arg == "--unfenced") {
      o.unfenced = true;
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (o.log_path.empty() || o.name.empty() || o.resource.empty()) {
    usage_error("--log, --name and --resource are required");
  }
  if (o.postgres.empty() == o.redis.empty()) usage_error("give one of --postgres and --redis");
  if (!o.redis.empty() && o.script_path.empty() && !o.unfenced) {
    usage_error("--redis needs --script (fence/redis/baton_fence.lua)");
  }
  return o;
}

template <typename Resource>
int write_loop(Resource& resource, const options& o, const std::string& token, event_writer& log) {
  int failures = 0;
  for (std::int64_t seq = 1;; ++seq) {
    const write_result r = resource.write(o.resource, token, seq, o.name);
    const std::string n = "seq=" + std::to_string(seq);
    if (r.what == write_outcome::landed) {
      log.write_event("tick " + n);
      failures = 0;
    } else if (r.what == write_outcome::refused) {
      // A newer leader has written: stop at once, whatever baton says yet.
      log.write_event("refused " + n);
      std::fprintf(stderr, "fenced_writer: write refused, stopping: %s\n", r.message.c_str());
      return exit_refused;
    } else {
      log.write_event("failed " + n);
      std::fprintf(stderr, "fenced_writer: write failed: %s\n", r.message.c_str());
      if (++failures >= max_failures_in_a_row) return exit_failing;
      std::this_thread::sleep_for(failure_pause);
      continue;
    }
    if (o.pause_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.pause_ms));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse_args(argc, argv);
  const auto token = baton::testing::token_from_environment();
  if (!token) {
    std::fprintf(stderr, "fenced_writer: BATON_TOKEN is '%s', not a token: not run by baton?\n",
                 env_word("BATON_TOKEN").c_str());
    return exit_bad_args;
  }
  const int fd = ::open(o.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(("fenced_writer: " + o.log_path).c_str());
    return exit_log_failed;
  }
  event_writer log(fd, o.name, "fenced_writer");
  log.write_event("start");
  log.write_event("env token=" + env_word("BATON_TOKEN") + " node=" + env_word("BATON_NODE_ID"));
  if (!o.postgres.empty()) {
    postgres_fence_writer resource(o.postgres, o.unfenced);
    return write_loop(resource, o, *token, log);
  }
  try {
    redis_fence_writer resource(o.redis, o.script_path, o.unfenced);
    return write_loop(resource, o, *token, log);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  }
}
