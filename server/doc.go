// Package server wires a vigil-server process: listeners, the connection loop,
// the command table and its cmd_*.go handlers, INFO, CLIENT, CONFIG, pub/sub,
// MULTI and scripting.
//
// Lock order: Server.mu (the execution lock) is taken once per parsed batch of
// commands; it guards the keyspace and every field marked "guarded by mu".
// Server.clientsMu guards the client registry and may be taken while holding mu,
// never the other way round.
//
// It may import internal/resp, internal/clock, configs, server/keyspace,
// internal/redistext, server/rdb, server/aof, replication and the chosen libraries (zerolog).
package server
