// Package redistext holds the reply texts and small checks that
// vigil-server and vigil-sentinel both answer with, word for word as Redis
// 7.0 does: the shared error strings, the CLIENT and COMMAND help, the HELP
// reply's frame, the PING and HELLO replies, and clientSetName's name
// check. One copy, so the two binaries cannot drift apart.
//
// It is a leaf below server: it imports internal/resp and the standard
// library only, and is imported by server and sentinel/daemon (the
// dependency rule lets both import server/*).
package redistext
