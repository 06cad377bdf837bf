-- baton fence for Redis: SET a value only if the caller's fencing token is at
-- least the highest token that has written it before.
--
--   EVAL <this script> 2|3 VALUE_KEY FENCE_KEY [HISTORY_KEY] TOKEN VALUE
--
-- VALUE_KEY   the key the app writes;
-- FENCE_KEY   where the highest token seen for it is kept, beside it;
-- HISTORY_KEY optional: a list that gets "TOKEN VALUE" pushed (RPUSH) for
--             every write that lands, in the order they landed;
-- TOKEN       the term's fencing token (BATON_TOKEN, or the socket's `start`);
-- VALUE       what to store.
--
-- Returns the token now stored, or an error reply starting with
-- "BATONFENCE stale token" when a higher token has written: nothing was
-- changed, and the app must stop at once, a newer leader exists.
-- A script runs atomically in Redis, so no other write comes between the
-- check and the SET. On Redis Cluster give the keys one hash tag
-- (app:{orders}:value, app:{orders}:fence) so that they share a slot.
--
-- Tokens are compared as decimal strings (length, then digits), so they are
-- exact at any size, not rounded through a Lua number.

local function decimal(text)
  return type(text) == 'string' and string.find(text, '^[1-9][0-9]*$') ~= nil
end

local function less(a, b)
  if #a ~= #b then return #a < #b end
  return a < b
end

if #KEYS < 2 or #KEYS > 3 then
  return redis.error_reply('BATONFENCE usage: 2 or 3 keys (value, fence[, history]), got ' .. #KEYS)
end
local token, value = ARGV[1], ARGV[2]
if not decimal(token) then
  return redis.error_reply('BATONFENCE no fencing token: "' .. tostring(token) ..
                           '" is not a positive integer (is BATON_TOKEN set?)')
end
if value == nil then
  return redis.error_reply('BATONFENCE usage: no value to set')
end

local stored = redis.call('GET', KEYS[2])
if stored and not decimal(stored) then
  return redis.error_reply('BATONFENCE ' .. KEYS[2] .. ' holds "' .. stored .. '", not a token')
end
if stored and less(token, stored) then
  return redis.error_reply('BATONFENCE stale token ' .. token .. ' for ' .. KEYS[1] ..
                           ': token ' .. stored .. ' has written since; a newer leader exists')
end

redis.call('SET', KEYS[2], token)
redis.call('SET', KEYS[1], value)
if KEYS[3] then
  redis.call('RPUSH', KEYS[3], token .. ' ' .. value)
end
return token
