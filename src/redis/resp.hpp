// The only place hiredis is used by the store: redisFormatCommandArgv builds
// binary-safe RESP commands and redisReader parses replies, each hiredis
// object owned by a unique_ptr with its deleter. Socket I/O is not hiredis's
// business here; the connection feeds the reader with bytes it read via asio.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "redis_reply.hpp"

struct redisReader;

namespace baton::redis_detail {

/// RESP encoding of one command; throws std::bad_alloc when hiredis cannot.
std::string format_command(const std::vector<std::string>& args);

/// Incremental reply parser over a byte stream.
class resp_reader {
 public:
  enum class result { reply, need_more, error };

  resp_reader();
  ~resp_reader();
  resp_reader(resp_reader&&) noexcept;
  resp_reader& operator=(resp_reader&&) noexcept;

  /// Appends bytes read from the socket.
  void feed(const char* data, std::size_t size);
  /// Extracts the next complete reply into `out`; on `error` the stream is
  /// unusable and `error_text` says why.
  result next(redis_reply& out, std::string& error_text);

 private:
  struct deleter {
    void operator()(redisReader* r) const;
  };
  std::unique_ptr<redisReader, deleter> reader_;
};

}  // namespace baton::redis_detail
