// Package keyspace holds the databases and value types of vigil-server and
// implements expiry against a time passed in by the caller. It holds no locks
// and does no I/O: the server serialises access with its execution lock.
//
// It imports the standard library only.
package keyspace
