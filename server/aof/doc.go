// Package aof implements the append-only file: writer with fsync policies,
// rewrite, loader and truncated-tail repair. It imports internal/resp,
// server/keyspace and the standard library.
package aof
