// See fence_writes.hpp.
#include "fence_writes.hpp"

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>

namespace baton::testing {

std::optional<std::string> token_from_environment() {
  const char* raw = std::getenv("BATON_TOKEN");
  const std::string token = raw == nullptr ? "" : raw;
  std::uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc{} || ptr != token.data() + token.size() || value == 0) return std::nullopt;
  return token;
}

postgres_fence_writer::postgres_fence_writer(const std::string& conninfo, bool unfenced)
    : connection_(PQconnectdb(conninfo.c_str()), &PQfinish), unfenced_(unfenced) {}

write_result postgres_fence_writer::write(const std::string& resource, const std::string& token,
                                          std::int64_t seq, const std::string& writer) {
  if (PQstatus(connection_.get()) != CONNECTION_OK) PQreset(connection_.get());
  if (PQstatus(connection_.get()) != CONNECTION_OK) {
    return {write_outcome::failed, PQerrorMessage(connection_.get())};
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
  return {write_outcome::landed, {}};
}

std::optional<write_result> postgres_fence_writer::run(const char* sql,
                                                       const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  std::unique_ptr<PGresult, decltype(&PQclear)> result(
      PQexecParams(connection_.get(), sql, static_cast<int>(values.size()), nullptr, values.data(),
                   nullptr, nullptr, 0),
      &PQclear);
  const auto status = PQresultStatus(result.get());
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return std::nullopt;
  const char* state = PQresultErrorField(result.get(), PG_DIAG_SQLSTATE);
  std::string message = PQresultErrorMessage(result.get());
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  // The fence raises its refusals with its own SQLSTATE.
  const bool refused = state != nullptr && std::string_view(state) == "BATON";
  return write_result{refused ? write_outcome::refused : write_outcome::failed, message};
}

redis_fence_writer::redis_fence_writer(const std::string& address, const std::string& script_path,
                                       bool unfenced)
    : unfenced_(unfenced) {
  const auto colon = address.rfind(':');
  host_ = address.substr(0, colon);
  port_ = colon == std::string::npos ? 6379 : std::atoi(address.c_str() + colon + 1);
  if (!unfenced) {
    std::ifstream in(script_path);
    script_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (script_.empty()) throw std::invalid_argument("cannot read the fence script " + script_path);
  }
}

write_result redis_fence_writer::write(const std::string& resource, const std::string& token,
                                       std::int64_t seq, const std::string& writer) {
  if (!context_ || context_->err != 0) {
    timeval timeout{2, 0};
    context_.reset(redisConnectWithTimeout(host_.c_str(), port_, timeout));
    if (!context_ || context_->err != 0) {
      return {write_outcome::failed, context_ ? context_->errstr : "cannot allocate a context"};
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
  if (!reply) return {write_outcome::failed, context_->errstr};
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string message(reply->str, reply->len);
    const bool refused = message.starts_with("BATONFENCE stale token");
    return {refused ? write_outcome::refused : write_outcome::failed, message};
  }
  return {write_outcome::landed, {}};
}

}  // namespace baton::testing
