// Package resp implements the RESP2/RESP3 wire protocol: a resumable request
// reader (multibulk and inline, with proto-max-bulk-len and argument-count limits;
// in its other modes the one parser of a replica's master stream and of the
// append-only file, giving each command's raw bytes and stream offset),
// a reply writer that appends to a byte slice, and a reply reader used by clients
// of other instances (the sentinel daemon, replication).
//
// It owns the codec only and imports the standard library and the leaf
// internal/redisutil (sdssplitargs for inline requests) alone.
package resp
