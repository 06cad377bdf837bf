// One write through a shipped fence (fence/postgresql/baton_fence.sql or
// fence/redis/baton_fence.lua), as the fence pages tell an app to: the term's
// token with every write, and each write's (token, writer:seq) appended to
// the resource's history in the same transaction or script, so that a test
// reads from the resource itself which writes landed and in what order.
// Shared by the apps that tests supervise (tests/faults/fenced_writer.cpp,
// tests/campaign/campaign_app.cpp). `unfenced` writes the same history
// without the fence: the tests' control.
#pragma once

#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace baton::testing {

enum class write_outcome { landed, refused, failed };

struct write_result {
  write_outcome what = write_outcome::failed;
  std::string message;  ///< the refusal or failure, as the resource said it
};

/// BATON_TOKEN as baton sets it; nullopt when it is missing or not a token.
std::optional<std::string> token_from_environment();

/// The PostgreSQL fence: baton_fence_check and the write in one transaction.
class postgres_fence_writer {
 public:
  postgres_fence_writer(const std::string& conninfo, bool unfenced);
  write_result write(const std::string& resource, const std::string& token, std::int64_t seq,
                     const std::string& writer);

 private:
  // nullopt when the statement succeeded; the refusal or failure otherwise.
  std::optional<write_result> run(const char* sql, const std::vector<std::string>& params);

  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
  bool unfenced_;
};

/// The Redis fence: the script checks the token, SETs and appends the history.
class redis_fence_writer {
 public:
  /// Throws std::invalid_argument when the script cannot be read.
  redis_fence_writer(const std::string& address, const std::string& script_path, bool unfenced);
  write_result write(const std::string& resource, const std::string& token, std::int64_t seq,
                     const std::string& writer);

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

}  // namespace baton::testing
