package acl

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// Reply texts of the ACL command, Redis 7.0.15's, printed identically by
// both binaries.
const (
	ErrNoACLFile  = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."
	ErrSaveFailed = "ERR There was an error trying to save the ACLs. Please check the server logs for more information"
	ErrGenPassArg = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"
)

// HelpLines is ACL HELP's text (without the frame redistext.Help adds).
var HelpLines = []string{
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
}

// ErrSubSyntax is addReplySubcommandSyntaxError for ACL, replied when a
// subcommand has too many arguments.
func ErrSubSyntax(sub string) string {
	if len(sub) > 128 {
		sub = sub[:128]
	}
	return "ERR unknown subcommand or wrong number of arguments for '" + sub + "'. Try ACL HELP."
}

// NoPermMessage is getAclErrorMessage without verbose, the -NOPERM reply
// of a denied command (name is the command's full name).
func NoPermMessage(res Result, name string) string {
	switch res {
	case DeniedCmd:
		return "NOPERM this user has no permissions to run the '" + name + "' command"
	case DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "NOPERM no permission"
}

// ExecNoPermMessage is EXEC's reply for a queued command the ACL no longer
// allows (execCommand's re-check).
func ExecNoPermMessage(res Result) string {
	reason := "no permission"
	switch res {
	case DeniedCmd:
		reason = "no permission to execute the command or subcommand"
	case DeniedKey:
		reason = "no permission to touch the specified keys"
	case DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// DryRunMessage is ACL DRYRUN's bulk reply for a denial (getAclErrorMessage
// verbose); arg is the denied key or channel.
func DryRunMessage(res Result, name, arg string) string {
	switch res {
	case DeniedCmd:
		return "This user has no permissions to run the '" + name + "' command"
	case DeniedKey:
		return "This user has no permissions to access the '" + arg + "' key"
	default:
		return "This user has no permissions to access the '" + arg + "' channel"
	}
}

// WriteCat is ACL CAT [category] (args: "acl", "cat", ...).
func WriteCat(w *resp.Writer, t *Table, args []string) {
	if len(args) == 2 {
		w.ArrayLen(len(Categories))
		for _, cat := range Categories {
			w.BulkString(cat)
		}
		return
	}
	if len(args) > 3 {
		w.Error(ErrSubSyntax(args[1]))
		return
	}
	names, ok := t.InCategory(args[2])
	if !ok {
		w.Error("ERR Unknown category '" + args[2] + "'")
		return
	}
	w.ArrayLen(len(names))
	for _, n := range names {
		w.BulkString(n)
	}
}

// WriteGenPass is ACL GENPASS [bits]: bits of crypto/rand as hex.
func WriteGenPass(w *resp.Writer, args []string) {
	bits := int64(256)
	if len(args) == 3 {
		n, ok := redisutil.String2ll(args[2])
		if !ok || n <= 0 || n > 4096 {
			w.Error(ErrGenPassArg)
			return
		}
		bits = n
	} else if len(args) > 3 {
		w.Error(ErrSubSyntax(args[1]))
		return
	}
	chars := (bits + 3) / 4
	b := make([]byte, (chars+1)/2)
	_, _ = rand.Read(b)
	w.BulkString(hex.EncodeToString(b)[:chars])
}

// WriteUsers is ACL USERS.
func WriteUsers(w *resp.Writer, s *Store) {
	names := s.Names()
	w.ArrayLen(len(names))
	for _, n := range names {
		w.BulkString(n)
	}
}

// WriteList is ACL LIST.
func WriteList(w *resp.Writer, s *Store) {
	lines := s.Lines()
	w.ArrayLen(len(lines))
	for _, l := range lines {
		w.BulkString(l)
	}
}

// WriteGetUser is ACL GETUSER's reply for u (nil: a null reply): flags,
// passwords, the root selector's commands, keys and channels, then the
// other selectors.
func WriteGetUser(w *resp.Writer, u *User) {
	if u == nil {
		w.Null()
		return
	}
	var flags []string
	for _, f := range userFlagNames {
		if u.flags&f.flag != 0 {
			flags = append(flags, f.name)
		}
	}
	w.MapLen(6)
	w.BulkString("flags")
	w.SetLen(len(flags))
	for _, f := range flags {
		w.BulkString(f)
	}
	w.BulkString("passwords")
	w.ArrayLen(len(u.passwords))
	for _, p := range u.passwords {
		w.BulkString(p)
	}
	root := u.selectors[0]
	w.BulkString("commands")
	w.BulkString(root.commandRules())
	w.BulkString("keys")
	w.BulkString(root.keysString())
	w.BulkString("channels")
	w.BulkString(root.channelsString())
	w.BulkString("selectors")
	w.ArrayLen(len(u.selectors) - 1)
	for _, s := range u.selectors[1:] {
		w.MapLen(3)
		w.BulkString("commands")
		w.BulkString(s.commandRules())
		w.BulkString("keys")
		w.BulkString(s.keysString())
		w.BulkString("channels")
		w.BulkString(s.channelsString())
	}
}

// WriteLog is ACL LOG [count|RESET] (args: "acl", "log", ...) over s, at
// now.
func WriteLog(w *resp.Writer, s *Store, args []string, now time.Time) {
	count := int64(10)
	if len(args) == 3 {
		if strings.EqualFold(args[2], "reset") {
			s.ResetLog()
			w.OK()
			return
		}
		n, ok := redisutil.String2ll(args[2])
		if !ok {
			w.Error("ERR value is not an integer or out of range")
			return
		}
		count = max(n, 0)
	} else if len(args) > 3 {
		w.Error(ErrSubSyntax(args[1]))
		return
	}
	entries := s.Log(int(min(count, int64(len(s.log)))))
	w.ArrayLen(len(entries))
	for _, e := range entries {
		w.MapLen(7)
		w.BulkString("count")
		w.Int(int64(e.Count))
		w.BulkString("reason")
		w.BulkString(e.Reason)
		w.BulkString("context")
		w.BulkString(e.Context)
		w.BulkString("object")
		w.BulkString(e.Object)
		w.BulkString("username")
		w.BulkString(e.Username)
		w.BulkString("age-seconds")
		w.Double(float64(now.Sub(e.Created).Milliseconds()) / 1000)
		w.BulkString("client-info")
		w.BulkString(e.ClientInfo)
	}
}
