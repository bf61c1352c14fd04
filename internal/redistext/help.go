package redistext

import "github.com/vigil-kv/vigil/internal/resp"

// Help writes addReplyHelp's reply for cmd ("CLIENT"): the usage line, the
// lines, and HELP's own entry.
func Help(w *resp.Writer, cmd string, lines []string) {
	w.ArrayLen(len(lines) + 3)
	w.Simple(cmd + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		w.Simple(l)
	}
	w.Simple("HELP")
	w.Simple("    Prints this help.")
}

// ClientHelp is Redis 7.0's CLIENT HELP text (the sentinel prints the same).
var ClientHelp = []string{
	"CACHING (YES|NO)",
	"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
	"GETREDIR",
	"    Return the client ID we are redirecting to when tracking is enabled.",
	"GETNAME",
	"    Return the name of the current connection.",
	"ID",
	"    Return the ID of the current connection.",
	"INFO",
	"    Return information about the current client connection.",
	"KILL <ip:port>",
	"    Kill connection made from <ip:port>.",
	"KILL <option> <value> [<option> <value> [...]]",
	"    Kill connections. Options are:",
	"    * ADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made from the specified address",
	"    * LADDR (<ip:port>|<unixsocket>:0)",
	"      Kill connections made to specified local address",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Kill connections by type.",
	"    * USER <username>",
	"      Kill connections authenticated by <username>.",
	"    * SKIPME (YES|NO)",
	"      Skip killing current connection (default: yes).",
	"LIST [options ...]",
	"    Return information about client connections. Options:",
	"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
	"      Return clients of specified type.",
	"UNPAUSE",
	"    Stop the current client pause, resuming traffic.",
	"PAUSE <timeout> [WRITE|ALL]",
	"    Suspend all, or just write, clients for <timeout> milliseconds.",
	"REPLY (ON|OFF|SKIP)",
	"    Control the replies sent to the current connection.",
	"SETNAME <name>",
	"    Assign the name <name> to the current connection.",
	"UNBLOCK <clientid> [TIMEOUT|ERROR]",
	"    Unblock the specified blocked client.",
	"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
	"         [OPTIN] [OPTOUT] [NOLOOP]",
	"    Control server assisted client side caching.",
	"TRACKINGINFO",
	"    Report tracking status for the current connection.",
	"NO-EVICT (ON|OFF)",
	"    Protect current client connection from eviction.",
}

// CommandHelp is Redis 7.0's COMMAND HELP text.
var CommandHelp = []string{
	"(no subcommand)",
	"    Return details about all Redis commands.",
	"COUNT",
	"    Return the total number of commands in this Redis server.",
	"LIST",
	"    Return a list of all commands in this Redis server.",
	"INFO [<command-name> ...]",
	"    Return details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about multiple Redis commands.",
	"    If no command names are given, documentation details for all",
	"    commands are returned.",
	"GETKEYS <full-command>",
	"    Return the keys from a full Redis command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full Redis command.",
}

// Ping is pingCommand: PONG, or the argument as a bulk string; a RESP2
// client in pub/sub context gets ["pong", argument or ""] instead.
func Ping[T ~string | ~[]byte](w *resp.Writer, pubsubRESP2 bool, args []T) {
	switch {
	case len(args) > 2:
		w.Error(WrongArgs("ping"))
	case pubsubRESP2:
		w.ArrayLen(2)
		w.BulkString("pong")
		if len(args) == 2 {
			w.Bulk([]byte(args[1]))
		} else {
			w.BulkString("")
		}
	case len(args) == 2:
		w.Bulk([]byte(args[1]))
	default:
		w.Simple("PONG")
	}
}

// Hello writes helloCommand's reply map for the connection id: server,
// version, proto (w's, already switched), id, mode, role (left out when
// empty, as Sentinel leaves it out) and modules.
func Hello(w *resp.Writer, version string, id int64, mode, role string) {
	n := 7
	if role == "" {
		n = 6
	}
	w.MapLen(n)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(version)
	w.BulkString("proto")
	w.Int(int64(w.Proto))
	w.BulkString("id")
	w.Int(id)
	w.BulkString("mode")
	w.BulkString(mode)
	if role != "" {
		w.BulkString("role")
		w.BulkString(role)
	}
	w.BulkString("modules")
	w.ArrayLen(0)
}
