--[[
Tollgate concurrency limit: the open permits of one client key under one concurrency limit, atomically.

KEYS[1]  the slots: a sorted set whose members are the ids of open permits and whose scores are the
         microsecond times at which their leases run out. A lease that ran out belongs to an instance that
         stopped renewing it (it died, or lost Redis for longer than the lease): it is removed before
         anything is counted. The key expires with its last lease.
ARGV[1]  now in microseconds, or "" to take the time from redis.call('TIME'). With a caller's clock (tests)
         the key lives an hour longer than its leases, because Redis expires it by its own clock.
ARGV[2]  what to do:
           "acquire": add the permit ARGV[5] if fewer than ARGV[3] leases are open;
           "release": remove the permits ARGV[5..];
           "renew":   move the leases of the permits ARGV[5..] that are still open to now + ARGV[4]
                      (a permit whose lease ran out is not brought back: its slot may be another's now);
           "count":   only count.
ARGV[3]  the most permits open at once (acquire), else ignored
ARGV[4]  the lease in microseconds (acquire, renew), else ignored
ARGV[5..] permit ids, chosen by the caller (random, 128 bits)

Reply: { done, open }: done is 1 when the permit was acquired, or the number of permits released or renewed
         (0 for count and for a refused acquire); open is the number of open permits after the call.
]]

-- #include clock.lua

local key = KEYS[1]
local op = ARGV[2]
local now = now_micros(ARGV[1])
local lease = tonumber(ARGV[4])
local extra_ms = 0
if ARGV[1] ~= "" then
  extra_ms = CLIENT_CLOCK_TTL_MARGIN
end

-- Scores go to Redis as integer text: Lua's own formatting of a number this large would round it.
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.0f', now))

local done = 0
if op == "acquire" then
  if redis.call('ZCARD', key) < tonumber(ARGV[3]) then
    redis.call('ZADD', key, string.format('%.0f', now + lease), ARGV[5])
    done = 1
  end
elseif op == "release" then
  for i = 5, #ARGV do
    done = done + redis.call('ZREM', key, ARGV[i])
  end
elseif op == "renew" then
  for i = 5, #ARGV do
    if redis.call('ZSCORE', key, ARGV[i]) then
      redis.call('ZADD', key, 'XX', string.format('%.0f', now + lease), ARGV[i])
      done = done + 1
    end
  end
end

local open = redis.call('ZCARD', key)
if (op == "acquire" or op == "renew") and done > 0 then
  -- The key lives as long as its latest lease, which may be another limit's of the same name and longer.
  local latest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', key, math.ceil((tonumber(latest[2]) - now) / 1000) + extra_ms)
end
return { done, open }
