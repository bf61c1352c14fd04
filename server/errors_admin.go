package server

// Redis 7.0 error replies of the administrative commands (networking.c
// clientCommand, config.c, server.c, slowlog.c, latency.c, debug.c); the
// shared ones are in errors.go.
const (
	ErrInvalidClientID     = "ERR Invalid client ID"
	ErrClientIDPositive    = "ERR client-id should be greater than 0"
	ErrTimeoutNegative     = "ERR timeout is negative"
	ErrPauseMode           = "ERR CLIENT PAUSE mode must be WRITE or ALL"
	ErrUnblockReason       = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
	ErrCachingNoTracking   = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
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

	// ErrTrackingUnsupported is Vigil's own: client-side caching
	// (CLIENT TRACKING ON) is not implemented.
	ErrTrackingUnsupported = "ERR CLIENT TRACKING is not supported by this server"
)

// errUnknownClientType is clientCommand's reply to a bad TYPE.
func errUnknownClientType(t []byte) string { return "ERR Unknown client type '" + string(t) + "'" }

// errNoSuchUser is CLIENT KILL USER's reply for an unknown user.
func errNoSuchUser(u []byte) string { return "ERR No such user '" + string(u) + "'" }

// errSubcommandSyntax is addReplySubcommandSyntaxError: cmd is the
// container's name in upper case.
func errSubcommandSyntax(sub []byte, cmd string) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + trunc(string(sub), 128) + "'. Try " + cmd + " HELP."
}

// errLatencyNoSamples is LATENCY HISTORY/GRAPH for an event without data.
func errLatencyNoSamples(event []byte) string {
	return "ERR No samples available for event '" + string(event) + "'"
}
