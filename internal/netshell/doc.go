// Package netshell is the network shell both binaries (vigil-server and
// vigil-sentinel) serve through: the listeners (one tcp4/tcp6 rule per bind
// address, the unix socket), the admission of a new connection (maxclients,
// protected mode, TCP keepalive) and the pub/sub hub.
//
// It imports the configuration, the RESP codec and the Redis string
// routines; never server or sentinel/daemon (internal/archtest), which
// depend on it.
package netshell
