// Package redisutil holds the string routines of Redis 7.0's sds.c and
// util.c that several of Vigil's packages need byte for byte: SplitArgs is
// sdssplitargs (configuration lines, inline requests, the AOF manifest),
// String2ll is string2ll (integer arguments, protocol headers, integer
// encodings). One copy here, so the configuration parser, the protocol
// reader, the server and its encoders cannot drift apart.
//
// It is a leaf: it imports the standard library only, and every package,
// the other leaves (configs, internal/resp, server/keyspace) included, may
// import it.
package redisutil
