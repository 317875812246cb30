--[[
Tollgate live instances: each limiter announces itself here at a short interval, and learns how many are
live, so that its LOCAL failure policy takes its share of each limit (the limit divided by that count) while
Redis cannot be asked.

KEYS[1]  the announcements: a sorted set whose members are the ids of live instances and whose scores are
         the microsecond times of Redis's clock at which their announcements run out. One key for all of them,
         rather than a key each, so that counting is one ZCARD on one node, even on Redis Cluster, instead of a
         scan over every key of every node. An announcement that ran out belongs to an instance that stopped
         (it died, or lost Redis): it is removed before anything is counted. The key expires with its last
         announcement.
ARGV[1]  this instance's id, chosen by the instance (random)
ARGV[2]  how long its announcement lasts, in microseconds
ARGV[3]  "announce" to add or renew the announcement, "withdraw" to remove it (the instance is closing)

Reply: { live }: the number of live instances after the call, this one included when it announced.
]]

-- #include clock.lua

local key = KEYS[1]
local now = now_micros('') -- Redis's clock always: every instance's announcement on one clock
local lasts = tonumber(ARGV[2])

redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if ARGV[3] == 'announce' then
  redis.call('ZADD', key, now + lasts, ARGV[1])
else
  redis.call('ZREM', key, ARGV[1])
end
local live = redis.call('ZCARD', key)
if live > 0 then
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  redis.call('PEXPIREAT', key, math.ceil(tonumber(last[2]) / 1000))
end
return { live }
