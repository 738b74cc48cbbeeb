-- wrk script for scripts/bench: sends pre-signed payment callbacks read from a file, one
-- "<X-Ordergate-Signature><TAB><raw JSON body>" per line (signatures stay valid for the channel's
-- toleranceSeconds). Each wrk thread takes every n-th line; after the last one it starts over
-- (those repeats are answered as duplicates, and the bench reports them).
-- wrk -t2 -c64 -d20s --latency -s bench/wrk-callbacks.lua http://127.0.0.1:8080 -- FILE CHANNEL THREADS
-- THREADS must equal -t: wrk starts each thread (and its init) before it sets up the next one, so
-- the thread count cannot be learnt in setup().
local count = 0

function setup(thread)
  thread:set("id", count)
  count = count + 1
end

function init(args)
  local file = args[1]
  path = "/api/callbacks/" .. (args[2] or "sandbox")
  local step = tonumber(args[3] or "1")
  sigs, bodies = {}, {}
  local n = 0
  for line in io.lines(file) do
    if n % step == id then
      local tab = line:find("\t", 1, true)
      table.insert(sigs, line:sub(1, tab - 1))
      table.insert(bodies, line:sub(tab + 1))
    end
    n = n + 1
  end
  i = 0
end

function request()
  local k = (i % #bodies) + 1
  i = i + 1
  return wrk.format("POST", path, {["Content-Type"] = "application/json", ["X-Ordergate-Signature"] = sigs[k]},
    bodies[k])
end
