// The Lua fragments the lease scripts are put together from (scripts.cpp,
// acquire_script.cpp), as macros so that each script's source is one string
// literal at compile time, whose SHA1 EVALSHA names. Include only from those
// files. The names start with BATON_LUA_ (or BATON_MAX_) and are not
// undefined after use: two of these files can share a unity build's unit.
#pragma once

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
// pass; and the caller's own line as written. A line kept as it was is written back as it was read, and the lines
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
// A live registry line as the candidates' list gives it (candidates_source,
// and a renewal that lists): appended to `out` as node, priority, ms
// registered without a gap, ms until the line lapses, the nonce, ms left of
// its cool-down (0 = none), its peer address ("" = none) and its card
// ("" = none). A line a version before the cool-down wrote reads as one
// without. Needs BATON_LUA_LINE.
#define BATON_LUA_LIST \
  "local function list_line(out, line, now_ms)\n" \
  "  local name, prio, began, ends, by, rest = string.match(line, registry_line)\n" \
  "  if not name or tonumber(ends) <= now_ms then return end\n" \
  "  local cool = tonumber(string.match(rest, '^ (%d+)') or '0')\n" \
  "  local _, address = failsafe_fields(rest)\n" \
  "  if address == nil or address == '-' then address = '' end\n" \
  "  out[#out + 1] = name\n" \
  "  out[#out + 1] = tonumber(prio)\n" \
  "  out[#out + 1] = math.max(0, now_ms - tonumber(began))\n" \
  "  out[#out + 1] = tonumber(ends) - now_ms\n" \
  "  out[#out + 1] = nonce_of(by)\n" \
  "  out[#out + 1] = math.max(0, cool - now_ms)\n" \
  "  out[#out + 1] = address\n" \
  "  out[#out + 1] = string.match(by, '^[^/]*/(.*)$') or ''\n" \
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
  "  local own = node .. ' ' .. priority .. ' ' .. string.format('%.0f', since) .. ' ' ..\n" \
  "              string.format('%.0f', till) .. ' ' .. nonce ..\n" \
  "              (card ~= '' and '/' .. card or '') .. (tail or '')\n" \
  "  lines[#lines + 1] = own\n" \
  "  redis.pcall('SET', key, table.concat(lines, '\\n'), 'PX', string.format('%.0f', 2 * ttl))\n" \
  "  if not readable then return nil end\n" \
  "  return others, own\n" \
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
// and whom to ask: {0, its lease value (or leader), list, counter,
// "failsafe", its token, its leader's peer address, n, then n times node
// and peer address}, `list` being the record's list number, or -1 for a
// promise's hold (a Redlock store picks the newest list among its
// masters; one server's answer has one). `others`: register()'s lines of
// the other candidates.
#define BATON_LUA_FAILSAFE_HOLD \
  "local function failsafe_hold(key, cleared, value, self, others, now_ms, counter)\n" \
  "  local record = call('GET', key)\n" \
  "  local token, seq, holder, address = record_head(record)\n" \
  "  if token and holder ~= value and above(token, cleared) then\n" \
  "    local reply = {0, holder, tonumber(seq), counter, 'failsafe', token, address, 0}\n" \
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
