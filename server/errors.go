package server

// Redis 7.0 error replies, in one place (design.md: one source of truth).
// Each is the text after the leading '-'.
const (
	ErrSyntax          = "ERR syntax error"
	ErrNotInteger      = "ERR value is not an integer or out of range"
	ErrNotFloat        = "ERR value is not a valid float"
	ErrWrongType       = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNoSuchKey       = "ERR no such key"
	ErrNoAuth          = "NOAUTH Authentication required."
	ErrWrongPass       = "WRONGPASS invalid username-password pair or user is disabled."
	ErrAuthNotSet      = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrDBIndex         = "ERR DB index is out of range"
	ErrMaxClients      = "ERR max number of clients reached"
	ErrIncrOverflow    = "ERR increment or decrement would overflow"
	ErrIncrNaN         = "ERR increment would produce NaN or Infinity"
	ErrStringTooLong   = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrInvalidExpire   = "ERR invalid expire time in '%s' command"
	ErrSameObject      = "ERR source and destination objects are the same"
	ErrNoProto         = "NOPROTO unsupported protocol version"
	ErrReadOnly        = "READONLY You can't write against a read only replica."
	ErrDebugDisabled   = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
	ErrOffsetRange     = "ERR offset is out of range"
	ErrTimeout         = "ERR timeout is not an integer or out of range"
	ErrPubSubContext   = "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
	ErrNoSuchClient    = "ERR No such client"
	ErrClientNameSpace = "ERR Client names cannot contain spaces, newlines or special characters."

	// ProtectedModeDenied is Redis 7.0's networking.c message to non-loopback
	// clients in protected mode.
	ProtectedModeDenied = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
)

// errWrongArgs formats Redis's arity error for a command's full name
// ("get", "config|get").
func errWrongArgs(fullname string) string {
	return "ERR wrong number of arguments for '" + fullname + "' command"
}

// errUnknownSubcommand is Redis 7.0's reply to an unknown subcommand.
func errUnknownSubcommand(sub, cmd string) string {
	return "ERR unknown subcommand '" + trunc(sub, 128) + "'. Try " + cmd + " HELP."
}

// errUnknownCommand is Redis 7.0's processCommand reply to an unknown command.
func errUnknownCommand(args [][]byte) string {
	b := make([]byte, 0, 64)
	for i := 1; i < len(args) && len(b) < 128; i++ {
		room := 128 - len(b)
		a := args[i]
		if len(a) > room {
			a = a[:room]
		}
		b = append(b, '\'')
		b = append(b, a...)
		b = append(b, '\'', ' ')
	}
	return "ERR unknown command '" + trunc(string(args[0]), 128) + "', with args beginning with: " + string(b)
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
