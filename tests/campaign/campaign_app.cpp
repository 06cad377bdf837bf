// campaign_app: the app every campaign candidate supervises. It does real
// work through a shipped fence and records what the checker needs:
// - it writes (token, writer:seq) through the fence (fence/redis's script or
//   fence/postgresql's function, as tests/faults/fenced_writer.cpp does),
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
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../worker/event_writer.hpp"

using baton::testing::env_word;
using baton::testing::event_writer;
using baton::testing::now_ns;

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

std::string token_from_environment() {
  const char* raw = std::getenv("BATON_TOKEN");
  const std::string token = raw == nullptr ? "" : raw;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc{} || ptr != token.data() + token.size() || value == 0) {
    std::fprintf(stderr, "campaign_app: BATON_TOKEN is '%s', not a token: not run by baton?\n",
                 token.c_str());
    std::exit(exit_bad_args);
  }
  return token;
}

enum class outcome { landed, refused, failed };

struct write_result {
  outcome what = outcome::failed;
  std::string message;
};

// The PostgreSQL fence: baton_fence_check and the write in one transaction.
class postgres_resource {
 public:
  postgres_resource(const std::string& conninfo, bool unfenced)
      : connection_(PQconnectdb(conninfo.c_str()), &PQfinish), unfenced_(unfenced) {}

  write_result write(const std::string& resource, const std::string& token, std::int64_t seq,
                     const std::string& writer) {
    if (PQstatus(connection_.get()) != CONNECTION_OK) PQreset(connection_.get());
    if (PQstatus(connection_.get()) != CONNECTION_OK) {
      return {outcome::failed, PQerrorMessage(connection_.get())};
    }
    if (auto failed = run("BEGIN", {})) return *failed;
    for (const auto& [sql, params] : std::vector<std::pair<const char*, std::vector<std::string>>>{
             {unfenced_ ? "SELECT $1, $2::bigint" : "SELECT baton_fence_check($1, $2::bigint)",
              {resource, token}},
             {"INSERT INTO fence_history (resource, token, seq, writer) "
              "VALUES ($1, $2::bigint, $3::bigint, $4)",
              {resource, token, std::to_string(seq), writer}}}) {
      if (auto failed = run(sql, params)) {
        run("ROLLBACK", {});
        return *failed;
      }
    }
    if (auto failed = run("COMMIT", {})) return *failed;
    return {outcome::landed, {}};
  }

 private:
  std::optional<write_result> run(const char* sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    std::unique_ptr<PGresult, decltype(&PQclear)> result(
        PQexecParams(connection_.get(), sql, static_cast<int>(values.size()), nullptr,
                     values.data(), nullptr, nullptr, 0),
        &PQclear);
    const auto status = PQresultStatus(result.get());
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return std::nullopt;
    const char* state = PQresultErrorField(result.get(), PG_DIAG_SQLSTATE);
    const bool refused = state != nullptr && std::string_view(state) == "BATON";
    return write_result{refused ? outcome::refused : outcome::failed,
                        PQresultErrorMessage(result.get())};
  }

  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
  bool unfenced_;
};

// The Redis fence: the script checks the token, SETs and appends the history.
class redis_resource {
 public:
  redis_resource(const std::string& address, const std::string& script_path, bool unfenced)
      : unfenced_(unfenced) {
    const auto colon = address.rfind(':');
    host_ = address.substr(0, colon);
    port_ = colon == std::string::npos ? 6379 : std::atoi(address.c_str() + colon + 1);
    std::ifstream in(script_path);
    script_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (script_.empty()) usage_error("cannot read the fence script " + script_path);
  }

