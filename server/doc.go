// Package server wires a vigil-server process: listeners, the connection loop,
// the command table and its cmd_*.go handlers, INFO, CLIENT, CONFIG, pub/sub,
// MULTI and scripting.
//
// ACL: the users, rules, checks and ACL replies are internal/acl's, shared
// with vigil-sentinel; acl.go is the glue (the store built from requirepass,
// "user" lines and aclfile; the permission check call() makes after the auth
// check, as processCommand's ACLCheckAllPerm; EXEC's re-check; AUTH; the
// clients of deleted users and of subscribers whose channels were revoked
// are disconnected) and cmd_acl.go the ACL command.
//
// Lock order: Server.mu (the execution lock) is taken once per parsed batch of
// commands; it guards the keyspace and every field marked "guarded by mu".
// Server.clientsMu guards the client registry and may be taken while holding mu,
// never the other way round.
//
// It may import internal/resp, internal/clock, configs, server/keyspace,
// internal/redistext, internal/acl, server/rdb, server/aof, replication and the chosen libraries (zerolog).
package server
