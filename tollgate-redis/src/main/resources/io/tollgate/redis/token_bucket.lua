--[[
Tollgate token bucket: one decision for one client key under one policy, atomically.

The clock is clock.lua's, the arithmetic and the stored form token_bucket_common.lua's, which
TokenBucketScript puts in place of the "#include" lines below when it loads this script.

KEYS[1]  the bucket: a string "T|LIMITS|D1|D2|...", where T is the microsecond time of the last write,
         LIMITS the policy's limits it was written under (as ARGV[4]), and Di the debt of limit i at T. One
         string rather than a hash: SET with PX writes value and expiry in one call instead of HSET and
         PEXPIRE, about 1.3 µs less per decision. The key expires when every limit is full again.
ARGV[1]  now in microseconds, or "" to take the time from redis.call('TIME'). With a caller's clock (tests)
         the key lives an hour longer than its bucket needs, because Redis expires it by its own clock.
ARGV[2]  cost, an integer: positive (no larger than the smallest capacity) takes tokens; negative gives
         them back (a refund, never beyond a full bucket, always allowed); 0 only reads the bucket and writes
         nothing (inspecting it)
ARGV[3]  the longest the caller will wait, in microseconds; 0 never waits (tokens may be reserved ahead
         only as far as this allows); a refund sends 2^53. Or "d" and a number B, for a charge that must land
         whatever the bucket holds (a cost known after the fact, or a request that a failure policy
         admitted): it is taken, but takes each limit no deeper than its fill and B microseconds of refill
         beyond it (the policy's maximum debt), nor than 2^53 less its fill; a limit already deeper keeps its
         debt. Calendar quotas count such a charge in full.
ARGV[4]  the policy's limits as "C,P,N;C,P,N", and "#I;I" after them when any limit's new buckets do not
         start full (as ARGV[5..] give them): stored with each bucket, so that a later request knows how long
         the bucket is kept once full
ARGV[5..] C, P, N, I of each limit in turn: capacity, ticks per token, ticks per microsecond, and the debt of
         a new bucket (0 when new buckets start full). When some limit's new buckets do not start full, a
         bucket is kept for R µs once it is full, R the longest time any limit takes to fill from empty, and
         then forgotten: a request finds a new bucket (io.tollgate.TokenBucket.retentionMicros). Else R is 0 and
         a full bucket is the same as a new one.

Calendar quotas: when the policy has any, ARGV[4] ends with "@Q;Q" (each "COUNT/PERIOD/ZONE", as stored
         with the bucket), and after the limits' arguments come five per quota: its count, and the starts
         of four periods in a row in microseconds (the one before the caller's idea of now, the current, the
         next and the one after). The period that holds now is the one between the two starts around it, so
         no time zone rules are needed here; a now outside all four is an error reply (clocks far apart).
         The bucket then stores, after the debts, what each quota counted in the period of its last write:
         a count from an earlier period is 0 now. A request passes only if every quota has room for its cost
         too (a charge that must land, max wait >= 2^53, and a refund always do), and is then counted. The
         key lives at least until the period of a non-zero count ends.

Reply: { now, D1, D2, ..., U1, U2, ... }: with Ui what quota i counted in the current period before this
         request; the time of the decision in microseconds, and the debt of each limit just
         before this request, after refill (and conversion, if the policy changed). The caller works out
         the decision from them with io.tollgate.TokenBucket, the arithmetic this script repeats;
         the request was charged exactly when that decision allows it. Or { now, -1, message } when the key
         holds something else than a bucket (a key of another type, or another program's string). The batch
         script replies in the same shape.

An allowed request writes; a refused one only reads, unless the policy changed and the bucket had to be
converted, or the bucket is new and does not start full (the in-memory limiter keeps those too).
]]

-- #include clock.lua
-- #include token_bucket_common.lua

local key = KEYS[1]
local cost = tonumber(ARGV[2])
local max_wait = tonumber(ARGV[3])
local max_debt -- for a charge that must land: the policy's maximum debt, in µs
if not max_wait then
  max_debt, max_wait = tonumber(sub(ARGV[3], 2)), MAX_TICKS
end
local limits = ARGV[4]
local quota_count = 0
if find(limits, '@', 1, true) then -- a plain find: most policies have no quota, and pay no pattern for it
  for _ in gmatch(match(limits, '@(.*)$'), '[^;]+') do
    quota_count = quota_count + 1
  end
end
local count = (#ARGV - 4 - 5 * quota_count) / 4

local now = now_micros(ARGV[1])
local client_clock = ARGV[1] ~= ""
local stored = redis.pcall('GET', key)
if type(stored) == 'table' and stored.err then
  return { now, NOT_A_BUCKET, stored.err } -- a key of another type
end

-- The common case first, without tables: a policy of one limit, and a bucket (if any) written under the
-- same limit. It computes exactly what the general case below computes for one limit.
if count == 1 and cost > 0 and quota_count == 0 then
  local stored_time, stored_debt
  local same_limits = true
  if stored then
    local t, old_limits, d = match(stored, '^(%d+)|([^|]*)|(%d+)$')
    if t and old_limits == limits then
      stored_time, stored_debt = tonumber(t), tonumber(d)
    else
      same_limits = false
    end
  end
  if same_limits then
    local p1, n1, initial1 = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
    local fill1 = tonumber(ARGV[5]) * p1
    local retention1 = 0
    if initial1 > 0 then
      retention1 = ceil_div(fill1, n1)
    end
    local debt1 = initial1 -- a new bucket
    local fresh = initial1 > 0 -- a new bucket that does not start full begins now, refused or not
    if stored_time then
      local elapsed = now - stored_time
      if elapsed < 0 then
        elapsed = 0
      end
      if retention1 == 0 or elapsed - ceil_div(stored_debt, n1) < retention1 then
        debt1, fresh = decayed(stored_debt, elapsed, n1), false
      end
    end
    local charged1, allowed1
    if max_debt then
      charged1, allowed1 = charged_after_the_fact(debt1, cost * p1, fill1, n1, max_debt), true
    else
      charged1 = debt1 + cost * p1
      if max_wait == 0 then
        allowed1 = charged1 <= fill1
      else
        allowed1 = charged1 <= MAX_TICKS - fill1 and wait_micros(charged1, fill1, n1) <= max_wait
      end
    end
    if allowed1 then
      redis.call('SET', key, format('%d|%s|%d', now, limits, charged1), 'PX',
        ttl_millis(ceil_div(charged1, n1) + retention1, client_clock))
    elseif fresh then
      redis.call('SET', key, format('%d|%s|%d', now, limits, debt1), 'PX',
        ttl_millis(ceil_div(debt1, n1) + retention1, client_clock))
    end
    return { now, debt1 }
  end
end

local cap, p, n, fill, debt, initial = {}, {}, {}, {}, {}, {}
local fresh, retention = false, 0
for i = 1, count do
  cap[i] = tonumber(ARGV[1 + 4 * i])
  p[i] = tonumber(ARGV[2 + 4 * i])
  n[i] = tonumber(ARGV[3 + 4 * i])
  initial[i] = tonumber(ARGV[4 + 4 * i])
  fill[i] = cap[i] * p[i]
  debt[i] = initial[i] -- a new bucket
  fresh = fresh or initial[i] > 0 -- one that does not start full begins now, refused or not
end
if fresh then
  retention = longest_fill(fill, n, count)
end

local policy_changed = false
local stored_time, stored_limits, stored_values -- read once: the limits and the quotas both need them
if stored then
  stored_time, stored_limits, stored_values = parsed(stored)
  if not stored_time then
    return { now, NOT_A_BUCKET, not_a_bucket(key) }
  end
  local found
  debt, found = brought_to_now(stored_limits, stored_values, now - stored_time, limits, count, cap, p, n, initial)
  if found ~= 'new' then
    fresh = false -- a bucket that was there (not forgotten) is not a new one
  end
  policy_changed = found == 'changed'
end

-- Calendar quotas: the period that holds now, and what each counted in it before this request.
local qcount, qnext, used = {}, {}, {}
if quota_count > 0 then
  local old_used_at = 0
  if stored_time then
    for _ in gmatch(stored_limits, '(%d+),(%d+),(%d+)') do
      old_used_at = old_used_at + 1 -- the counts follow the old policy's debts
    end
  end
  local base = 4 + 4 * count
  for j = 1, quota_count do
    local at = base + 5 * (j - 1)
    qcount[j] = tonumber(ARGV[at + 1])
    local start
    for b = 2, 4 do
      local from, to = tonumber(ARGV[at + b]), tonumber(ARGV[at + b + 1])
      if now >= from and now < to then
        start, qnext[j] = from, to
      end
    end
    if not start then
      return { now, NOT_A_BUCKET, 'ERR the time of Redis is outside the calendar periods Tollgate sent: '
        .. 'its clock and the caller\'s are more than a period apart' }
    end
    used[j] = 0
    if stored_time and stored_time >= start then
      used[j] = stored_values[old_used_at + j] or 0
    end
  end
end

local allowed = true
local charged = {}
for i = 1, count do
  charged[i] = debt[i] + cost * p[i]
  if charged[i] < 0 then
    charged[i] = 0 -- a refund fills the bucket at most
  end
  if max_debt then
    charged[i] = charged_after_the_fact(debt[i], cost * p[i], fill[i], n[i], max_debt)
  elseif max_wait == 0 then
    allowed = allowed and charged[i] <= fill[i]
  else
    allowed = allowed and charged[i] <= MAX_TICKS - fill[i] and wait_micros(charged[i], fill[i], n[i]) <= max_wait
  end
end

if quota_count > 0 and cost > 0 and max_wait < MAX_TICKS then
  for j = 1, quota_count do
    allowed = allowed and used[j] + cost <= qcount[j]
  end
end

local function store(debts, counts)
  local parts = { format('%d', now), limits }
  local until_full = 0
  for i = 1, count do
    parts[2 + i] = format('%d', debts[i])
    local u = ceil_div(debts[i], n[i])
    if u > until_full then
      until_full = u
    end
  end
  local keep = until_full + retention
  for j = 1, quota_count do
    parts[2 + count + j] = format('%d', counts[j])
    if counts[j] > 0 and qnext[j] - now > keep then
      keep = qnext[j] - now
    end
  end
  local ttl = ttl_millis(keep, client_clock)
  if ttl == 0 then
    redis.call('DEL', key) -- a full bucket is no bucket
  else
    redis.call('SET', key, concat(parts, '|'), 'PX', ttl)
  end
end

if cost == 0 then
  -- inspecting: nothing is written
elseif allowed then
  local counted = {}
  for j = 1, quota_count do
    counted[j] = used[j] + cost
    if counted[j] < 0 then
      counted[j] = 0 -- a refund counts down to nothing at most
    end
  end
  store(charged, counted)
elseif policy_changed or fresh then
  store(debt, used) -- a converted bucket, or a new one that does not start full, begins now
end

local reply = { now }
for i = 1, count do
  reply[1 + i] = debt[i]
end
for j = 1, quota_count do
  reply[1 + count + j] = used[j]
end
return reply
