package redistext

// Error replies that vigil-server and vigil-sentinel share (Redis 7.0's
// server.c, networking.c and object.c texts).
const (
	ErrSyntax       = "ERR syntax error"
	ErrNotInteger   = "ERR value is not an integer or out of range"
	ErrNoSuchClient = "ERR No such client"
	ErrClientName   = "ERR Client names cannot contain spaces, newlines or special characters."
	ErrNoProto      = "NOPROTO unsupported protocol version"
	ErrNoAuth       = "NOAUTH Authentication required."
	ErrWrongPass    = "WRONGPASS invalid username-password pair or user is disabled."
	ErrAuthNotSet   = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	ErrHelloNoAuth  = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"

	// ErrProtectedMode is networking.c's message to a non-loopback client
	// in protected mode.
	ErrProtectedMode = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: 1) Just disable protected mode sending the command 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from the same host the server is running, however MAKE SURE Redis is not publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change permanent. 2) Alternatively you can just disable the protected mode by editing the Redis configuration file, and setting the protected mode option to 'no', and then restarting the server. 3) If you started the server manually just for testing, restart it with the '--protected-mode no' option. 4) Setup a an authentication password for the default user. NOTE: You only need to do one of the above things in order for the server to start accepting connections from the outside."
)

// WrongArgs is Redis's arity error for a command's full name ("get",
// "config|get").
func WrongArgs(fullname string) string {
	return "ERR wrong number of arguments for '" + fullname + "' command"
}

// UnknownSubcommand is Redis 7.0's reply to an unknown subcommand of cmd
// (the container's name as the user should type it, "CLIENT").
func UnknownSubcommand(sub, cmd string) string {
	return "ERR unknown subcommand '" + Trunc(sub, 128) + "'. Try " + cmd + " HELP."
}

// UnknownCommand is processCommand's reply to an unknown command: the name
// and the first arguments, each quoted, at most 128 bytes of them.
func UnknownCommand[T ~string | ~[]byte](args []T) string {
	b := make([]byte, 0, 64)
	for i := 1; i < len(args) && len(b) < 128; i++ {
		a := args[i]
		if room := 128 - len(b); len(a) > room {
			a = a[:room]
		}
		b = append(b, '\'')
		b = append(b, a...)
		b = append(b, '\'', ' ')
	}
	return "ERR unknown command '" + Trunc(string(args[0]), 128) + "', with args beginning with: " + string(b)
}

// Trunc cuts s to at most n bytes, as Redis's %.128s formats do.
func Trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
