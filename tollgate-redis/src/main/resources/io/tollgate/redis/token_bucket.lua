--[[
Tollgate token bucket: one decision for one client key under one policy, atomically.

This is io.tollgate.TokenBucket in Lua, step for step. Time is counted in ticks of 1/N microsecond and a
token is worth P ticks (N and P of each limit's rate, in lowest terms). A bucket's state is its debt: the
ticks until it is full again, 0 when full. Every value stays an integer no larger than 2^53, which Lua's
doubles hold exactly; divisions go through math.fmod, which is exact.

KEYS[1]  the bucket hash. Fields: t = microsecond time of the last charge, p = the limits it was charged
         under ("C,P,N;C,P,N"), and 1..n = the debt of each limit at time t. The key expires when every
         limit is full again.
ARGV[1]  now in microseconds, or "" to take the time from redis.call('TIME'). With a caller's clock (tests)
         the key lives an hour longer than its bucket needs, because Redis expires it by its own clock.
ARGV[2]  cost, a positive integer no larger than the smallest capacity
ARGV[3]  the longest the caller will wait, in microseconds; 0 never waits (tokens may be reserved ahead
         only as far as this allows)
ARGV[4]  the policy's limits as "C,P,N;C,P,N", the same string that field p holds
ARGV[5..] C, P, N of each limit in turn: capacity, ticks per token, ticks per microsecond

Reply: { allowed (1 or 0), index of the reported limit (0-based), remaining whole tokens of that limit,
         retry-after in microseconds (0 when allowed), reset-after of that limit in microseconds,
         wait in microseconds before an allowed caller may proceed (0 unless it reserved ahead) }

Only an allowed request writes (HSET and PEXPIRE); a refused one reads and answers, unless the policy
changed and the bucket had to be converted.
]]

local MAX_TICKS = 9007199254740992 -- 2^53
local CLIENT_CLOCK_TTL_MARGIN = 3600000 -- ms

local function ceil_div(a, b)
  if b == 1 then
    return a
  end
  local r = math.fmod(a, b)
  local q = (a - r) / b
  if r > 0 then
    q = q + 1
  end
  return q
end

local function floor_div(a, b)
  return (a - math.fmod(a, b)) / b
end

local function remaining(debt, fill, p)
  if debt >= fill then
    return 0
  end
  return floor_div(fill - debt, p)
end

local function wait_micros(charged, fill, n)
  if charged <= fill then
    return 0
  end
  return ceil_div(charged - fill, n)
end

local key = KEYS[1]
local cost = tonumber(ARGV[2])
local max_wait = tonumber(ARGV[3])
local limits = ARGV[4]
local count = (#ARGV - 4) / 3

local now
if ARGV[1] == "" then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = tonumber(ARGV[1])
end

local cap, p, n, fill = {}, {}, {}, {}
for i = 1, count do
  cap[i] = tonumber(ARGV[2 + 3 * i])
  p[i] = tonumber(ARGV[3 + 3 * i])
  n[i] = tonumber(ARGV[4 + 3 * i])
  fill[i] = cap[i] * p[i]
end

local fields = { 't', 'p' }
for i = 1, count do
  fields[2 + i] = tostring(i)
end
local stored = redis.call('HMGET', key, unpack(fields))

local function decayed(d, elapsed, ticks_per_micro)
  if elapsed >= ceil_div(d, ticks_per_micro) then
    return 0
  end
  return d - elapsed * ticks_per_micro
end

local debt = {}
for i = 1, count do
  debt[i] = 0
end
local converted = false
if stored[1] then
  local elapsed = now - tonumber(stored[1])
  if elapsed < 0 then
    elapsed = 0 -- a clock behind the last writer's: no time has passed
  end
  if stored[2] == limits then
    for i = 1, count do
      debt[i] = decayed(tonumber(stored[2 + i]) or 0, elapsed, n[i])
    end
  else
    -- The policy changed: each limit keeps its whole tokens as of now, up to its new capacity. Limits are
    -- matched by position; a limit that did not exist starts full. The converted bucket is written even if
    -- this request is refused, as the in-memory limiter keeps it.
    converted = true
    local i = 0
    for oc, op, on in string.gmatch(stored[2] or '', '(%d+),(%d+),(%d+)') do
      i = i + 1
      if i <= count then
        local old_p = tonumber(op)
        local d = decayed(tonumber(stored[2 + i]) or 0, elapsed, tonumber(on))
        local tokens = remaining(d, tonumber(oc) * old_p, old_p)
        if tokens > cap[i] then
          tokens = cap[i]
        end
        debt[i] = (cap[i] - tokens) * p[i]
      end
    end
  end
end

local allowed = true
local charged = {}
for i = 1, count do
  charged[i] = debt[i] + cost * p[i]
  local fits
  if max_wait == 0 then
    fits = charged[i] <= fill[i]
  else
    fits = charged[i] <= MAX_TICKS - fill[i] and wait_micros(charged[i], fill[i], n[i]) <= max_wait
  end
  allowed = allowed and fits
end

local reported, reported_wait, reported_remaining, wait = 1, -1, MAX_TICKS, 0
for i = 1, count do
  local w = wait_micros(charged[i], fill[i], n[i])
  if w > wait then
    wait = w
  end
  if allowed then
    local r = remaining(charged[i], fill[i], p[i])
    if r < reported_remaining then
      reported, reported_remaining = i, r
    end
  elseif w > reported_wait then
    reported, reported_wait = i, w
  end
end

local function store(debts)
  local values = { 't', string.format('%d', now), 'p', limits }
  local until_full = 0
  for i = 1, count do
    values[3 + 2 * i] = tostring(i)
    values[4 + 2 * i] = string.format('%d', debts[i])
    local u = ceil_div(debts[i], n[i])
    if u > until_full then
      until_full = u
    end
  end
  redis.call('HSET', key, unpack(values))
  local ttl = ceil_div(until_full, 1000)
  if ARGV[1] ~= "" then
    ttl = ttl + CLIENT_CLOCK_TTL_MARGIN -- Redis expires keys by its own clock, not the caller's
  end
  redis.call('PEXPIRE', key, ttl) -- 0 deletes a bucket that is already full
end

if allowed then
  store(charged)
elseif converted then
  store(debt)
end

local after = allowed and charged[reported] or debt[reported]
return {
  allowed and 1 or 0,
  reported - 1,
  remaining(after, fill[reported], p[reported]),
  allowed and 0 or reported_wait,
  ceil_div(after, n[reported]),
  allowed and wait or 0
}
