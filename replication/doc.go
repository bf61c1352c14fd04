// Package replication owns the backlog (a ring addressed by replication offset),
// replication IDs, the pure PSYNC decision and the replica handshake state
// machine, plus the shells that stream to replicas and follow a master.
// It never imports server: it declares the interfaces it needs.
// It may import internal/resp, internal/clock and configs.
package replication