  write_result write(const std::string& resource, const std::string& token, std::int64_t seq,
                     const std::string& writer) {
    if (!context_ || context_->err != 0) {
      timeval timeout{2, 0};
      context_.reset(redisConnectWithTimeout(host_.c_str(), port_, timeout));
      if (!context_ || context_->err != 0) {
        return {outcome::failed, context_ ? context_->errstr : "cannot allocate a context"};
      }
    }
    const std::string tag = "app:{" + resource + "}:";
    const std::string value = writer + ":" + std::to_string(seq);
    const std::vector<std::string> argv =
        unfenced_ ? std::vector<std::string>{"RPUSH", tag + "history", token + " " + value}
                  : std::vector<std::string>{"EVAL",        script_,         "3",   tag + "value",
                                             tag + "fence", tag + "history", token, value};
    std::vector<const char*> args;
    std::vector<std::size_t> lengths;
    for (const auto& a : argv) {
      args.push_back(a.data());
      lengths.push_back(a.size());
    }
    std::unique_ptr<redisReply, decltype(&freeReplyObject)> reply(
        static_cast<redisReply*>(redisCommandArgv(context_.get(), static_cast<int>(args.size()),
                                                  args.data(), lengths.data())),
        &freeReplyObject);
    if (!reply) return {outcome::failed, context_->errstr};
    if (reply->type == REDIS_REPLY_ERROR) {
      const std::string message(reply->str, reply->len);
      return {message.starts_with("BATONFENCE stale token") ? outcome::refused : outcome::failed,
              message};
    }
    return {outcome::landed, {}};
  }

 private:
  struct context_free {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  std::string host_;
  int port_ = 6379;
  std::string script_;
  bool unfenced_;
  std::unique_ptr<redisContext, context_free> context_;
};

// The integer after `"key":` in a JSON line, if present.
std::optional<std::int64_t> json_int(std::string_view line, std::string_view key) {
  const std::string quoted = "\"" + std::string(key) + "\":";
  const auto at = line.find(quoted);
  if (at == std::string_view::npos) return std::nullopt;
  const char* begin = line.data() + at + quoted.size();
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(begin, line.data() + line.size(), value);
  if (ec != std::errc{} || ptr == begin) return std::nullopt;
  return value;
}

// The daemon's socket: subscribed, read without blocking.
class lease_feed {
 public:
  bool connect_to(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return false;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (path.size() >= sizeof address.sun_path) return false;
    std::memcpy(address.sun_path, path.data(), path.size());
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      return false;
    }
    // Subscribe first: a renewal after the status snapshot is then seen.
    const std::string_view request = "{\"cmd\":\"subscribe\"}\n{\"cmd\":\"status\"}\n";
    if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return false;
    }
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
    return true;
  }

  int fd() const { return fd_; }

  /// Reads what arrived: the latest validity for this term's work (a
  /// `renewed` with "stopping":true grants none), and whether a stop came.
  bool drain(const std::string& token, std::int64_t& valid_until) {
    std::array<char, 16 * 1024> buffer{};
    for (int reads = 0; reads < 1000; ++reads) {
      const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pending_.append(buffer.data(), static_cast<std::size_t>(n));
    }
    bool stop = false;
    for (auto nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n')) {
      const std::string_view line(pending_.data(), nl);
      const auto line_token = json_int(line, "token");
      const bool ours = line_token && std::to_string(*line_token) == token;
      if (line.find("\"event\":\"stop\"") != std::string_view::npos) {
        stop = stop || ours;
      } else if (ours && line.find("\"stopping\":true") == std::string_view::npos) {
        if (auto v = json_int(line, "valid_until_mono_ns")) valid_until = std::max(valid_until, *v);
      }
      pending_.erase(0, nl + 1);
    }
    return stop;
  }

 private:
  int fd_ = -1;
  std::string pending_;
};

template <typename Resource>
int work(Resource& resource, const options& o, const std::string& token, lease_feed& feed,
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
    if (feed.drain(token, valid_until)) {
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
    if (r.what == outcome::landed) {
      log.write_event("tick " + n + " begun_ns=" + std::to_string(begun));
      failures = 0;
      ++seq;
    } else if (r.what == outcome::refused) {
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
  const std::string token = token_from_environment();
  ::signal(SIGPIPE, SIG_IGN);
  const int fd = ::open(o.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(("campaign_app: " + o.log_path).c_str());
    return baton::testing::exit_log_failed;
  }
  event_writer log(fd, o.name, "campaign_app");
  log.write_event("start");
  log.write_event("env token=" + env_word("BATON_TOKEN") + " node=" + env_word("BATON_NODE_ID"));
  lease_feed feed;
  if (!feed.connect_to(o.socket_path)) {
    log.write_event("failed cannot-connect-to-the-socket");
    return exit_failing;
  }
  if (!o.postgres.empty()) {
    postgres_resource resource(o.postgres, o.unfenced);
    return work(resource, o, token, feed, log);
  }
  redis_resource resource(o.redis, o.script_path, o.unfenced);
  return work(resource, o, token, feed, log);
}
