// Package hll is Redis 7.0.15's HyperLogLog representation and estimator
// (hyperloglog.c), byte for byte: a value written by Redis counts the same
// here, and what is written here is what Redis would have written.
//
// An HLL is a plain string value: a 16-byte header ("HYLL", the encoding
// byte, three unused bytes, the cached cardinality in little endian whose
// top bit marks it stale) followed by either the dense registers (16384
// 6-bit registers packed from the least significant bit, 12288 bytes) or
// the sparse run-length form (opcodes ZERO 00xxxxxx, XZERO 01xxxxxx
// yyyyyyyy and VAL 1vvvvvxx). The functions here are pure: they take the
// value's bytes and return the new bytes; the caller owns the slice
// (it must come from keyspace.DB.Mutable when it is stored).
//
// Where Redis reads one byte past the end of a string (an XZERO opcode cut
// by the end of a corrupt sparse value, the last dense register), it reads
// the sds NUL terminator: here such reads see 0. Nothing here panics on
// arbitrary bytes: corrupt values are reported to the caller, which replies
// Redis's INVALIDOBJ or WRONGTYPE error.
//
// It may import the standard library and server/keyspace (the size helpers
// of string values).
package hll
