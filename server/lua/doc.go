// Package lua is Vigil's Lua 5.1 engine as a leaf, on gopher-lua: what
// Redis 7.0 keeps in script_lua.c, function_lua.c and deps/lua.
//
// It owns:
//   - Engine (engine.go): one Lua state with the libraries Redis loads,
//     the redis table (call, pcall, error_reply, log, setresp, set_repl,
//     ...), the read-only globals and library tables, math.random on
//     Redis's PRNG, the script cache (compile, look up by sha, shebang
//     flags), KEYS/ARGV, and the per-engine arenas that keep redis.call
//     free of allocations; a run's result or error written as a reply;
//   - the conversions between RESP and Lua (convert.go:
//     redisProtocolToLuaType and luaReplyToRedisReply);
//   - stopping a running script through the state's context (busy.go);
//   - functions (functions.go): the load-time sandbox and
//     redis.register_function, script Flags;
//   - the Lua 5.1 syntax check that gives Lua 5.1's compile errors
//     (syntax.go), the bundled libraries bit, cjson, cmsgpack and struct
//     (libs.go, msgpack.go, struct.go) and Lua's number format (number.go).
//
// The server is the engine's Host: redis.call goes through Host.Call, so
// the command table, ACL, OOM and stale checks, propagation and errorstats
// stay in package server, and so do the command handlers (EVAL, SCRIPT,
// FUNCTION, FCALL: eval.c and functions.c), the library registry, the
// shebang parser and the busy-script replies to other clients.
//
// It may import the standard library, gopher-lua and internal/resp (with
// the internal/redisutil that comes with it); never package server or
// anything above it (internal/archtest checks it).
package lua
