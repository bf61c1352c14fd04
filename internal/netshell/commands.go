package netshell

import "fmt"

// Subcommands builds a container's subcommand table from one both binaries
// declare (Redis 7.0's commands.def rows without handlers), pairing each
// row with its handler; a row without one is a programming error.
func Subcommands[H any](rows []Command[H], handlers map[string]H) []*Command[H] {
	out := make([]*Command[H], 0, len(rows))
	for _, r := range rows {
		h, ok := handlers[r.Name]
		if !ok {
			panic(fmt.Sprintf("no handler for subcommand %s", r.Name))
		}
		sc := r
		sc.Handler = h
		out = append(out, &sc)
	}
	return out
}

const (
	lsFlags  = FlagNoScript | FlagLoading | FlagStale
	admFlags = FlagAdmin | lsFlags
)

var (
	admACL  = []string{"admin", "slow", "dangerous"}
	slowACL = []string{"slow"}
)

// ACLSubcommands is ACL's subcommand table (acl.c, Redis 7.0's
// commands.def), the same for vigil-server and vigil-sentinel, with each
// binary's handlers.
func ACLSubcommands[H any](handlers map[string]H) []*Command[H] {
	return Subcommands([]Command[H]{
		{Name: "cat", Arity: -2, Flags: lsFlags, ACL: slowACL},
		{Name: "deluser", Arity: -3, Flags: admFlags, ACL: admACL},
		{Name: "dryrun", Arity: -4, Flags: admFlags, ACL: admACL},
		{Name: "genpass", Arity: -2, Flags: lsFlags, ACL: slowACL},
		{Name: "getuser", Arity: 3, Flags: admFlags, ACL: admACL},
		{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: slowACL},
		{Name: "list", Arity: 2, Flags: admFlags, ACL: admACL},
		{Name: "load", Arity: 2, Flags: admFlags, ACL: admACL},
		{Name: "log", Arity: -2, Flags: admFlags, ACL: admACL},
		{Name: "save", Arity: 2, Flags: admFlags, ACL: admACL},
		{Name: "setuser", Arity: -3, Flags: admFlags, ACL: admACL},
		{Name: "users", Arity: 2, Flags: admFlags, ACL: admACL},
		{Name: "whoami", Arity: 2, Flags: lsFlags, ACL: slowACL},
	}, handlers)
}

// CommandSubcommands is COMMAND's subcommand table (Redis 7.0's
// commands.def), the same for both binaries, with each binary's handlers.
func CommandSubcommands[H any](handlers map[string]H) []*Command[H] {
	ls := FlagLoading | FlagStale
	conn := []string{"slow", "connection"}
	return Subcommands([]Command[H]{
		{Name: "count", Arity: 2, Flags: ls, ACL: conn},
		{Name: "docs", Arity: -2, Flags: ls, ACL: conn},
		{Name: "getkeys", Arity: -4, Flags: ls, ACL: conn},
		{Name: "getkeysandflags", Arity: -4, Flags: ls, ACL: conn},
		{Name: "help", Arity: 2, Flags: ls, ACL: conn},
		{Name: "info", Arity: -2, Flags: ls, ACL: conn},
		{Name: "list", Arity: -2, Flags: ls, ACL: conn},
	}, handlers)
}
