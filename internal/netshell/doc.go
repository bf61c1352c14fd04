// Package netshell is the network and command shell both binaries
// (vigil-server and vigil-sentinel) serve through: the listeners (one
// tcp4/tcp6 rule per bind address, the unix socket) and the accept loop,
// the admission of a new connection (maxclients, protected mode, TCP
// keepalive), the pub/sub hub, the subcommand tables both declare (ACL's),
// HELLO's parser, and the bounded output queue the sentinel writes
// through. The server's hot path (its read loop, raw reads and writes)
// stays in server: nothing here is called per command there.
//
// It imports the configuration, the RESP codec, the reply texts and the
// Redis string routines; never server or sentinel/daemon
// (internal/archtest), which depend on it.
package netshell
