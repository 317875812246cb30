--[[
Tollgate's shared counts of who is limited: each server that counts its top keys publishes the summaries of
its counts here at a short interval, and a read returns every live instance's, so that the keys refused or
charged most are seen across the whole fleet, not one instance's share of it.

KEYS[1]  one hash for every instance (one key, so one slot even on Redis Cluster): field ID holds instance ID's
         summaries as it wrote them (bytes, opaque here), field ID .. '/until' the microsecond time of Redis's
         clock at which they run out. Each call removes those that ran out (their instance stopped, or lost
         Redis); the key expires with the last of them.
ARGV[1]  "publish", "read" or "withdraw"
ARGV[2]  this instance's id (random, without '/')
ARGV[3]  for "publish": how long the summaries last, in microseconds
ARGV[4]  for "publish": the summaries

Reply: for "read", { id1, summaries1, id2, summaries2, ... }, every instance whose summaries have not run out,
this one's included; otherwise { }.
]]

-- #include clock.lua

local key = KEYS[1]
local now = now_micros('') -- Redis's clock always: every instance's summaries run out on one clock
local op = ARGV[1]
local id = ARGV[2]

if op == 'publish' then
  redis.call('HSET', key, id, ARGV[4], id .. '/until', now + tonumber(ARGV[3]))
elseif op == 'withdraw' then
  redis.call('HDEL', key, id, id .. '/until')
end

local live = {}
local last = 0
for _, field in ipairs(redis.call('HKEYS', key)) do
  if string.sub(field, -6) == '/until' then
    local owner = string.sub(field, 1, -7)
    local untilMicros = tonumber(redis.call('HGET', key, field))
    if untilMicros == nil or untilMicros <= now then
      redis.call('HDEL', key, owner, field)
    else
      live[#live + 1] = owner
      if untilMicros > last then
        last = untilMicros
      end
    end
  end
end
if last > 0 then
  redis.call('PEXPIREAT', key, math.ceil(last / 1000))
end

if op ~= 'read' then
  return {}
end
local reply = {}
for _, owner in ipairs(live) do
  local summaries = redis.call('HGET', key, owner)
  if summaries then
    reply[#reply + 1] = owner
    reply[#reply + 1] = summaries
  end
end
return reply
