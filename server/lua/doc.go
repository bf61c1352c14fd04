// Package lua is Vigil's Lua 5.1 engine as a leaf: what Redis 7.0 keeps in
// deps/lua and script_lua.c, on gopher-lua. It owns the Lua 5.1 syntax
// check that gives Lua 5.1's compile errors (syntax.go), the libraries
// Redis bundles besides Lua's own (bit, cjson, cmsgpack, struct: libs.go,
// msgpack.go, struct.go) and Lua's number formatting (number.go).
//
// It may import the standard library and gopher-lua only (at most
// internal/resp besides); never package server or anything above it. The
// command handlers (EVAL, SCRIPT, FUNCTION, FCALL) stay in server, as
// Redis splits script_lua.c from eval.c and functions.c.
package lua
