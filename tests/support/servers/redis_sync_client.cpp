#include "support/servers/redis_sync_client.hpp"

#include <hiredis/hiredis.h>

#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace baton::testing {
namespace {

using namespace std::chrono_literals;

constexpr auto redis_poll_interval = 50ms;

struct context_deleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct reply_deleter {
  void operator()(void* r) const { freeReplyObject(r); }
};
using context_ptr = std::unique_ptr<redisContext, context_deleter>;
using reply_ptr = std::unique_ptr<void, reply_deleter>;

void flatten(const redisReply& r, std::vector<std::string>& out) {
  switch (r.type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.emplace_back(r.str, r.len);
      break;
    case REDIS_REPLY_INTEGER:
      out.push_back(std::to_string(r.integer));
      break;
    case REDIS_REPLY_ARRAY:
      for (std::size_t i = 0; i < r.elements; ++i) {
        if (r.element[i]->type == REDIS_REPLY_NIL)
          out.emplace_back();
        else
          flatten(*r.element[i], out);
      }
      break;
    default:
      break;
  }
}

timeval to_timeval(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

// A connected, authenticated context, or nullptr with `error` set.
context_ptr connect(unsigned short port, const std::string& password,
                    std::chrono::milliseconds timeout, std::string& error) {
  context_ptr c(redisConnectWithTimeout("127.0.0.1", port, to_timeval(timeout)));
  if (!c || c->err) {
    error = c ? c->errstr : "cannot allocate a redis context";
    return nullptr;
  }
  redisSetTimeout(c.get(), to_timeval(timeout));
  if (!password.empty()) {
    const char* argv[] = {"AUTH", password.c_str()};
    const std::size_t lens[] = {4, password.size()};
    reply_ptr reply(redisCommandArgv(c.get(), 2, argv, lens));
    if (!reply) {
      error = c->errstr;
      return nullptr;
    }
    const auto* r = static_cast<const redisReply*>(reply.get());
    if (r->type == REDIS_REPLY_ERROR) {
      error = std::string("AUTH: ") + r->str;
      return nullptr;
    }
  }
  return c;
}

}  // namespace

std::vector<std::string> sync_command(unsigned short port, const std::string& password,
                                      const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout,
                                      const std::string& label) {
  const std::string what = label + " " + (args.empty() ? std::string() : args.front());
  std::string error;
  auto c = connect(port, password, timeout, error);
  if (!c)
    throw std::runtime_error(what + ": cannot connect to port " + std::to_string(port) + ": " +
                             error);
  std::vector<const char*> argv;
  std::vector<std::size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  reply_ptr reply(
      redisCommandArgv(c.get(), static_cast<int>(args.size()), argv.data(), lens.data()));
  if (!reply) throw std::runtime_error(what + ": " + c->errstr);
  const auto* r = static_cast<const redisReply*>(reply.get());
  if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error(what + ": " + r->str);
  std::vector<std::string> out;
  flatten(*r, out);
  return out;
}

std::string info_field(const std::string& info, const std::string& key) {
  const std::string needle = key + ":";
  std::size_t at = 0;
  while ((at = info.find(needle, at)) != std::string::npos) {
    if (at == 0 || info[at - 1] == '\n') {
      const auto begin = at + needle.size();
      const auto end = info.find_first_of("\r\n", begin);
      return info.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
    at += needle.size();
  }
  return {};
}

bool has_flag(const std::string& flags, const std::string& flag) {
  std::stringstream in(flags);
  std::string f;
  while (std::getline(in, f, ','))
    if (f == flag) return true;
  return false;
}

std::string ms_text(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

void poll_until(const std::string& what, std::chrono::milliseconds timeout,
                const std::function<std::string()>& check,
                const std::function<std::string()>& context) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string missing;
  for (;;) {
    missing = check();
    if (missing.empty()) return;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(redis_poll_interval);
  }
  throw std::runtime_error(what + ": not done within " + ms_text(timeout) + " (" + missing +
                           ")\n" + context());
}

}  // namespace baton::testing
