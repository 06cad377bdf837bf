// Lua sources of the lease operations. The fencing token must grow across a
// Redis that lost its data, so a missing counter is seeded from the server's
// clock (TIME, as microseconds) before INCR. The seed is built by string
// concatenation: Lua numbers are doubles and tostring() would print 1.7e+15.
//
// A missing counter also means the lease key may have vanished with the data
// while its holder still works: the acquire script then refuses to acquire
// and sets the fence key for one ttl instead, and every acquire answers busy
// while the fence exists. The fence is only ever lengthened, never shortened,
// and a fence without expiry (set by hand) is left alone: an operator's hold.
//
// A lease key can also vanish alone, before its time: an operator's DEL, or
// eviction under a volatile-* maxmemory policy, which picks keys with a TTL.
// Its holder would work on until its next renewal while a candidate took the
// free key. So every grant and renewal also writes the holder record, a key
// without a TTL holding "<expiry in the server's ms> <value>"; an acquire
// that finds the lease key gone while the record says it should still live
// answers "vanished" and holds back until that expiry. Release deletes both.
//
// A switchover hands the lease over (release_source with a reservation): the
// lease key then holds `(reserved) <to node> <by node>` for the window, a
// value no lease can have (a node id holds neither parentheses nor spaces).
// Its target's acquire takes it as a free lease, a new term; anyone else's
// answers held, naming it; renewals, the Redlock take and release see a value
// not theirs. The hand-over deletes the holder record as a release does, so
// the lease key that expires with the window is free, not "vanished".
//
// Every acquire attempt and renewal also registers its candidate (node id,
// priority, process nonce) in the candidates key (BATON_LUA_REGISTER), as
// part of the script it runs anyway: a standby costs no call of its own. An
// acquire that is refused counts, from the lines it has just read, the live
// candidates that outrank it (BATON_LUA_OUTRANKING), for the same price.
//
// A new term is announced on the events channel (`acquired <value> <token>`)
// so that standbys, and a node cooling down after a resign, learn the new
// leader at once rather than at their next attempt. With redis.replica_ack
// the script checks first that the master has the replicas to acknowledge the
// grant (see BATON_LUA_REPLICAS), and leaves the announcement to the client,
// which makes it only after WAIT counted them: a grant given back for want of
// acknowledgement is released without an announcement either, so candidates
// that cannot lead do not wake each other.
//
// The fragments are in lua_parts.hpp, the acquire script in
// acquire_script.cpp, the others here.
#include "scripts.hpp"

#include <boost/uuid/detail/sha1.hpp>
#include <cstdio>
#include <string>

#include "lua_parts.hpp"

namespace baton::redis_detail {
namespace {

// After Redis's run_id changed (a restart or a failover, maybe to a replica
// that had the counter but not the latest lease): fence for one ttl, and lift
// the counter to at least the server's clock in microseconds, so that tokens
// stay above any a lost newer term may have handed out.
constexpr std::string_view fence_source = BATON_LUA_CALL R"lua(
local now = call('TIME')
local now_us = now[1] .. string.format('%06d', tonumber(now[2]))
local counter = tonumber(call('GET', KEYS[1]) or '')
if counter == nil or counter < tonumber(now_us) then
  call('SET', KEYS[1], now_us)
end
local left = call('PTTL', KEYS[2])
if left ~= -1 and left < tonumber(ARGV[1]) then
  call('SET', KEYS[2], ARGV[2], 'PX', ARGV[1])
end
return call('PTTL', KEYS[2])
)lua";

// What a replicated store's connection runs on reaching a server whose
// run_id differs from the one it talked to before, ahead of every queued
// command: the acquire script's epoch check (BATON_LUA_SWITCH), so that a
// promotion that kept every acknowledged write is not held back, and the
// fence otherwise, as the single-server run_id check sets it.
constexpr std::string_view switch_source = BATON_LUA_CALL BATON_LUA_SWITCH R"lua(
local ttl = tonumber(ARGV[1])
local lost = call('EXISTS', KEYS[1]) == 0
local mark = nil
if ARGV[2] == 'all' then mark = KEYS[4] end
local acked = nil
if ARGV[3] == 'acked' then acked = KEYS[5] end
local switched = server_switch({token = KEYS[1], fence = KEYS[2], epoch = KEYS[3], mark = mark,
                                acked = acked}, ttl, lost)
if switched == 'promoted' then return {'promoted', call('PTTL', KEYS[2])} end
if switched == nil then return {'same', call('PTTL', KEYS[2])} end
-- No record of the writer, or a counter gone with the data: fence as the
-- single-server check does.
local now = call('TIME')
local now_us = now[1] .. string.format('%06d', tonumber(now[2]))
local counter = tonumber(call('GET', KEYS[1]) or '')
if counter == nil or counter < tonumber(now_us) then call('SET', KEYS[1], now_us) end
local left = call('PTTL', KEYS[2])
if left ~= -1 and left < ttl then call('SET', KEYS[2], 'run_id changed', 'PX', ttl) end
return {switched, call('PTTL', KEYS[2])}
)lua";

