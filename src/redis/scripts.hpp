// The three Lua scripts behind acquire, renew and release, each with its SHA1
// for EVALSHA. Running each operation as one script makes it one atomic round
// trip: no other client can slip between the check and the write.
#pragma once

#include <string>
#include <string_view>

namespace baton::redis_detail {

struct lua_script {
  std::string_view source;
  std::string sha1;  ///< lowercase hex, as SCRIPT LOAD would answer
};

/// KEYS: lease, token. ARGV: our value, ttl ms.
/// Returns {1, token} or {0, holder value, PTTL ms, holder token or ""}.
const lua_script& acquire_script();
/// KEYS: lease. ARGV: our value, ttl ms. Returns 1 (renewed) or 0 (not ours).
const lua_script& renew_script();
/// KEYS: lease, token. ARGV: our value, channel. Returns 1 (deleted and
/// announced as "released <value> <token>") or 0 (not ours).
const lua_script& release_script();

/// SHA1 of `data` as 40 lowercase hex digits.
std::string sha1_hex(std::string_view data);

}  // namespace baton::redis_detail
