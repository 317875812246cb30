--[[
Tollgate's changes made outside a request (a reset, tokens given back): announces one to every instance that
shares the Redis, and says which instances were live to hear it, so that the announcing instance can wait for
each of them to confirm that it forgot what it remembered of the key. One call, so that no instance can become
live between the reading and the announcement unheard: an instance subscribes before it announces itself.

KEYS[1]  the live instances' announcements (see instances.lua): a sorted set of instance ids scored by the
         microsecond time of Redis's clock at which each runs out; only read here
ARGV[1]  the channel of changes
ARGV[2]  the message to publish on it

Reply: { id, id, ... }: the ids of the instances live now (the announcing one included), in no particular order.
]]

-- #include clock.lua

local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now_micros(''), '+inf')
redis.call('PUBLISH', ARGV[1], ARGV[2])
return live