// The Redlock store's second round: the token chosen from the granting
// masters' counters is written back where the lease is still ours, only
// upward. Counters are compared as decimal strings (length, then digits):
// Lua's doubles would round counters above 2^53. The term key (KEYS[3])
// keeps the largest token a term wrote here: unlike the counter, a reset
// never lifts it, so a take can tell a newer term from a lifted counter.
// The granted key (KEYS[4]) no longer names us once our token is here.
// lease.failsafe peers (ARGV[5] 'failsafe', then the list number, our peer
// address and the list; the record KEYS[5]): the token is only known now,
// so this is the step that writes the new term's record, in the same
// script as the token and only where the lease is ours.
constexpr std::string_view write_back_source = BATON_LUA_CALL BATON_LUA_FAILSAFE R"lua(
if call('GET', KEYS[1]) ~= ARGV[1] then return {0, 'lease not ours'} end
local counter = call('GET', KEYS[2])
if counter == false then return {0, 'token counter missing'} end
if #counter > #ARGV[2] or (#counter == #ARGV[2] and counter >= ARGV[2]) then
  return {0, 'token counter already at ' .. counter}
end
call('SET', KEYS[2], ARGV[2])
call('SET', KEYS[3], ARGV[2])
if KEYS[4] and call('GET', KEYS[4]) == ARGV[1] then call('DEL', KEYS[4]) end
if ARGV[5] == 'failsafe' and KEYS[5] then
  call('SET', KEYS[5], record_text(ARGV[2], ARGV[6], ARGV[1], ARGV[7], ARGV[8]))
end
if ARGV[4] == '1' then
  call('PUBLISH', ARGV[3], 'acquired ' .. ARGV[1] .. ' ' .. ARGV[2])
end
return {1, ''}
)lua";

// The Redlock renewal: extend our lease where it is ours (1); where the
// lease is free, the master is not fenced, and no term newer than ours wrote
// its token there (the term key, KEYS[5]), take it too (2), so that a leader
// that won a bare majority (a contested start, a master that was restarted
// or fenced) comes to hold every master again and survives the next loss.
// The counter is raised to our token, never lowered: a master that lost its
// data lifted it to its clock, above our token, and that lift is what keeps
// later tokens above any its lost terms handed out. A take does not count as
// a renewal of this round: only a key that was ours when the renewal ran
// there proves that nobody else held it meanwhile. A hand-over's reservation
// is a value, not a free key: never taken. lease.failsafe peers (ARGV[4]
// 'failsafe', then the list number, our peer address and the list; the
// record KEYS[6]): where the lease is ours the list is written as the renew
// script writes it (only above the record's number), and a take writes the
// record of our term, as a grant's write-back would have.
constexpr std::string_view renew_or_take_source = BATON_LUA_CALL BATON_LUA_FAILSAFE R"lua(
local current = call('GET', KEYS[1])
local now = call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local record = string.format('%.0f', now_ms + tonumber(ARGV[2])) .. ' ' .. ARGV[1]
local failsafe_key = ARGV[4] == 'failsafe' and KEYS[6] or nil
if current == ARGV[1] then
  call('SET', KEYS[4], record)
  if failsafe_key then write_record(failsafe_key, ARGV[3], ARGV[5], ARGV[1], ARGV[6], ARGV[7]) end
  return call('PEXPIRE', KEYS[1], ARGV[2])
