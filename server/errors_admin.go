package server

import "github.com/vigil-kv/vigil/internal/netshell"

// Redis 7.0 error replies of the administrative commands (networking.c
// clientCommand, config.c, server.c, slowlog.c, latency.c, debug.c); the
// shared ones are in errors.go.
const (
	ErrTimeoutNegative     = "ERR timeout is negative"
	ErrNoConfigFile        = "ERR The server is running without a config file"
	ErrSlowlogCount        = "ERR count should be greater than or equal to -1"
	ErrInvalidCommand      = "ERR Invalid command specified"
	ErrNoKeyArguments      = "ERR The command has no key arguments"
	ErrInvalidArgCount     = "ERR Invalid number of arguments specified for command"
	ErrInvalidArguments    = "ERR Invalid arguments specified for command"
	ErrClusterDisabled     = "ERR This instance has cluster support disabled"
	ErrNoShutdown          = "ERR No shutdown in progress."
	ErrShutdownFailed      = "ERR Errors trying to SHUTDOWN. Check logs."
	ErrReplicaKeyspace     = "ERR Replica can't interact with the keyspace"
	ErrMonitorDenyBlocking = "ERR MONITOR isn't allowed for DENY BLOCKING client"
	ErrTimeoutFloat        = "ERR timeout is not a float or out of range"
	// ErrUnblocked is the reply of a client unblocked by CLIENT UNBLOCK
	// ERROR (no ERR prefix).
	ErrUnblocked = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
)

// errSubcommandSyntax is addReplySubcommandSyntaxError: cmd is the
// container's name in upper case.
var errSubcommandSyntax = netshell.ErrSubcommandSyntax

// errLatencyNoSamples is LATENCY HISTORY/GRAPH for an event without data.
func errLatencyNoSamples(event []byte) string {
	return "ERR No samples available for event '" + string(event) + "'"
}
