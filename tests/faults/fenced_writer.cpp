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
#include <hiredis/hiredis.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../worker/event_writer.hpp"

using baton::testing::env_word;
using baton::testing::event_writer;
using baton::testing::exit_log_failed;

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

// The term's token, as any app gets it: from the environment baton sets.
std::string token_from_environment() {
  const char* raw = std::getenv("BATON_TOKEN");
  const std::string token = raw == nullptr ? "" : raw;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc{} || ptr != token.data() + token.size() || value == 0) {
    std::fprintf(stderr, "fenced_writer: BATON_TOKEN is '%s', not a token: not run by baton?\n",
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

// One write through the fence: the check and the write in one transaction.
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
    if (!unfenced_) {
      if (auto failed = run("SELECT baton_fence_check($1, $2::bigint)", {resource, token})) {
        run("ROLLBACK", {});
        return *failed;
      }
    }
    if (auto failed = run("INSERT INTO fence_history (resource, token, seq, writer) "
                          "VALUES ($1, $2::bigint, $3::bigint, $4)",
                          {resource, token, std::to_string(seq), writer})) {
      run("ROLLBACK", {});
      return *failed;
    }
    if (auto failed = run("COMMIT", {})) return *failed;
    return {outcome::landed, {}};
  }

 private:
  // nullopt when the statement succeeded; the refusal or failure otherwise.
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
    std::string message = PQresultErrorMessage(result.get());
    while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
      message.pop_back();
    const bool refused = state != nullptr && std::string_view(state) == "BATON";
    return write_result{refused ? outcome::refused : outcome::failed, message};
  }

  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
  bool unfenced_;
};

// One write through the fence script: check, SET and history in one EVAL.
class redis_resource {
 public:
  redis_resource(const std::string& address, const std::string& script_path, bool unfenced)
      : unfenced_(unfenced) {
    const auto colon = address.rfind(':');
    host_ = address.substr(0, colon);
    port_ = colon == std::string::npos ? 6379 : std::stoi(address.substr(colon + 1));
    if (!unfenced) {
      std::ifstream in(script_path);
      script_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      if (script_.empty()) usage_error("cannot read the fence script " + script_path);
    }
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
    std::vector<std::string> argv;
    if (unfenced_) {
      argv = {"RPUSH", tag + "history", token + " " + value};
    } else {
      argv = {"EVAL", script_, "3", tag + "value", tag + "fence", tag + "history", token, value};
    }
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
      const bool refused = message.starts_with("BATONFENCE stale token");
      return {refused ? outcome::refused : outcome::failed, message};
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

template <typename Resource>
int write_loop(Resource& resource, const options& o, const std::string& token, event_writer& log) {
  int failures = 0;
  for (std::int64_t seq = 1;; ++seq) {
    const write_result r = resource.write(o.resource, token, seq, o.name);
    const std::string n = "seq=" + std::to_string(seq);
    if (r.what == outcome::landed) {
      log.write_event("tick " + n);
      failures = 0;
    } else if (r.what == outcome::refused) {
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
  const std::string token = token_from_environment();
  const int fd = ::open(o.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::perror(("fenced_writer: " + o.log_path).c_str());
    return exit_log_failed;
  }
  event_writer log(fd, o.name, "fenced_writer");
  log.write_event("start");
  log.write_event("env token=" + env_word("BATON_TOKEN") + " node=" + env_word("BATON_NODE_ID"));
  if (!o.postgres.empty()) {
    postgres_resource resource(o.postgres, o.unfenced);
    return write_loop(resource, o, token, log);
  }
  redis_resource resource(o.redis, o.script_path, o.unfenced);
  return write_loop(resource, o, token, log);
}
