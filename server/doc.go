// Package server wires a vigil-server process: listeners, the connection loop,
// the command table and its cmd_*.go handlers, INFO, CLIENT, CONFIG, pub/sub,
// MULTI and scripting.
//
// Lock order: Server.mu (the execution lock) is taken once per parsed batch of
// commands; it guards the keyspace and every field marked "guarded by mu".
// Server.clientsMu guards the client registry and may be taken while holding mu,
// never the other way round.
//
// Blocked clients (blocking.go, Redis's blocked.c) are parked outside mu: a
// blocking command registers its client in Server.blocking under mu and
// returns without a reply; the client's goroutine (runBatch -> parkBlocked)
// writes the replies so far, releases mu and waits on the block's done
// channel holding no lock (the rest of its batch stays in its query
// buffer). While it is parked its reply writer c.w belongs to whoever holds
// mu. It is woken, always by a goroutine holding mu that first writes its
// reply into c.w and then closes done (unblock): the writer whose command
// made a key it waits on ready (call -> handleClientsBlockedOnKeys, after
// the command, after EXEC as a whole), its timer on the server's clock
// (blockTimedOut takes mu), CLIENT UNBLOCK, replication acknowledging an
// offset (ReplicasAcked takes mu), or, without a reply, CLIENT KILL, the
// cron's sweep of killed clients and closed peers, and shutdown. The woken
// goroutine takes mu again before it touches c.w, then runs the rest of its
// batch. Commands postponed by CLIENT PAUSE park the same way, in
// pauseState.wait. Nothing parks while holding mu, clientsMu, a client's
// wmu or amu.
//
// It may import internal/resp, internal/clock, configs, server/keyspace,
// internal/redistext, server/rdb, server/aof, replication and the chosen libraries (zerolog).
package server
