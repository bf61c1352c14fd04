// Package redisutil holds the string routines of Redis 7.0's sds.c and
// util.c that several of Vigil's packages need byte for byte: SplitArgs is
// sdssplitargs (configuration lines, inline requests, the AOF manifest) and
// AppendRepr/Quote its inverse sdscatrepr (CONFIG REWRITE, MONITOR),
// String2ll is string2ll (integer arguments, protocol headers, integer
// encodings), StringMatch is stringmatchlen (KEYS, SCAN, PSUBSCRIBE, CONFIG
// GET, ACL patterns, SENTINEL commands), and LZFCompress/LZFDecompress are liblzf's
// lzf_c.c/lzf_d.c as Redis ships them (RDB strings, DUMP payloads, and the
// quicklist nodes list-compress-depth compresses). One copy here, so the
// configuration parser, the protocol reader, the server, the ACL and the
// sentinel cannot drift apart.
//
// It is a pure leaf: it imports the standard library only, does no I/O, and
// every package, the other leaves (configs, internal/resp, server/keyspace)
// and the sentinel core included, may import it.
package redisutil
