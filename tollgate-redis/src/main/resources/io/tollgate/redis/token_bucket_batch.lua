--[[
Tollgate token bucket, many decisions in one call: the requests of a batch, for one or several client keys,
decided one after another in the order given, at one moment, exactly as token_bucket.lua would decide
them in that order at that moment (same arithmetic, same stored format, same expiry), then each bucket
written once. A batch costs Redis one script call instead of one per request.

Requests come in runs: M requests in a row for the same key, policy and cost. Of a run, the first K pass,
where K is the most the bucket allows, and the rest are refused. The script replies with the bucket's
debts before the run, from which the caller works out K and each request's decision exactly as
token_bucket.lua would; it charges the K here. A hot key thus costs one step per batch, not one per
request. The runs of one key come one after another, so that each bucket is read once and written once.

The clock is clock.lua's, the arithmetic and the stored form token_bucket_common.lua's, which
TokenBucketScript puts in place of the "#include" lines below when it loads this script. Requests never wait
here: reservations (acquire with a wait) go through token_bucket.lua.

KEYS     the buckets, each once, in the order of their runs; on Redis Cluster all in one hash slot. Each is
         a string "T|LIMITS|D1|D2|..." as token_bucket.lua writes it. Or, on Redis Cluster for buckets of
         several slots of one node, one of them only, to route the call: the buckets then follow the runs.
ARGV[1]  now in microseconds, or "" to take the time from redis.call('TIME'). With a caller's clock (tests)
         keys live an hour longer than their buckets need, because Redis expires them by its own clock.
ARGV[2]  the number of policies, Q
ARGV[3 .. 2+Q]  each policy's limits as "C,P,N;C,P,N": capacity, ticks per token, ticks per microsecond;
         followed by "#I;I" with each limit's debt of a new bucket when any limit's new buckets do not start
         full. Such a bucket is kept for R µs once full, R the longest time any limit takes to fill, and then
         forgotten, as token_bucket.lua says. When the batch charges under the policy, "!B" follows: its
         maximum debt B in microseconds (not stored with the buckets).
ARGV[3+Q]       the runs, packed big-endian, 16 bytes each: the policy's position as a 4-byte integer
         (1-based; negated when the run is for the same key as the run before, else the run is for the next
         key of KEYS), the cost as an 8-byte integer (positive, no larger than the policy's smallest
         capacity) and M as a 4-byte integer. M = 0 is a charge that must land: the cost (any size) is taken once whatever
         the bucket holds, into debt no deeper than the policy's maximum debt B allows, as token_bucket.lua
         takes such a charge. One argument rather than three per run: Redis spends about
         0.2 µs on each argument it hands a script (measured: 0.6 µs per key for three).
ARGV[4+Q ..]    on Redis Cluster, the buckets of several slots of the node that serves KEYS[1], in place of
         KEYS (Redis refuses declared keys of several slots). The script reads each with GET, as MGET too
         refuses them; a bucket that another node serves fails the whole call with Redis's error, before
         anything is written, so that the caller can send its requests again slot by slot.

Reply: one flat array in token_bucket.lua's shape: the time of the decisions in microseconds, then for each
       run in order, the debt before the run of each limit of its policy; or -1 and a message when the run's
       key holds something else than a Tollgate bucket (a key of another type, or another program's
       string). Such a key fails only its own requests.

Speed. Redis spends most of a batch on its calls: one MGET reads every bucket and one SET ... PX writes
each changed one. MGET answers nil for a key of another type as for a missing one, so a bucket read as
missing is written with NX: if that finds a key, it is not a string, and its runs fail as if GET had
failed. The common case, a key with one run under a one-limit policy whose bucket is missing or was
written under that policy, is decided inline: its bucket is read with a plain find of "|LIMITS|" and
written by one format, without pattern matching, tables or function calls (its decay and expiry are
token_bucket_common.lua's, written out). Everything else goes through the shared functions; both compute
the same, as the differential tests check.
]]

-- #include clock.lua
-- #include token_bucket_common.lua

local call, pcall_redis = redis.call, redis.pcall

-- How many requests of cost `step` ticks fit into a limit with `room` ticks, at most `most`.
local function fitting(room, step, most)
  if room < step then
    return 0
  end
  local fits = floor_div(room, step)
  if fits < most then
    return fits
  end
  return most
end

-- A stored time or debt: a whole number that exact arithmetic can use, or nil.
local function whole(text)
  local value = tonumber(text)
  if value and value >= 0 and value <= MAX_TICKS and fmod(value, 1) == 0 then
    return value
  end
  return nil
end

local now = now_micros(ARGV[1])
local client_clock = ARGV[1] ~= ''
local now_text = format('%d', now)

-- The policies: their limits string (as stored), capacity, P, N and fill (C × P) of each limit, the
-- "|LIMITS|" that follows the time in a bucket written under it, and what precedes the debt in a bucket
-- written now under it.
local policy_count = tonumber(ARGV[2])
local policies = {}
for q = 1, policy_count do
  local text = ARGV[2 + q]
  local max_debt -- for the policy's charges: its maximum debt, in µs
  local bang = find(text, '!', 1, true)
  if bang then
    max_debt, text = tonumber(sub(text, bang + 1)), sub(text, 1, bang - 1)
  end
  local initial_text = match(text, '#(.*)$') or ''
  local cap, p, n, fill, initial = {}, {}, {}, {}, {}
  for c, pp, nn in gmatch(text, '(%d+),(%d+),(%d+)') do
    local i = #cap + 1
    cap[i], p[i], n[i] = tonumber(c), tonumber(pp), tonumber(nn)
    fill[i] = cap[i] * p[i]
    initial[i] = 0
  end
  local i = 0
  for d in gmatch(initial_text, '%d+') do
    i = i + 1
    initial[i] = tonumber(d)
  end
  local retention = 0
  if initial_text ~= '' then
    retention = longest_fill(fill, n, #cap)
  end
  local middle = '|' .. text .. '|'
  policies[q] = {
    text = text, count = #cap, cap = cap, p = p, n = n, fill = fill, initial = initial, retention = retention,
    middle = middle, prefix = now_text .. middle, max_debt = max_debt
  }
end

-- The buckets: MGET answers false for a missing key and for a key of another type alike, and so does the read
-- of the cluster form, where a key of another type is then found out as below (written with NX).
local keys, values = KEYS, nil
if #ARGV > 3 + policy_count then
  keys, values = { unpack(ARGV, 4 + policy_count) }, {}
  for k = 1, #keys do
    local value = pcall_redis('GET', keys[k])
    if type(value) == 'table' then
      if not find(value.err, 'WRONGTYPE', 1, true) then
        return value -- not this node's (the topology changed): nothing is written yet
      end
      value = false
    end
    values[k] = value
  end
else
  values = call('MGET', unpack(KEYS))
end

-- The runs, flat: policy, cost and M of run j at 3j-2, 3j-1 and 3j.
local packed = ARGV[3 + policy_count]
local run_count = #packed / 16
local run = { struct.unpack('>' .. string.rep('i4i8i4', run_count), packed) }

local reply = { now }
local at = 1

-- The bucket being worked on: its key, whether MGET found nothing there, the limits it was last written
-- under (nil for no bucket), the time of its debts, and its debts: the one debt of a one-limit bucket in
-- `debt`, else the table `debts`. `written` is the policy it must be written under, or nil if it has not
-- changed; `failed` why it cannot be used. Its runs' replies start after `first_reply`; it has `runs`.
local key, absent, limits, time, debt, debts, written, failed, first_reply, runs

-- Reads bucket k, expecting it to be written under `policy` (its first run's).
local function load(k, policy)
  key, absent, limits, time, debt, debts, written, failed = keys[k], false, nil, now, 0, nil, nil, nil
  first_reply, runs = at, 0
  local stored = values[k]
  if not stored then
    absent = true
    return
  end
  local s, e = find(stored, policy.middle, 1, true)
  if s and policy.count == 1 then
    local t, d = whole(sub(stored, 1, s - 1)), whole(sub(stored, e + 1))
    if t and d then
      limits, time, debt = policy.text, t, d
      return
    end
  end
  local t, l, old = parsed(stored)
  if not t then
    failed = not_a_bucket(key)
    return
  end
  limits, time = l, t
  if #old == 1 then
    debt = old[1]
  else
    debt, debts = nil, old
  end
end

-- Replaces the replies of the current bucket's runs by its failure.
local function fail_runs()
  at = first_reply
  for _ = 1, runs do
    reply[at + 1], reply[at + 2] = NOT_A_BUCKET, failed
    at = at + 2
  end
  for i = at + 1, #reply do
    reply[i] = nil
  end
end

-- Why a key that MGET read as missing could not be written with NX: it holds another type.
local function held_elsewhere(k)
  local held = pcall_redis('GET', k)
  return type(held) == 'table' and held.err or ('WRONGTYPE key ' .. k .. ' holds another type')
end

-- Writes the bucket if it changed, as token_bucket.lua writes it; a full bucket is no bucket.
local function store()
  if not written then
    -- Never so for a bucket read as missing: a full bucket admits its first run, so it is always written
    -- (with NX, below), and a key of another type is always found out.
    return
  end
  local until_full = 0
  if debts then
    for i = 1, written.count do
      local u = ceil_div(debts[i], written.n[i])
      if u > until_full then
        until_full = u
      end
    end
  else
    until_full = ceil_div(debt, written.n[1])
  end
  local ttl = ttl_millis(until_full + written.retention, client_clock)
  local value
  if ttl == 0 then
    if not absent then
      call('DEL', key)
    end
    return
  elseif not debts then
    value = format('%s|%s|%d', now_text, limits, debt)
  else
    local parts = { now_text, limits }
    for i = 1, written.count do
      parts[2 + i] = format('%d', debts[i])
    end
    value = concat(parts, '|')
  end
  if not absent then
    call('SET', key, value, 'PX', ttl)
  elseif not call('SET', key, value, 'PX', ttl, 'NX') then
    -- MGET found no string here, yet there is a key: one of another type, which this must not overwrite.
    failed = held_elsewhere(key)
    fail_runs()
  end
end

-- Brings a bucket of any form to now under a policy, as a table of debts (brought_to_now): a converted bucket
-- is written (the in-memory limiter keeps a converted bucket too), and so is a new one that does not start
-- full, which begins now, refused or not.
local function bring_to(policy)
  local now_debts, found = brought_to_now(
    limits, debts or { debt }, now - time, policy.text, policy.count, policy.cap, policy.p, policy.n, policy.initial)
  if found == 'changed' then
    written = policy
  elseif found == 'new' then
    for i = 1, policy.count do
      if now_debts[i] > 0 then
        written = policy
      end
    end
  end
  limits, time, debts, debt = policy.text, now, now_debts, nil
end

-- Decides the run at run[r], run[r + 1], run[r + 2] for the current bucket.
local function decide_run(r, policy)
  runs = runs + 1
  if failed then
    reply[at + 1], reply[at + 2] = NOT_A_BUCKET, failed
    at = at + 2
    return
  end
  local cost = run[r + 1]
  local most = run[r + 2]
  local charging = most == 0
  if policy.count == 1 and not debts and (limits == policy.text or not limits) then
    -- A one-limit policy and a bucket of that limit, or none: without tables.
    local p1 = policy.p[1]
    local elapsed = now - time
    if elapsed < 0 then
      elapsed = 0
    end
    if not limits or (policy.retention > 0 and elapsed - ceil_div(debt, policy.n[1]) >= policy.retention) then
      debt = policy.initial[1] -- none, or forgotten: a new bucket, which begins now if it does not start full
      if debt > 0 then
        written = policy
      end
    else
      debt = decayed(debt, elapsed, policy.n[1])
    end
    limits, time = policy.text, now
    at = at + 1
    reply[at] = debt
    if charging then
      debt = charged_after_the_fact(debt, cost * p1, policy.fill[1], policy.n[1], policy.max_debt)
      written = policy
      return
    end
    local allowed = fitting(policy.fill[1] - debt, cost * p1, most)
    if allowed > 0 then
      debt = debt + allowed * cost * p1
      written = policy
    end
  else
    bring_to(policy)
    local allowed = most
    for i = 1, policy.count do
      reply[at + i] = debts[i]
      if charging then
        debts[i] = charged_after_the_fact(debts[i], cost * policy.p[i], policy.fill[i], policy.n[i], policy.max_debt)
      else
        allowed = fitting(policy.fill[i] - debts[i], cost * policy.p[i], allowed)
      end
    end
    at = at + policy.count
    if charging then
      written = policy
    elseif allowed > 0 then
      for i = 1, policy.count do
        debts[i] = debts[i] + allowed * cost * policy.p[i]
      end
      written = policy
    end
  end
end

local last = 3 * run_count - 2
local r = 1
local k = 0
while r <= last do
  k = k + 1
  local policy = policies[run[r]] -- positive: the first run of the next key
  local inline = false
  if policy.count == 1 and policy.initial[1] == 0 and run[r + 2] > 0 and (r == last or run[r + 3] > 0) then
    -- The common case, inline: the key's only run, under a one-limit policy whose new buckets start full.
    local stored = values[k]
    local t, d = now, 0
    if stored then
      local s, e = find(stored, policy.middle, 1, true)
      if s then
        t, d = tonumber(sub(stored, 1, s - 1)), tonumber(sub(stored, e + 1))
      else
        t = nil
      end
    end
    if t and d and t % 1 == 0 and d >= 0 and d <= MAX_TICKS and d % 1 == 0 then
      inline = true
      local n1, p1 = policy.n[1], policy.p[1]
      local elapsed = now - t
      if elapsed < 0 then
        elapsed = 0
      end
      -- decayed(d, elapsed, n1), written out: the one place where a function call per key shows in
      -- Redis's time (measured, 10 000 keys at 256 in flight); the differential tests hold it to the function
      local until_full = d
      if n1 ~= 1 then
        until_full = (d - fmod(d, n1)) / n1
        if fmod(d, n1) > 0 then
          until_full = until_full + 1
        end
      end
      if elapsed >= until_full then
        d = 0
      else
        d = d - elapsed * n1
      end
      at = at + 1
      reply[at] = d
      local step = run[r + 1] * p1
      local room = policy.fill[1] - d
      if room >= step then
        local allowed = (room - fmod(room, step)) / step
        local most = run[r + 2]
        if allowed > most then
          allowed = most
        end
        d = d + allowed * step
        local ttl = ceil_div(ceil_div(d, n1), 1000) -- ttl_millis, written out as above
        if client_clock then
          ttl = ttl + CLIENT_CLOCK_TTL_MARGIN
        end
        local value = format('%s%d', policy.prefix, d)
        if stored then
          call('SET', keys[k], value, 'PX', ttl)
        elseif not call('SET', keys[k], value, 'PX', ttl, 'NX') then
          reply[at], reply[at + 1] = NOT_A_BUCKET, held_elsewhere(keys[k])
          at = at + 1
        end
      end
      r = r + 3
    end
  end
  if not inline then
    load(k, policy)
    decide_run(r, policy)
    r = r + 3
    while r <= last and run[r] < 0 do
      decide_run(r, policies[-run[r]])
      r = r + 3
    end
    if not failed then
      store()
    end
  end
end

return reply
