// hiredis glue: command formatting and reply parsing, converting hiredis's
// redisReply trees into owned redis_reply values at once.
#include "resp.hpp"

#include <hiredis/hiredis.h>

#include <new>

namespace baton::redis_detail {
namespace {

struct reply_deleter {
  void operator()(void* r) const { freeReplyObject(r); }
};

struct command_deleter {
  void operator()(char* c) const { redisFreeCommand(c); }
};

redis_reply convert(const redisReply& r) {
  switch (r.type) {
    case REDIS_REPLY_STRING:
      return redis_reply::string(std::string(r.str, r.len));
    case REDIS_REPLY_STATUS:
      return redis_reply::status(std::string(r.str, r.len));
    case REDIS_REPLY_ERROR:
      return redis_reply::error(std::string(r.str, r.len));
    case REDIS_REPLY_INTEGER:
      return redis_reply::integer_reply(r.integer);
    case REDIS_REPLY_ARRAY: {
      std::vector<redis_reply> elements;
      elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) elements.push_back(convert(*r.element[i]));
      return redis_reply::array(std::move(elements));
    }
    default:
      return redis_reply::nil();
  }
}

}  // namespace

std::string format_command(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<std::size_t> argvlen;
  argv.reserve(args.size());
  argvlen.reserve(args.size());
  for (const auto& a : args) {
    argv.push_back(a.data());
    argvlen.push_back(a.size());
  }
  char* raw = nullptr;
  const int len =
      redisFormatCommandArgv(&raw, static_cast<int>(args.size()), argv.data(), argvlen.data());
  std::unique_ptr<char, command_deleter> owned(raw);
  if (len < 0 || raw == nullptr) throw std::bad_alloc();
  return std::string(raw, static_cast<std::size_t>(len));
}

void resp_reader::deleter::operator()(redisReader* r) const { redisReaderFree(r); }

resp_reader::resp_reader() : reader_(redisReaderCreate()) {
  if (!reader_) throw std::bad_alloc();
}

resp_reader::~resp_reader() = default;
resp_reader::resp_reader(resp_reader&&) noexcept = default;
resp_reader& resp_reader::operator=(resp_reader&&) noexcept = default;

void resp_reader::feed(const char* data, std::size_t size) {
  // Only fails on out-of-memory or a reader already in error; next() reports the latter.
  redisReaderFeed(reader_.get(), data, size);
}

resp_reader::result resp_reader::next(redis_reply& out, std::string& error_text) {
  void* raw = nullptr;
  if (redisReaderGetReply(reader_.get(), &raw) != REDIS_OK) {
    error_text = reader_->errstr[0] != '\0' ? reader_->errstr : "invalid RESP";
    return result::error;
  }
  if (raw == nullptr) return result::need_more;
  std::unique_ptr<void, reply_deleter> owned(raw);
  out = convert(*static_cast<const redisReply*>(raw));
  return result::reply;
}

}  // namespace baton::redis_detail