end
if current ~= false or call('EXISTS', KEYS[3]) == 1 then return 0 end
local counter = call('GET', KEYS[2])
if counter == false then return 0 end
local term = call('GET', KEYS[5])
if term and (#term > #ARGV[3] or (#term == #ARGV[3] and term > ARGV[3])) then return 0 end
-- A key that vanished early is not free: its holder may work on.
local old = call('GET', KEYS[4])
local space = old and string.find(old, ' ', 1, true)
if space and string.sub(old, space + 1) ~= ARGV[1] and
   tonumber(string.sub(old, 1, space - 1)) > now_ms then
  return 0
end
call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if #counter < #ARGV[3] or (#counter == #ARGV[3] and counter < ARGV[3]) then
  call('SET', KEYS[2], ARGV[3])
end
call('SET', KEYS[5], ARGV[3])
call('SET', KEYS[4], record)
if failsafe_key then write_record(failsafe_key, ARGV[3], ARGV[5], ARGV[1], ARGV[6], ARGV[7]) end
return 2
)lua";

// The registry's live lines (BATON_LUA_REGISTER), read only: a flat array,
// eight fields per line (BATON_LUA_LIST).
constexpr std::string_view candidates_source = BATON_LUA_CALL BATON_LUA_LINE BATON_LUA_LIST R"lua(
local text = call('GET', KEYS[1]) or ''
local now = call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local out = {}
for line in string.gmatch(text, '[^\n]+') do list_line(out, line, now_ms) end
return out
)lua";

// A cool-down after giving the lease up: the caller's own line (its node and
// nonce) gains " <end ms>", now + ARGV[3] ms, in the server's clock; every
// other line, and the key's expiry, stay as they were. Nothing when the line
// has lapsed or another process wrote it. Through redis.pcall, as the
// registry: a preference, never an error for the lease's sake.
constexpr std::string_view cooldown_source = BATON_LUA_LINE R"lua(
local text = redis.pcall('GET', KEYS[1])
if type(text) ~= 'string' then return 0 end
local nonce = string.match(ARGV[2], ':(%w+)$') or '-'
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local lines, found = {}, 0
for line in string.gmatch(text, '[^\n]+') do
  local name, prio, began, ends, by, rest = string.match(line, registry_line)
  if name == ARGV[1] and nonce_of(by) == nonce and tonumber(ends) > now_ms then
    -- lease.failsafe's fields stay as they were.
    local tail = string.match(rest, '^ %d+( %S+ %d+ %S+ %d+)$') or ''
    line = name .. ' ' .. prio .. ' ' .. began .. ' ' .. ends .. ' ' .. by .. ' ' ..
           string.format('%.0f', now_ms + tonumber(ARGV[3])) .. tail
    found = 1
  end
  lines[#lines + 1] = line
end
if found == 0 then return 0 end
local left = redis.pcall('PTTL', KEYS[1])
if type(left) ~= 'number' or left <= 0 then return 0 end
redis.pcall('SET', KEYS[1], table.concat(lines, '\n'), 'PX', left)
return 1
)lua";

// A candidate that may not lead (drained, never leading) looks instead of
// trying: KEYS the candidates, lease and token keys; ARGV our node id, our
// lease value (its nonce), the registration ("<priority>/<card>"), the ttl
// in ms, and "1" to register (lease.failsafe peers: "0"). Answers {the
// lease's value ("" = none), the token counter ("0" = none)}.
constexpr std::string_view standby_source = BATON_LUA_REGISTER R"lua(
if ARGV[5] == '1' then
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  register(KEYS[1], ARGV[1], ARGV[2], ARGV[3], now_ms, tonumber(ARGV[4]), nil)
end
return {redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[3]) or '0'}
)lua";

// `baton init-store`: the counter, seeded as the acquire script seeds a
// missing one, but without the fence: the operator says nothing was lost.
constexpr std::string_view create_record_source = BATON_LUA_CALL R"lua(
if call('EXISTS', KEYS[1]) == 1 then return 0 end
local now = call('TIME')
call('SET', KEYS[1], now[1] .. string.format('%06d', tonumber(now[2])))
return 1
)lua";

constexpr std::string_view renew_source =
    BATON_LUA_CALL BATON_LUA_REPLICAS BATON_LUA_REGISTER BATON_LUA_LIST BATON_LUA_FAILSAFE R"lua(
