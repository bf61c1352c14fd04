// Package rdb encodes and decodes Redis 7.0 compatible RDB files (format
// version 10) and DUMP/RESTORE payloads over the keyspace. It imports
// server/keyspace and the standard library only.
//
// Writing follows rdb.c: NewEncoder writes the "REDIS0010" header, the
// AUX fields (rdbSaveInfoAuxFields) and the FUNCTION2 libraries
// (rdbSaveFunctions); WriteItem is rdbSaveKeyValuePair (SELECTDB and
// RESIZEDB as rdbSaveDb when the database changes, EXPIRETIME_MS,
// IDLE/FREQ under an LRU/LFU policy, the type byte of rdbSaveObjectType
// and the value of rdbSaveObject); Finish writes EOF and the CRC-64
// trailer (rdbSaveRio). Values are written as Redis 7.0 writes them: a
// string with rdbSaveRawString's integer and LZF forms; a set as an intset
// blob (type 11) or a plain set (2); a hash as a listpack (16) or plain
// (4); a sorted set as a listpack (17) or ZSET_2 (5, highest score first);
// a list as QUICKLIST_2 (18) with the list's own node layout, inner nodes
// LZF-compressed at list-compress-depth (__quicklistCompressNode). DUMP
// payloads of values without a hashtable are byte for byte Redis's.
//
// Reading (Load) is rdbLoadRioWithLoadingCtx with rdbLoadObject: versions
// 1 to 10, every length and string form, every type Redis 7.0 reads
// (plain, intset, ziplist, zipmap, listpack, quicklist 1 and 2, streams)
// converted to the encoding Redis gives the loaded value under the passed
// EncodingConfig. Streams are read into keyspace.Stream node by node
// (deleted entries included) with their groups and PELs, and written as
// RDB_TYPE_STREAM_LISTPACKS_2 from the same nodes (stream.go).
// Module values and module AUX data are refused, as Redis without the
// module refuses them, and so is the pre-release FUNCTION opcode.
//
// Input is untrusted: errors are *Error with the byte offset and rdb.c's
// wording ("Short read ...", "Wrong RDB checksum ...", "Unknown RDB
// encoding type N", "Duplicate ... detected", "... integrity check
// failed."), nothing panics, and nothing is allocated ahead of the bytes
// that fill it (strings are read in chunks, collections grow as their
// elements arrive, an LZF string may claim at most what its compressed
// bytes can expand to). ParsePayload is verifyDumpPayload + rdbLoadObject
// with RESTORE's errors.
package rdb
