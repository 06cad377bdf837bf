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
#include "scripts.hpp"

#include <boost/uuid/detail/sha1.hpp>
#include <cstdio>
#include <string>

namespace baton::redis_detail {
namespace {

// Every script calls Redis through call(): a refusal inside a script (an ACL
// user without a command's permission, a key pattern it may not touch)
// reaches the client as "The user executing the script can't run this
// command", naming no command, so the error is raised again with the
// command's name appended.
#define BATON_LUA_CALL \
  "local function call(...)\n" \
  "  local reply = redis.pcall(...)\n" \
  "  if type(reply) == 'table' and reply.err then\n" \
  "    error({err = reply.err .. ' (command ' .. string.upper(tostring((...))) .. ')'})\n" \
  "  end\n" \
  "  return reply\n" \
  "end\n"

// redis.replica_ack's precondition, checked before a grant or a renewal is
// written (a grant refused here spends no token and announces nothing): how
// many replicas the master has connected, and how many are needed. A number
// is itself; 'all' is the most replicas this election's master has ever had
// connected, kept in the replicas key (raised here, by every candidate's grant
// and renewal, and replicated with the rest of the record), and never fewer
// than one: a reconnect to a master that lost its replica, or a candidate that
// starts then, must not read "all" as none.
//
// Its third result is the master's replication ID, which a grant or renewal
// made with 'all' writes into the acked key (BATON_LUA_SWITCH reads it).
#define BATON_LUA_REPLICAS \
  "local function replicas(mark_key, wanted)\n" \
  "  local info = call('INFO', 'replication')\n" \
  "  local connected = tonumber(string.match(info, 'connected_slaves:(%d+)')) or 0\n" \
  "  local replid = string.match(info, 'master_replid:(%x+)') or ''\n" \
  "  if wanted ~= 'all' then return connected, tonumber(wanted), replid end\n" \
  "  local mark = tonumber(call('GET', mark_key) or '') or 0\n" \
  "  if connected > mark then\n" \
  "    call('SET', mark_key, connected)\n" \
  "    mark = connected\n" \
  "  end\n" \
  "  return connected, math.max(mark, 1), replid\n" \
  "end\n"

// A server switch on a replicated kind (Sentinel, Cluster): the record's
// epoch key names another server than this one, whose run_id (INFO server)
// it then takes. `k` holds the keys: token, fence, epoch, and optionally mark
// (replica_ack all's count) and acked (Sentinel with all). Returns nil when
// the record names this server; 'unrecorded' when it names none (a first
// write of the epoch); 'lost' when `lost` (the caller found the counter
// missing and fenced already); otherwise the counter is lifted to the
// server's clock, 'all' counts one replica fewer (the promoted one), and the
// answer is 'promoted' or, with the fence set for one ttl, 'failover'.
//
// 'promoted' (no hold-back) needs three things this server shows: the acked
// key, written by every grant and renewal made with replica_ack all, names
// as its writer's replication ID this server's previous one
// (master_replid2: a replica takes its master's ID, and keeps it there when
// promoted); and this server has run since one ttl before that write
// (uptime_in_seconds, read in its own clock against the writer's), so it
// followed the writer live rather than loading that write from a file. A
// master restarted from its files also shows its old ID in
// master_replid2, but it started after the last write it holds. A replica
// that followed the writer live had every acknowledged write: 'all' counts
// every replica the master has had, so none counted without it. What the
// rule cannot see is in docs/safety.md (Redis Sentinel and Cluster).
#define BATON_LUA_SWITCH \
  "local function server_switch(k, ttl, lost)\n" \
  "  local server = call('INFO', 'server')\n" \
  "  local run_id = string.match(server, 'run_id:(%x+)') or ''\n" \
  "  local seen = call('GET', k.epoch)\n" \
  "  if seen == run_id then return nil end\n" \
  "  call('SET', k.epoch, run_id)\n" \
  "  if not seen then return 'unrecorded' end\n" \
  "  if lost then return 'lost' end\n" \
  "  local now = call('TIME')\n" \
  "  local now_us = now[1] .. string.format('%06d', tonumber(now[2]))\n" \
  "  local counter = tonumber(call('GET', k.token) or '')\n" \
  "  if counter == nil or counter < tonumber(now_us) then call('SET', k.token, now_us) end\n" \
  "  if k.mark then\n" \
  "    local mark = tonumber(call('GET', k.mark) or '')\n" \
  "    if mark and mark > 0 then call('SET', k.mark, mark - 1) end\n" \
  "  end\n" \
  "  if k.acked then\n" \
  "    local replid, written = string.match(call('GET', k.acked) or '', '^(%x+) (%d+)$')\n" \
  "    local previous = string.match(call('INFO', 'replication'), 'master_replid2:(%x+)')\n" \
  "    local uptime = tonumber(string.match(server, 'uptime_in_seconds:(%d+)') or '')\n" \
  "    local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)\n" \
  "    if replid and replid == previous and uptime and\n" \
  "       now_ms - uptime * 1000 < tonumber(written) - ttl then\n" \
  "      return 'promoted'\n" \
  "    end\n" \
  "  end\n" \
  "  local left = call('PTTL', k.fence)\n" \
  "  if left ~= -1 and left < ttl then\n" \
  "    call('SET', k.fence, 'the record was written by server ' .. seen, 'PX', ttl)\n" \
  "  end\n" \
  "  return 'failover'\n" \
  "end\n"

// The candidates' registry (candidates_key): lines "<node> <priority>
// <since ms> <until ms> <nonce>" in the server's clock, the nonce being the
// one of the registering process's lease value (`<node>:<nonce>`), and
// " <cool-down end ms>" after them while the node cools down after giving
// the lease up (BATON_LUA_COOLDOWN writes it; its next attempt, which ends
// the cool-down, drops it; other lines are kept with it as they were). A
// registration lives two ttls; one renewed before it lapsed, by the same
// process, keeps its start (live_for counts from it): a process that
// restarted under the node id starts again, however soon it came back, so
// that a node in a crash loop never looks continuously live. Lapsed lines
// are dropped at every write; past max_candidates lines the ones lapsing
// soonest go, never the caller's own; a line whose end lies further than two
// ttls ahead (the server's clock went back) is cut to two ttls. The key
// expires with its last line. Everything through redis.pcall: the registry
// serves switchovers, a preference, and a lease operation never fails for
// its sake (a key of another type, a write refused for memory).
// A node id with white space would not parse back, so it is not registered;
// node ids never have any (the configuration refuses them).
//
// register() returns the other candidates' live lines it kept, as {node,
// priority, until, line} (nil when the registry could not be read, or the
// caller was not registered): what outranking() counts, read in the same
// pass. A line kept as it was is written back as it was read, and the lines
// are sorted only when some must go: the registry's cost grows with its
// lines, and a large election pays it at every attempt.
#define BATON_MAX_CANDIDATES "128"
// A registry line's fields; the last capture is what follows the nonce (""
// or the cool-down's " <end ms>", which lease.failsafe peers follows with
// " <peer address> <promise token> <promise leader> <promise end ms>": the
// cool-down then always written, 0 for none, and "-" and 0 for no address
// or promise). failsafe_fields reads that tail: cool-down, address, token,
// leader, end; nil for a line without it. The nonce field is followed by
// "/<card>" when the candidate published one (candidate_card.hpp: no
// spaces): the scripts take the registration argument as "<priority>" or
// "<priority>/<card>" (split_registration), and nonce_of reads the nonce
// alone.
#define BATON_LUA_LINE \
  "local registry_line = '^(%S+) (%-?%d+) (%d+) (%d+) (%S+)(.*)$'\n" \
  "local function split_registration(arg)\n" \
  "  local p, card = string.match(arg or '', '^(%-?%d+)/(%S+)$')\n" \
  "  if p then return p, card end\n" \
  "  return arg, ''\n" \
  "end\n" \
  "local function nonce_of(by)\n" \
  "  return string.match(by or '', '^[^/]*')\n" \
  "end\n" \
  "local function failsafe_fields(rest)\n" \
  "  return string.match(rest or '', '^ (%d+) (%S+) (%d+) (%S+) (%d+)$')\n" \
  "end\n"
#define BATON_LUA_REGISTER \
  BATON_LUA_LINE \
  "local function register(key, node, value, priority, now_ms, ttl, tail)\n" \
  "  if node == nil or node == '' or string.find(node, '%s') then return nil end\n" \
  "  local card\n" \
  "  priority, card = split_registration(priority)\n" \
  "  if not string.match(priority or '', '^%-?%d+$') then priority = '0' end\n" \
  "  local nonce = string.match(value or '', ':(%w+)$') or '-'\n" \
  "  local text = redis.pcall('GET', key)\n" \
  "  local readable = type(text) == 'string' or text == false\n" \
  "  if type(text) ~= 'string' then text = '' end\n" \
  "  local till = now_ms + 2 * ttl\n" \
  "  local since = now_ms\n" \
  "  local others = {}\n" \
  "  for line in string.gmatch(text, '[^\\n]+') do\n" \
  "    local name, prio, began, ends, by, rest = string.match(line, registry_line)\n" \
  "    ends = tonumber(ends)\n" \
  "    if name and ends > now_ms then\n" \
  "      if name ~= node then\n" \
  "        local kept = line\n" \
  "        if ends > till then\n" \
  "          ends = till\n" \
  "          kept = name .. ' ' .. prio .. ' ' .. began .. ' ' .. string.format('%.0f', till) .. ' ' .. by .. rest\n" \
  "        end\n" \
  "        others[#others + 1] = {name, tonumber(prio), ends, kept}\n" \
  "      elseif nonce_of(by) == nonce then\n" \
  "        since = math.min(tonumber(began), now_ms)\n" \
  "      end\n" \
  "    end\n" \
  "  end\n" \
  "  if #others >= " BATON_MAX_CANDIDATES " then\n" \
  "    table.sort(others, function(a, b) return a[3] > b[3] end)\n" \
  "    for i = #others, " BATON_MAX_CANDIDATES ", -1 do others[i] = nil end\n" \
  "  end\n" \
  "  local lines = {}\n" \
  "  for i, o in ipairs(others) do lines[i] = o[4] end\n" \
  "  lines[#lines + 1] = node .. ' ' .. priority .. ' ' .. string.format('%.0f', since) .. ' ' ..\n" \
  "                      string.format('%.0f', till) .. ' ' .. nonce ..\n" \
  "                      (card ~= '' and '/' .. card or '') .. (tail or '')\n" \
  "  redis.pcall('SET', key, table.concat(lines, '\\n'), 'PX', string.format('%.0f', 2 * ttl))\n" \
  "  if not readable then return nil end\n" \
  "  return others\n" \
  "end\n"

// How many of register()'s lines outrank `priority` (a strictly higher
// one), the line of node `holder` (the one to replace) aside; nil when the
// registry is unknown. At most max_candidates - 1 comparisons.
#define BATON_LUA_OUTRANKING \
  "local function outranking(kept, priority, holder)\n" \
  "  if kept == nil then return nil end\n" \
  "  local mine = tonumber((split_registration(priority))) or 0\n" \
  "  local n = 0\n" \
  "  for _, o in ipairs(kept) do\n" \
  "    if o[1] ~= holder and o[2] > mine then n = n + 1 end\n" \
  "  end\n" \
  "  return n\n" \
  "end\n"

// The front runners of a large election (front_key): lines "<node>
// <priority> <until ms>", at most `wanted`, each living two ttls from its
// node's last refused attempt. In an election that more candidates listen to
// than the registry holds, only the front runners try the moment the lease is
// free; the others (back runners) come one step later, when a front runner has
// normally taken it, so that a thousand standbys do not hit the store, and
// their host's CPUs, in the same millisecond as the winner's app starts. A
// refused candidate joins while fewer than `wanted` live lines name others,
// or in place of the lowest priority below its own, and keeps its place by
// trying again within two ttls (every standby tries once per term). A back
// runner costs a GET of a few short lines; a front runner rewrites them.
// Through redis.pcall, as the registry: wake-up order is a preference, and a
// lease operation never fails for it. Returns true (a front runner), false
// (a back runner) or nil (unknown: the key could not be read).
#define BATON_LUA_FRONT_RUNNERS \
  "local function front_runner(key, node, priority, now_ms, ttl, wanted)\n" \
  "  local text = redis.pcall('GET', key)\n" \
  "  if text == false then text = '' end\n" \
  "  if type(text) ~= 'string' then return nil end\n" \
  "  local mine = tonumber((split_registration(priority))) or 0\n" \
  "  local kept, found, lowest = {}, false, nil\n" \
  "  for line in string.gmatch(text, '[^\\n]+') do\n" \
  "    local name, prio, ends = string.match(line, '^(%S+) (%-?%d+) (%d+)$')\n" \
  "    if name and tonumber(ends) > now_ms then\n" \
  "      if name == node then\n" \
  "        found = true\n" \
  "      else\n" \
  "        kept[#kept + 1] = {line, tonumber(prio)}\n" \
  "        if lowest == nil or tonumber(prio) < kept[lowest][2] then lowest = #kept end\n" \
  "      end\n" \
  "    end\n" \
  "  end\n" \
  "  if not found and #kept >= wanted then\n" \
  "    if kept[lowest][2] >= mine then return false end\n" \
  "    table.remove(kept, lowest)\n" \
  "  end\n" \
  "  local lines = {}\n" \
  "  for i, k in ipairs(kept) do lines[i] = k[1] end\n" \
  "  lines[#lines + 1] = node .. ' ' .. string.format('%d', mine) .. ' ' ..\n" \
  "                      string.format('%.0f', now_ms + 2 * ttl)\n" \
  "  redis.pcall('SET', key, table.concat(lines, '\\n'), 'PX', string.format('%.0f', 2 * ttl))\n" \
  "  return true\n" \
  "end\n" \
  "local function leave_front(key, node)\n" \
  "  local text = redis.pcall('GET', key)\n" \
  "  if type(text) ~= 'string' then return end\n" \
  "  local kept = {}\n" \
  "  for line in string.gmatch(text, '[^\\n]+') do\n" \
  "    if string.match(line, '^(%S+) ') ~= node then kept[#kept + 1] = line end\n" \
  "  end\n" \
  "  if #kept == 0 then redis.pcall('DEL', key)\n" \
  "  else redis.pcall('SET', key, table.concat(kept, '\\n'), 'KEEPTTL') end\n" \
  "end\n"

// lease.failsafe peers (docs/safety.md, "Peer-confirmed leadership"): the
// record (failsafe_key) is "<token> <list number> <leader's lease value>
// <leader's peer address>" and a line "<node> <peer address>" per listed
// peer, written by every grant, renewal and resume of a term made with the
// mode, and deleted by its release. A write whose list number is not above
// the record's, for the same term, leaves it alone (F1). Tokens are
// compared as decimal strings, as the Redlock scripts do.
#define BATON_LUA_FAILSAFE \
  "local function above(a, b)\n" \
  "  return #a > #b or (#a == #b and a > b)\n" \
  "end\n" \
  "local function record_head(text)\n" \
  "  if type(text) ~= 'string' then return nil end\n" \
  "  return string.match(text, '^(%d+) (%d+) (%S+) (%S+)')\n" \
  "end\n" \
  "local function record_text(token, seq, value, address, list)\n" \
  "  local text = token .. ' ' .. seq .. ' ' .. value .. ' ' .. (address ~= '' and address or '-')\n" \
  "  if list ~= '' then text = text .. '\\n' .. list end\n" \
  "  return text\n" \
  "end\n" \
  "local function write_record(key, token, seq, value, address, list)\n" \
  "  local old_token, old_seq, old_value = record_head(call('GET', key))\n" \
  "  if old_value == value and old_token == token and not above(seq, old_seq) then return end\n" \
  "  call('SET', key, record_text(token, seq, value, address, list))\n" \
  "end\n" \
  "local function failsafe_tail(address, ptoken, pleader, premaining, now_ms)\n" \
  "  local ends = '0'\n" \
  "  if ptoken ~= '0' then ends = string.format('%.0f', now_ms + tonumber(premaining)) end\n" \
  "  return ' 0 ' .. (address ~= '' and address or '-') .. ' ' .. ptoken .. ' ' ..\n" \
  "         (pleader ~= '' and pleader or '-') .. ' ' .. ends\n" \
  "end\n"

// F6 and F9, in the acquire script: a free lease stays free for a caller
// that has not cleared (cleared: the highest token it did) an unreleased
// term in the record of another value than its own, nor the terms the
// other candidates' live registrations promise. The answer names the term
// and whom to ask: {0, its lease value (or leader), -1, counter,
// "failsafe", its token, its leader's peer address, n, then n times node
// and peer address}. `others`: register()'s lines of the other candidates.
#define BATON_LUA_FAILSAFE_HOLD \
  "local function failsafe_hold(key, cleared, value, self, others, now_ms, counter)\n" \
  "  local record = call('GET', key)\n" \
  "  local token, _, holder, address = record_head(record)\n" \
  "  if token and holder ~= value and above(token, cleared) then\n" \
  "    local reply = {0, holder, -1, counter, 'failsafe', token, address, 0}\n" \
  "    for node, peer in string.gmatch(record, '\\n(%S+) (%S+)') do\n" \
  "      reply[#reply + 1] = node\n" \
  "      reply[#reply + 1] = peer\n" \
  "      reply[8] = reply[8] + 1\n" \
  "    end\n" \
  "    return reply\n" \
  "  end\n" \
  "  if others == nil then return nil end\n" \
  "  local best, leader, promising = nil, nil, {}\n" \
  "  for _, o in ipairs(others) do\n" \
  "    local rest = select(6, string.match(o[4], registry_line))\n" \
  "    local _, peer, ptoken, pleader, ends = failsafe_fields(rest)\n" \
  "    if ptoken and ptoken ~= '0' and tonumber(ends) > now_ms and above(ptoken, cleared) and\n" \
  "       pleader ~= self then\n" \
  "      promising[#promising + 1] = {o[1], peer}\n" \
  "      if best == nil or above(ptoken, best) then best, leader = ptoken, pleader end\n" \
  "    end\n" \
  "  end\n" \
  "  if best == nil then return nil end\n" \
  "  local reply = {0, leader, -1, counter, 'failsafe', best, '-', #promising}\n" \
  "  for _, p in ipairs(promising) do\n" \
  "    reply[#reply + 1] = p[1]\n" \
  "    reply[#reply + 1] = p[2]\n" \
  "  end\n" \
  "  return reply\n" \
  "end\n"

constexpr std::string_view acquire_source =
    BATON_LUA_CALL BATON_LUA_REPLICAS BATON_LUA_SWITCH BATON_LUA_REGISTER
        BATON_LUA_OUTRANKING BATON_LUA_FRONT_RUNNERS BATON_LUA_FAILSAFE
            BATON_LUA_FAILSAFE_HOLD R"lua(
-- ARGV[10], when given: how many front runners a large election has, and
-- ARGV[11] above how many listening candidates an election is large; the
-- front key is KEYS[6].
local front_wanted = tonumber(ARGV[10] or '')
local large_above = tonumber(ARGV[11] or '')
local front_key = front_wanted and large_above and KEYS[6]
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
constexpr std::string_view write_back_source = BATON_LUA_CALL R"lua(
if call('GET', KEYS[1]) ~= ARGV[1] then return {0, 'lease not ours'} end
local counter = call('GET', KEYS[2])
if counter == false then return {0, 'token counter missing'} end
if #counter > #ARGV[2] or (#counter == #ARGV[2] and counter >= ARGV[2]) then
  return {0, 'token counter already at ' .. counter}
end
call('SET', KEYS[2], ARGV[2])
call('SET', KEYS[3], ARGV[2])
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
// is a value, not a free key: never taken.
constexpr std::string_view renew_or_take_source = BATON_LUA_CALL R"lua(
local current = call('GET', KEYS[1])
local now = call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local record = string.format('%.0f', now_ms + tonumber(ARGV[2])) .. ' ' .. ARGV[1]
if current == ARGV[1] then
  call('SET', KEYS[4], record)
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
return 2
)lua";

// The registry's live lines (BATON_LUA_REGISTER), read only: a flat array of
// node, priority, ms registered without a gap, ms until the line lapses, the
// nonce of the process that registered it, ms left of its cool-down (0 =
// none), its peer address ("" = none) and its card ("" = none). A line a
// version before the cool-down wrote reads as one without.
constexpr std::string_view candidates_source = BATON_LUA_CALL BATON_LUA_LINE R"lua(
local text = call('GET', KEYS[1]) or ''
local now = call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local out = {}
for line in string.gmatch(text, '[^\n]+') do
  local name, prio, began, ends, by, rest = string.match(line, registry_line)
  if name and tonumber(ends) > now_ms then
    local cool = tonumber(string.match(rest, '^ (%d+)') or '0')
    local _, address = failsafe_fields(rest)
    if address == nil or address == '-' then address = '' end
    out[#out + 1] = name
    out[#out + 1] = tonumber(prio)
    out[#out + 1] = math.max(0, now_ms - tonumber(began))
    out[#out + 1] = tonumber(ends) - now_ms
    out[#out + 1] = nonce_of(by)
    out[#out + 1] = math.max(0, cool - now_ms)
    out[#out + 1] = address
    out[#out + 1] = string.match(by, '^[^/]*/(.*)$') or ''
  end
end
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
    BATON_LUA_CALL BATON_LUA_REPLICAS BATON_LUA_REGISTER BATON_LUA_FAILSAFE R"lua(
-- ARGV[5]: the replica requirement ('' or absent = none). lease.failsafe
-- peers: ARGV[6] 'failsafe', then the term's token, the list number, our
-- peer address and the list; the record is the last key.
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
  register(KEYS[3], ARGV[3], ARGV[1], ARGV[4], now_ms, tonumber(ARGV[2]), tail)
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
  if required then return {extended, 0, needed} end
  return extended
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
// it: it holds back those who would start, and our app runs already.
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

#undef BATON_LUA_CALL
#undef BATON_LUA_REPLICAS
#undef BATON_LUA_SWITCH
#undef BATON_LUA_REGISTER
#undef BATON_LUA_OUTRANKING
#undef BATON_LUA_FRONT_RUNNERS
#undef BATON_MAX_CANDIDATES
#undef BATON_LUA_LINE
#undef BATON_LUA_FAILSAFE
#undef BATON_LUA_FAILSAFE_HOLD

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

const lua_script& acquire_script() {
  static const lua_script script{acquire_source, sha1_hex(acquire_source)};
  return script;
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
