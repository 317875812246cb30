--[[
Tollgate token bucket: what both scripts share, written once. TokenBucketScript puts this text in place of
the include line that names this file in token_bucket.lua and token_bucket_batch.lua when it loads them,
so that the script Redis runs is whole. It uses no KEYS or ARGV and replies nothing: it defines
constants and functions only. It follows clock.lua, which both scripts include first.

This is io.tollgate.TokenBucket in Lua, step for step. Time is counted in ticks of 1/N microsecond
and a token is worth P ticks (N and P of each limit's rate, in lowest terms). A bucket's state is its debt:
the ticks until it is full again, 0 when full. Every value stays an integer no larger than 2^53, which Lua's
doubles hold exactly; divisions go through math.fmod, which is exact.

A bucket is stored as the string "T|LIMITS|D1|D2|...": T the microsecond time of its last write, LIMITS the
policy's limits it was written under ("C,P,N;C,P,N": capacity, ticks per token, ticks per microsecond,
then "#I;I" with each limit's debt of a new bucket when new buckets do not all start full), and Di the debt
of limit i at T.

Both scripts reply in one shape: the time of the decision in microseconds, then for each request (or run of
requests) in order, the debt of each limit of its policy just before it; or NOT_A_BUCKET (-1) and a message
when its key holds something else than a Tollgate bucket.
]]

local MAX_TICKS = 9007199254740992 -- 2^53
local NOT_A_BUCKET = -1

local fmod, find, sub, match, gmatch, format, tonumber, concat =
  math.fmod, string.find, string.sub, string.match, string.gmatch, string.format, tonumber, table.concat

local function ceil_div(a, b)
  if b == 1 then
    return a
  end
  local r = fmod(a, b)
  local q = (a - r) / b
  if r > 0 then
    q = q + 1
  end
  return q
end

local function floor_div(a, b)
  return (a - fmod(a, b)) / b
end

-- The debt of a limit `elapsed` µs after it was `debt`, refilling N ticks per µs.
local function decayed(debt, elapsed, n)
  if elapsed >= ceil_div(debt, n) then
    return 0
  end
  return debt - elapsed * n
end

-- The debt once a charge that must land takes `cost` ticks from a limit whose debt is `debt`: all of it, but no
-- deeper than the limit's fill and `max_debt` µs of refill beyond it (nor than 2^53 less its fill); a limit
-- already deeper keeps its debt (TokenBucket.chargedAfterTheFact).
local function charged_after_the_fact(debt, cost, fill, n, max_debt)
  local bound = fill + max_debt * n
  if bound > MAX_TICKS - fill then
    bound = MAX_TICKS - fill
  end
  local charged = debt + cost
  if charged <= bound then
    return charged
  end
  if debt > bound then
    return debt
  end
  return bound
end

-- How long a request that brings a limit's debt to `charged` waits for its tokens, in µs: 0 if they are there.
local function wait_micros(charged, fill, n)
  if charged <= fill then
    return 0
  end
  return ceil_div(charged - fill, n)
end

-- The longest time any of `count` limits takes to fill from empty, in µs: how long a policy whose new
-- buckets do not all start full keeps a full bucket before it is forgotten.
local function longest_fill(fill, n, count)
  local longest = 0
  for i = 1, count do
    local u = ceil_div(fill[i], n[i])
    if u > longest then
      longest = u
    end
  end
  return longest
end

-- The debt of a limit once the policy changed: it keeps the tokens it has spent (of a debt `debt` under the
-- old capacity and P; a token partly refilled counts as spent), up to its new capacity, and a full one stays
-- full.
local function converted(debt, old_cap, old_p, cap, p)
  if debt <= 0 then
    return 0
  end
  local old_fill = old_cap * old_p
  local tokens = 0
  if debt < old_fill then
    tokens = floor_div(old_fill - debt, old_p)
  end
  local spent = old_cap - tokens
  if spent > cap then
    spent = cap
  end
  return spent * p
end

-- Whether a bucket written under the limits `text` with debts `old`, `elapsed` µs ago, is forgotten: every
-- limit has been full for that policy's retention, the longest time any of its limits takes to fill from
-- empty if its new buckets do not all start full ("#" in the text), else 0. A request then finds a new bucket.
local function forgotten(text, old, elapsed)
  local starts_full = find(text, '#', 1, true) == nil
  local retention, ns, i = 0, {}, 0
  for c, pp, nn in gmatch(text, '(%d+),(%d+),(%d+)') do
    i = i + 1
    ns[i] = tonumber(nn)
    local u = ceil_div(tonumber(c) * tonumber(pp), ns[i])
    if not starts_full and u > retention then
      retention = u
    end
  end
  for j = 1, i do
    if elapsed - ceil_div(old[j] or 0, ns[j]) < retention then
      return false
    end
  end
  return true
end

-- A bucket brought to now under a policy of `count` limits (its limits text `limits`; each limit's capacity,
-- P, N and new bucket's debt in the tables `cap`, `p`, `n` and `initial`), from the limits text `old_limits` it
-- was written under (nil: there was none) and its debts then, `old`, `elapsed` µs ago. Returns its debts now,
-- a new table, and how it was found: 'new' (none, or forgotten: each limit's debt of a new bucket), 'same'
-- (written under this policy: refilled) or 'changed' (another policy's: refilled under it, then each limit
-- keeps the tokens it has spent, up to its new capacity, and a full one stays full; limits are matched by
-- position, and a limit that did not exist starts full).
local function brought_to_now(old_limits, old, elapsed, limits, count, cap, p, n, initial)
  if elapsed < 0 then
    elapsed = 0 -- a clock behind the last writer's: no time has passed
  end
  local debts = {}
  if not old_limits or forgotten(old_limits, old, elapsed) then
    for i = 1, count do
      debts[i] = initial[i]
    end
    return debts, 'new'
  end
  if old_limits == limits then
    for i = 1, count do
      debts[i] = decayed(old[i], elapsed, n[i])
    end
    return debts, 'same'
  end
  for i = 1, count do
    debts[i] = 0
  end
  local i = 0
  for oc, op, on in gmatch(old_limits, '(%d+),(%d+),(%d+)') do
    i = i + 1
    if i <= count then
      debts[i] = converted(decayed(old[i] or 0, elapsed, tonumber(on)), tonumber(oc), tonumber(op), cap[i], p[i])
    end
  end
  return debts, 'changed'
end

-- A stored bucket of any form as its time, its limits text and a table of its debts; nil if `stored` is
-- not a bucket.
local function parsed(stored)
  local t, limits, debts = match(stored, '^(%d+)|([^|]*)|([%d|]*)$')
  if not t then
    return nil
  end
  local old = {}
  for d in gmatch(debts, '%d+') do
    old[#old + 1] = tonumber(d)
  end
  return tonumber(t), limits, old
end

-- The message that follows NOT_A_BUCKET for a key that holds a string of another program.
local function not_a_bucket(key)
  return 'ERR key ' .. key .. ' holds a value that is not a Tollgate bucket'
end

-- The expiry of a bucket full again in `until_full` µs, in ms.
local function ttl_millis(until_full, client_clock)
  local ttl = ceil_div(until_full, 1000)
  if client_clock then
    ttl = ttl + CLIENT_CLOCK_TTL_MARGIN
  end
  return ttl
end
