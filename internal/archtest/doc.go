// Package archtest holds no code, only a test that enforces the dependency
// rule of docs/architecture.md ("The dependency rule", "The architecture
// test"): the leaves import the standard library and internal/redisutil only,
// nothing imports cmd or integration, client imports no server-side package,
// replication and sentinel/daemon never import server, both binaries share
// internal/acl, and every package directory has a doc.go. clock_test.go
// parses the pure cores (replication, sentinel, server/keyspace) with
// go/parser: their code reads no wall clock (time.Now, time.Sleep,
// time.After, ...).
//
// Its test runs `go list` from the module root; it imports the standard
// library only.
package archtest