-- ARGV[5]: the replica requirement ('' or absent = none). lease.failsafe
-- peers: ARGV[6] 'failsafe', then the term's token, the list number, our
-- peer address and the list; the record is the last key. ARGV[11] 'list':
-- a renewal answers {its answer, the registry's live lines as the
-- candidates script lists them}, so that a leader lists the candidates with
-- every renewal at no call of its own.
local required = ARGV[5] and ARGV[5] ~= ''
local nkeys = #KEYS
local failsafe_key = nil
if ARGV[6] == 'failsafe' then
  failsafe_key = KEYS[nkeys]
  nkeys = nkeys - 1
end
if call('GET', KEYS[1]) == ARGV[1] then
  local needed = 0
  local now = call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  local tail = nil
  if failsafe_key then tail = failsafe_tail(ARGV[9], '0', '-', '0', now_ms) end
  local others, own = register(KEYS[3], ARGV[3], ARGV[1], ARGV[4], now_ms, tonumber(ARGV[2]), tail)
  local function answer(reply)
    if ARGV[11] ~= 'list' or own == nil then return reply end
    local listed = {}
    for _, o in ipairs(others) do list_line(listed, o[4], now_ms) end
    list_line(listed, own, now_ms)
    return {reply, listed}
  end
  if required then
    -- Too few replicas: the lease is not extended (the renewal would not
    -- count anyway), so it lapses when its holder believes it does.
    local connected, replid
    connected, needed, replid = replicas(KEYS[4], ARGV[5])
    if connected < needed then return {2, connected, needed} end
    if nkeys >= 5 then call('SET', KEYS[5], replid .. ' ' .. string.format('%.0f', now_ms)) end
  end
  call('SET', KEYS[2], string.format('%.0f', now_ms + tonumber(ARGV[2])) .. ' ' .. ARGV[1])
  if failsafe_key then write_record(failsafe_key, ARGV[7], ARGV[8], ARGV[1], ARGV[9], ARGV[10]) end
  local extended = call('PEXPIRE', KEYS[1], ARGV[2])
  if required then return answer({extended, 0, needed}) end
  return answer(extended)
end
if required then return {0, 0, 0} end
return 0
)lua";

// lease.failsafe peers: a leader that ran on its peers' confirmations takes
// its term up again when the store is back (F8). KEYS: lease, token,
// holder record, candidates, the failsafe record, and with a replica
// requirement the replicas key and (Sentinel with "all") the acked key.
// ARGV: our value, ttl ms, our node id, our priority, the replica
// requirement ("" = none), the term's token, the list number, our peer
// address, the list, the channel and the publish command. Only when nobody
// else holds the lease and the record holds our unreleased term, or none
// (the store lost its data): the lease is ours again with the same value,
// the counter at least our token (seeded from TIME as a missing one always
// is), the holder record and the record written as a renewal writes them,
// and a lease that was gone announced as our term. The fence does not stop
// it: it holds back those who would start, and our app runs already. A
// Redlock master (ARGV[12] 'term': its term key is the last key) also lifts
// the term key to at least our token, as the term's write-back did, so that
// an older term's take still finds a newer term there.
// Answers as the renew script.
constexpr std::string_view resume_source =
    BATON_LUA_CALL BATON_LUA_REPLICAS BATON_LUA_REGISTER BATON_LUA_FAILSAFE R"lua(
local required = ARGV[5] ~= ''
local function lost()
  if required then return {0, 0, 0} end
  return 0
end
local current = call('GET', KEYS[1])
if current and current ~= ARGV[1] then return lost() end
local token, _, value = record_head(call('GET', KEYS[5]))
if token and (value ~= ARGV[1] or token ~= ARGV[6]) then return lost() end
local now = call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
register(KEYS[4], ARGV[3], ARGV[1], ARGV[4], now_ms, tonumber(ARGV[2]),
         failsafe_tail(ARGV[8], '0', '-', '0', now_ms))
local needed = 0
if required then
  local connected, replid
  connected, needed, replid = replicas(KEYS[6], ARGV[5])
  if connected < needed then return {2, connected, needed} end
  if KEYS[7] then call('SET', KEYS[7], replid .. ' ' .. string.format('%.0f', now_ms)) end
