--[[
Tollgate's clock in Lua, written once for every script that reads the time. TokenBucketScript puts this text
in place of the include line that names this file. It uses no KEYS or ARGV and replies nothing.

Time is Redis's own (TIME), so that instances whose clocks disagree still share one limit; tests may send
their own instead. A key written under a caller's clock lives CLIENT_CLOCK_TTL_MARGIN longer than it needs,
because Redis expires keys by its own clock.
]]

local CLIENT_CLOCK_TTL_MARGIN = 3600000 -- ms

-- Now in microseconds: `given` (a caller's clock, as decimal text) unless it is "", else Redis's TIME.
local function now_micros(given)
  if given ~= '' then
    return tonumber(given)
  end
  local time = redis.call('TIME')
  return tonumber(time[1]) * 1000000 + tonumber(time[2])
end
