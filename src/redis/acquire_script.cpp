// The acquire script: the one atomic step that grants a free lease (or ours
// again), refuses a held, reserved, fenced or vanished one, registers the
// candidate and, with lease.failsafe peers, writes or answers the record.
// How the pieces fit is said at the top of scripts.cpp.
#include <string_view>

#include "lua_parts.hpp"
#include "scripts.hpp"

namespace baton::redis_detail {
namespace {

constexpr std::string_view acquire_source =
    BATON_LUA_CALL BATON_LUA_REPLICAS BATON_LUA_SWITCH BATON_LUA_REGISTER
        BATON_LUA_OUTRANKING BATON_LUA_FRONT_RUNNERS BATON_LUA_FAILSAFE
            BATON_LUA_FAILSAFE_HOLD R"lua(
-- ARGV[10], when given: how many front runners a large election has, and
-- ARGV[11] above how many listening candidates an election is large; the
-- front key is KEYS[6].
local front_wanted = tonumber(ARGV[10] or '')
local large_above = tonumber(ARGV[11] or '')
-- A Redlock master ('grant') takes no front runners: its KEYS[6] is the
-- granted key instead, the value it granted whose token is not written back.
local granted_key = ARGV[4] == 'grant' and KEYS[6] or nil
local front_key = not granted_key and front_wanted and large_above and KEYS[6]
-- lease.failsafe peers: ARGV[13] 'failsafe', then whether the caller may win
-- ('1'; '0' registers only), the highest token it cleared, its peer address,
-- its promise (token, leader, ms left; '0', '-', '0' for none), the list
-- number and the list ("<node> <address>" lines) a grant writes; the
-- record is the last key. The keys before it are as without the mode.
local nkeys = #KEYS
local failsafe_key = nil
if ARGV[13] == 'failsafe' then
  failsafe_key = KEYS[nkeys]
  nkeys = nkeys - 1
end
local mark_key = nkeys >= 8 and KEYS[8] or nil
local acked_key = nkeys >= 9 and KEYS[9] or nil
local reset = false
local reset_why = 'reset'
if call('EXISTS', KEYS[2]) == 0 then
  local now = call('TIME')
  call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
  local left = call('PTTL', KEYS[3])
  if left ~= -1 and left < tonumber(ARGV[2]) then
    call('SET', KEYS[3], 'token counter missing', 'PX', ARGV[2])
  end
  reset = true
end
if ARGV[5] == 'replicated' then
  -- The record remembers which server wrote it. Another server's run_id
  -- means a failover promoted a replica (or the server came back from its
  -- files): the old master's last writes, a lease among them, may be lost,
  -- and its holder may still work, so acquisitions are held back for one
  -- ttl, unless this server shows it followed the writer live with every
  -- acknowledged write (BATON_LUA_SWITCH). Every candidate notices, not only
  -- those that were connected to the old master. The promoted replica is
  -- one replica no more: 'all' counts one fewer, never below the floor of
  -- one (the old master counts again once it is back as a replica).
  local switched = server_switch({token = KEYS[2], fence = KEYS[3], epoch = KEYS[7],
                                  mark = mark_key, acked = acked_key}, tonumber(ARGV[2]), reset)
  if switched == 'failover' then
    reset = true
    reset_why = 'failover'
  end
end
local fence = call('PTTL', KEYS[3])
local current = call('GET', KEYS[1])
local now = call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
-- The registry is read and written on first need: every answer but a back
-- runner's registers its caller (a large election's back runners would pay
-- for a full registry at every attempt and find themselves cut from it).
local registry, registered = nil, false
local function register_caller()
  if not registered then
    registered = true
    local tail = nil
    if failsafe_key then tail = failsafe_tail(ARGV[16], ARGV[17], ARGV[18], ARGV[19], now_ms) end
    registry = register(KEYS[5], ARGV[8], ARGV[1], ARGV[9], now_ms, tonumber(ARGV[2]), tail)
  end
  return registry
end
-- Every refusal ends with {'outranked', n}: how many live candidates, but
-- the holder and us, have a priority above ours (when the registry could
-- be read). `holder`: the node the answer names as the holder, or nil.
local function refused(reply, holder)
  local n = outranking(register_caller(), ARGV[9], holder)
  if n then
    reply[#reply + 1] = 'outranked'
    reply[#reply + 1] = n
  end
  return reply
end
-- The node id of a lease value `<node>:<nonce>`.
local function node_of(value)
  return string.match(value, '^(.*):') or value
end
-- A switchover's reservation: free for its target (a new term), held for
-- everyone else until the window ends.
local reserved_for, handed_over_by = nil, nil
if current then
  reserved_for, handed_over_by = string.match(current, '^%(reserved%) (%S+) (.*)$')
  if reserved_for and reserved_for == ARGV[8] then current = false end
end
if fence == -2 and current == false then
  -- The lease key is gone: if the record says its holder's lease runs on,
  -- it vanished early (a DEL, an eviction) and its holder may still work.
  local record = call('GET', KEYS[4])
  local space = record and string.find(record, ' ', 1, true)
  if space and string.sub(record, space + 1) ~= ARGV[1] then
    local left = tonumber(string.sub(record, 1, space - 1)) - now_ms
    if left > tonumber(ARGV[2]) then
      -- The server's clock went back: hold back one ttl from now, no longer.
      left = tonumber(ARGV[2])
      call('SET', KEYS[4], string.format('%.0f', now_ms + left) .. ' ' .. string.sub(record, space + 1))
    end
    if left > 0 then
      local value = string.sub(record, space + 1)
      return refused({0, value, left, call('GET', KEYS[2]) or '', 'vanished'}, node_of(value))
    end
  end
end
if fence == -2 and (current == false or current == ARGV[1]) then
  register_caller()
  if failsafe_key then
    if current == false then
      local hold = failsafe_hold(failsafe_key, ARGV[15], ARGV[1], ARGV[8], registry, now_ms,
                                 call('GET', KEYS[2]) or '')
      if hold then return hold end
    end
    -- A caller that keeps a promise, or started less than a ttl ago, only
    -- registers (F7).
    if ARGV[14] ~= '1' then
      return refused({0, '', -1, call('GET', KEYS[2]) or '', 'abstained'}, nil)
    end
  end
  local needed = nil
  if ARGV[7] and ARGV[7] ~= '' then
    -- Too few replicas to acknowledge it: no grant, so no token spent and
    -- nothing announced.
    local connected, replid
    connected, needed, replid = replicas(mark_key, ARGV[7])
    if connected < needed then
      return {0, '', 0, call('GET', KEYS[2]) or '', 'replicas', connected, needed}
    end
    if acked_key then call('SET', acked_key, replid .. ' ' .. string.format('%.0f', now_ms)) end
  end
  call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  call('SET', KEYS[4], string.format('%.0f', now_ms + tonumber(ARGV[2])) .. ' ' .. ARGV[1])
  -- A leader is nobody's front runner: its place goes to a standby. While
  -- the election has front runners, a new term is not announced: a thousand
  -- standbys woken to read it would compete with the winner's app start,
  -- and they learn the holder at their next attempt, one step after the
  -- expiry, anyway.
  local quiet = front_key and redis.pcall('EXISTS', front_key) == 1
  if front_key then leave_front(front_key, ARGV[8]) end
  if ARGV[4] == 'grant' then
    -- One master of a Redlock quorum: the token is settled across the
    -- masters afterwards (write_back_source), so only report the counter.
    if granted_key then call('SET', granted_key, ARGV[1], 'PX', ARGV[2]) end
    return {1, call('GET', KEYS[2]), current == false and 1 or 0}
  end
  local term = call('INCR', KEYS[2])
  if ARGV[5] == 'replicated' then
    -- A failover can lose the last increments; a token from the server's
    -- clock (microseconds) stays above them unless the clocks of the old
    -- and the new master differ by more than the failover took.
    local now_us = tonumber(now[1] .. string.format('%06d', tonumber(now[2])))
    if term < now_us then
      term = now_us
      call('SET', KEYS[2], string.format('%.0f', term))
    end
  end
  if failsafe_key then
    call('SET', failsafe_key,
         record_text(string.format('%.0f', term), ARGV[20], ARGV[1], ARGV[16], ARGV[21]))
  end
  if needed then
    -- The client announces the term once the replicas acknowledged it: a
    -- grant given back for want of them must wake nobody.
    return {1, term, needed, (current == false and not quiet) and 1 or 0}
  end
  if current == false and ARGV[3] and not quiet then
    -- %.0f: Lua prints numbers above 10^14 in exponent notation.
    call(ARGV[6] or 'PUBLISH', ARGV[3], 'acquired ' .. ARGV[1] .. ' ' .. string.format('%.0f', term))
  end
  return {1, term}
end
local token = call('GET', KEYS[2])
if token == false then token = '' end
-- The counter may stand above the holder's own token (a reset lifts it to
-- the server's clock); the record of lease.failsafe peers knows the term's,
-- which a standby's peer state keeps as the newest term it saw.
if failsafe_key and current then
  local term_token, _, term_value = record_head(call('GET', failsafe_key))
  if term_value == current then token = term_token end
end
-- A Redlock master that granted the holder before its token was written
-- back holds the term before's token in its counter: unknown, not that one.
if granted_key and current and call('GET', granted_key) == current then token = '' end
local wait = call('PTTL', KEYS[1])
if fence == -2 and reserved_for then
  -- Held for the window: by nobody, but named after who handed it over. Both
  -- nodes are candidates for what follows, so neither is left uncounted.
  return refused({0, handed_over_by, wait, token, 'reserved', reserved_for}, nil)
end
if fence == -2 then
  if wait < 0 then return refused({0, current, wait, token}, node_of(current)) end
  -- PTTL is rounded down to the millisecond, and the key lives until the
  -- server's millisecond clock passes its expiry: it is free in
  -- wait * 1000 + (1000 - the microseconds into the current millisecond).
  -- TIME is read after PTTL, so a millisecond boundary in between makes this
  -- late by 1 ms, never early.
  now = call('TIME')
  local free_in = wait * 1000 + 1000 - tonumber(now[2]) % 1000
  if ARGV[3] then
    -- The candidates listening for this election's announcements: how wide
    -- the standbys spread their next attempt (see contenders in the port).
    -- pcall: README's minimal ACL does not grant PUBSUB; without it the
    -- count is unknown, and nothing else changes.
    -- ARGV[12]: the back runners' channel, whose listeners count too
    -- (when the ACL lets the user count them: else the channel's alone).
    local numsub = ARGV[6] == 'SPUBLISH' and 'SHARDNUMSUB' or 'NUMSUB'
    local listening = nil
    if ARGV[12] then
      listening = redis.pcall('PUBSUB', numsub, ARGV[3], ARGV[12])
      if type(listening) ~= 'table' or listening.err then listening = nil end
    end
    if listening == nil then listening = redis.pcall('PUBSUB', numsub, ARGV[3]) end
    if type(listening) == 'table' and type(listening[2]) == 'number' then
      local count = listening[2] + (tonumber(listening[4]) or 0)
      -- A large election: say whether this caller is a front or a back
      -- runner. A front runner's count is the front runners and the holder,
      -- who are all that try at once; a back runner, not registered, is
      -- told nothing of priorities.
      if front_key and count > large_above then
        local front = front_runner(front_key, ARGV[8], ARGV[9], now_ms, tonumber(ARGV[2]), front_wanted)
        if front == true then
          return refused({0, current, wait, token, '', free_in, front_wanted + 1, 'front'}, node_of(current))
        elseif front == false then
          return {0, current, wait, token, '', free_in, count, 'back'}
        end
      end
      return refused({0, current, wait, token, '', free_in, count}, node_of(current))
    end
  end
  return refused({0, current, wait, token, '', free_in}, node_of(current))
end
local holder = nil
if current and not reserved_for then holder = node_of(current) end
if current == false or reserved_for then
  current = '(store reset)'
  -- A reservation is no lease: only the fence holds its target back.
  if reserved_for then wait = -2 end
end
if fence == -1 or wait == -1 then
  wait = -1
elseif fence > wait then
  wait = fence
end
if reset then return refused({0, current, wait, token, reset_why}, holder) end
return refused({0, current, wait, token, 'fence'}, holder)
)lua";

}  // namespace

const lua_script& acquire_script() {
  static const lua_script script{acquire_source, sha1_hex(acquire_source)};
  return script;
}

}  // namespace baton::redis_detail