end
call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
call('SET', KEYS[3], string.format('%.0f', now_ms + tonumber(ARGV[2])) .. ' ' .. ARGV[1])
local counter = call('GET', KEYS[2])
if counter == false then
  counter = now[1] .. string.format('%06d', tonumber(now[2]))
  call('SET', KEYS[2], counter)
end
if above(ARGV[6], counter) then call('SET', KEYS[2], ARGV[6]) end
write_record(KEYS[5], ARGV[6], ARGV[7], ARGV[1], ARGV[8], ARGV[9])
if ARGV[12] == 'term' then
  local term = call('GET', KEYS[#KEYS])
  if term == false or above(ARGV[6], term) then call('SET', KEYS[#KEYS], ARGV[6]) end
end
if current == false then
  call(ARGV[11], ARGV[10], 'acquired ' .. ARGV[1] .. ' ' .. ARGV[6])
end
if required then return {1, 0, needed} end
return 1
)lua";

constexpr std::string_view release_source = BATON_LUA_CALL R"lua(
if call('GET', KEYS[1]) == ARGV[1] then
  call('DEL', KEYS[1], KEYS[3])
  -- The record of lease.failsafe peers, when given: the term is released.
  if KEYS[4] then call('DEL', KEYS[4]) end
  -- A hand-over (ARGV[5], a node id without white space; ARGV[6] > 0 ms):
  -- the freed lease key holds the reservation for the window, which only
  -- ARGV[5]'s acquire takes (acquire_source). The holder record is gone as
  -- after any release: the reservation's expiry frees the lease for all.
  local window = tonumber(ARGV[6] or '')
  if ARGV[5] and ARGV[5] ~= '' and window and window > 0 then
    call('SET', KEYS[1], '(reserved) ' .. ARGV[5] .. ' ' .. ARGV[7], 'PX', ARGV[6])
  end
  -- ARGV[4]: the released term's token when the caller knows it better
  -- than this server's counter (a Redlock master may have missed its write-back).
  local token = ARGV[4]
  if token == nil or token == '' then token = call('GET', KEYS[2]) or '' end
  -- No channel: a grant given back ends silently, as it began (a Redlock
  -- candidate's refused acquire, or a grant whose replicas never acknowledged
  -- it): a release announced would wake standbys for nothing.
  if ARGV[2] ~= '' then
    call(ARGV[3] or 'PUBLISH', ARGV[2], 'released ' .. ARGV[1] .. ' ' .. token)
  end
  return 1
end
return 0
)lua";

}  // namespace

std::string hand_over_target_problem(std::string_view to_node) {
  for (const char c : to_node) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f) {
      // Not quoted back: the id is what the log must not carry.
      return "hand over: the target's node id holds white space or a control character";
    }
  }
  return {};
}

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

const lua_script& fence_script() {
  static const lua_script script{fence_source, sha1_hex(fence_source)};
  return script;
}

const lua_script& switch_script() {
  static const lua_script script{switch_source, sha1_hex(switch_source)};
  return script;
}

const lua_script& renew_script() {
  static const lua_script script{renew_source, sha1_hex(renew_source)};
  return script;
}

const lua_script& candidates_script() {
  static const lua_script script{candidates_source, sha1_hex(candidates_source)};
  return script;
}

const lua_script& cooldown_script() {
  static const lua_script script{cooldown_source, sha1_hex(cooldown_source)};
  return script;
}

std::string registration_argument(int priority, const std::string& card) {
  return std::to_string(priority) + (card.empty() ? std::string() : "/" + card);
}

const lua_script& standby_script() {
  static const lua_script script{standby_source, sha1_hex(standby_source)};
  return script;
}

const lua_script& create_record_script() {
  static const lua_script script{create_record_source, sha1_hex(create_record_source)};
  return script;
}

const lua_script& renew_or_take_script() {
  static const lua_script script{renew_or_take_source, sha1_hex(renew_or_take_source)};
  return script;
}

const lua_script& write_back_script() {
  static const lua_script script{write_back_source, sha1_hex(write_back_source)};
  return script;
}

const lua_script& resume_script() {
  static const lua_script script{resume_source, sha1_hex(resume_source)};
  return script;
}

const lua_script& release_script() {
  static const lua_script script{release_source, sha1_hex(release_source)};
  return script;
}

}  // namespace baton::redis_detail
