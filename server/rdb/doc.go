// Package rdb encodes and decodes Redis 7.0 compatible RDB (version 10) files over
// the keyspace. It imports server/keyspace and the standard library.
package rdb
