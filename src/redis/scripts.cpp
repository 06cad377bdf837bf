// Lua sources of the lease operations. The fencing token must grow across a
// Redis that lost its data, so a missing counter is seeded from the server's
// clock (TIME, as microseconds) before INCR. The seed is built by string
// concatenation: Lua numbers are doubles and tostring() would print 1.7e+15.
#include "scripts.hpp"

#include <boost/uuid/detail/sha1.hpp>
#include <cstdio>

namespace baton::redis_detail {
namespace {

constexpr std::string_view acquire_source = R"lua(
local current = redis.call('GET', KEYS[1])
if current == false or current == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  if redis.call('EXISTS', KEYS[2]) == 0 then
    local now = redis.call('TIME')
    redis.call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
  end
  return {1, redis.call('INCR', KEYS[2])}
end
local token = redis.call('GET', KEYS[2])
if token == false then token = '' end
return {0, current, redis.call('PTTL', KEYS[1]), token}
)lua";

constexpr std::string_view renew_source = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
)lua";

constexpr std::string_view release_source = R"lua(
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  local token = redis.call('GET', KEYS[2]) or ''
  redis.call('PUBLISH', ARGV[2], 'released ' .. ARGV[1] .. ' ' .. token)
  return 1
end
return 0
)lua";

}  // namespace

std::string sha1_hex(std::string_view data) {
  boost::uuids::detail::sha1 hash;
  hash.process_bytes(data.data(), data.size());
  boost::uuids::detail::sha1::digest_type digest;
  hash.get_digest(digest);
  std::string out;
  out.reserve(40);
  for (unsigned int word : digest) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", word);
    out += buf;
  }
  return out;
}

const lua_script& acquire_script() {
  static const lua_script script{acquire_source, sha1_hex(acquire_source)};
  return script;
}

const lua_script& renew_script() {
  static const lua_script script{renew_source, sha1_hex(renew_source)};
  return script;
}

const lua_script& release_script() {
  static const lua_script script{release_source, sha1_hex(release_source)};
  return script;
}

}  // namespace baton::redis_detail
