// campaign_app: the app every campaign candidate supervises. It does real
// work through a shipped fence and records what the checker needs:
// - it writes (token, writer:seq) through the fence (fence/redis's script or
//   fence/postgresql's function: tests/worker/fence_writes.hpp),
//   with its term's token from BATON_TOKEN, and stops at once when a write
//   is refused;
// - it follows its daemon's socket (subscribe, then status) only to learn
//   the lease validity it was given, and logs each new one (`lease
//   valid_until_ns=N`). It does not stop itself at that deadline: whether
//   baton stops it in time is what the campaign checks. It waits for its
//   first validity before its first write, as an app that follows the
//   socket would, and stops on a `stop` event, as the docs ask.
//
// Event log lines (tests/worker/event_writer.hpp's format): `start`, `env
// token=T node=N`, `lease valid_until_ns=V`, `tick seq=S begun_ns=B` for a
// write that landed (B: when it was begun), `refused seq=S`, `failed seq=S`,
// `stop reason=stop-event`.
//
// Usage: campaign_app --log FILE --name NAME --socket PATH --resource R
//                     (--postgres CONNINFO | --redis HOST:PORT --script FILE)
//                     [--pause-ms 5] [--unfenced]
// --unfenced writes the same history without the fence: the campaign's
// control, which shows that the checker sees a stale write land.
// Exit codes: 0 after a stop event, 1 the log cannot be written, 2 bad
// arguments or no token, 3 refused, 4 the resource kept failing.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "../worker/daemon_feed.hpp"
#include "../worker/event_writer.hpp"
#include "../worker/fence_writes.hpp"

using baton::testing::daemon_feed;
using baton::testing::env_word;
using baton::testing::event_writer;
using baton::testing::json_int;
using baton::testing::now_ns;
using baton::testing::postgres_fence_writer;
using baton::testing::redis_fence_writer;
using baton::testing::write_outcome;

namespace {

constexpr int exit_bad_args = 2;
constexpr int exit_refused = 3;
constexpr int exit_failing = 4;
constexpr int max_failures_in_a_row = 200;
constexpr std::int64_t ns_per_ms = 1'000'000;
// A bound on the app's life, so a leftover never runs on (a campaign is minutes).
constexpr std::int64_t life_limit_ns = 3600LL * 1000 * ns_per_ms;

struct options {
  std::string log_path, name, socket_path, resource, postgres, redis, script_path;
  int pause_ms = 5;
  bool unfenced = false;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr,
               "campaign_app: %s\nusage: campaign_app --log FILE --name NAME --socket PATH "
               "--resource R (--postgres CONNINFO | --redis HOST:PORT --script FILE) "
               "[--pause-ms 5] [--unfenced]\n",
               message.c_str());
  std::exit(exit_bad_args);
}

options parse_args(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--unfenced") {
      o.unfenced = true;
      continue;
    }
    if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--log") {
      o.log_path = value;
    } else if (arg == "--name") {
      o.name = value;
    } else if (arg == "--socket") {
      o.socket_path = value;
    } else if (arg == "--resource") {
      o.resource = value;
    } else if (arg == "--postgres") {
      o.postgres = value;
    } else if (arg == "--redis") {
      o.redis = value;
    } else if (arg == "--script") {
      o.script_path = value;
    } else if (arg == "--pause-ms") {
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), o.pause_ms);
      if (ec != std::errc{} || ptr != value.data() + value.size() || o.pause_ms < 0 ||
          o.pause_ms > 10'000) {
        usage_error("--pause-ms wants an integer in [0, 10000], got '" + value + "'");
      }
    } else {
      usage_error("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (o.log_path.empty() || o.name.empty() || o.socket_path.empty() || o.resource.empty()) {
    usage_error("--log, --name, --socket and --resource are required");
  }
  if (o.postgres.empty() == o.redis.empty()) usage_error("give one of --postgres and --redis");
  if (!o.redis.empty() && o.script_path.empty()) usage_error("--redis needs --script");
  return o;
}

// Reads what arrived: the latest validity for this term's work (a
// `renewed` with "stopping":true grants none), and whether a stop came.
bool drain(daemon_feed& feed, const std::string& token, std::int64_t& valid_until) {
  bool stop = false;
  for (const auto& line : feed.lines()) {
    const auto line_token = json_int(line, "token");
    const bool ours = line_token && std::to_string(*line_token) == token;
    if (line.find("\"event\":\"stop\"") != std::string::npos) {
      stop = stop || ours;
    } else if (ours && line.find("\"stopping\":true") == std::string::npos) {
      if (auto v = json_int(line, "valid_until_mono_ns")) valid_until = std::max(valid_until, *v);
    }
  }
  return stop;
}

template <typename Resource>
int work(Resource& resource, const options& o, const std::string& token, daemon_feed& feed,
         event_writer& log) {
  const std::int64_t started = now_ns();
  std::int64_t valid_until = 0;
  std::int64_t logged_until = 0;
  int failures = 0;
  std::int64_t seq = 1;
  // Bounded by life_limit_ns; each turn waits up to pause_ms on the socket.
  while (now_ns() - started < life_limit_ns) {
    pollfd pfd{feed.fd(), POLLIN, 0};
    ::poll(&pfd, 1, valid_until == 0 ? 5 : o.pause_ms);
    if (drain(feed, token, valid_until)) {
      log.write_event("stop reason=stop-event");
      return 0;
    }
    if (valid_until > logged_until) {
      log.write_event("lease valid_until_ns=" + std::to_string(valid_until));
      logged_until = valid_until;
    }
    if (valid_until == 0) continue;  // no validity learnt yet: no work
    const std::int64_t begun = now_ns();
    const auto r = resource.write(o.resource, token, seq, o.name);
    const std::string n = "seq=" + std::to_string(seq);
    if (r.what == write_outcome::landed) {
      log.write_event("tick " + n + " begun_ns=" + std::to_string(begun));
      failures = 0;
      ++seq;
    } else if (r.what == write_outcome::refused) {
      log.write_event("refused " + n);
      std::fprintf(stderr, "campaign_app: write refused, stopping: %s\n", r.message.c_str());
      return exit_refused;
    } else {
      log.write_event("failed " + n);
      std::fprintf(stderr, "campaign_app: write failed: %s\n", r.message.c_str());
      if (++failures >= max_failures_in_a_row) return exit_failing;
      ++seq;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse_args(argc, argv);
  const auto token = baton::testing::token_from_environment();
  if (!token) {
    std::fprintf(stderr, "campaign_app: BATON_TOKEN is '%s', not a token: not run by baton?\n",
                 env_word("BATON_TOKEN").c_str());
    return exit_bad_args;
  }
  ::signal(SIGPIPE, SIG_IGN);
  const int fd = ::open(o.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(("campaign_app: " + o.log_path).c_str());
    return baton::testing::exit_log_failed;
  }
  event_writer log(fd, o.name, "campaign_app");
  log.write_event("start");
  log.write_event("env token=" + env_word("BATON_TOKEN") + " node=" + env_word("BATON_NODE_ID"));
  daemon_feed feed;
  if (!feed.connect_to(o.socket_path)) {
    log.write_event("failed cannot-connect-to-the-socket");
    return exit_failing;
  }
  if (!o.postgres.empty()) {
    postgres_fence_writer resource(o.postgres, o.unfenced);
    return work(resource, o, *token, feed, log);
  }
  try {
    redis_fence_writer resource(o.redis, o.script_path, o.unfenced);
    return work(resource, o, *token, feed, log);
  } catch (const std::invalid_argument& e) {
    usage_error(e.what());
  }
}
