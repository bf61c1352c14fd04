package netshell

// Subcommand is one row of a subcommand table as both binaries declare
// it: the name, the arity, the flag names (COMMAND INFO's, e.g. "admin",
// "noscript") and the ACL categories (without '@'). Each binary pairs a
// handler with each name.
type Subcommand struct {
	Name  string
	Arity int
	Flags []string
	ACL   []string
}

var (
	lsFlags  = []string{"noscript", "loading", "stale"}
	admFlags = []string{"admin", "noscript", "loading", "stale"}
	admACL   = []string{"admin", "slow", "dangerous"}
	slowACL  = []string{"slow"}
)

// ACLSubcommands is ACL's subcommand table (acl.c, Redis 7.0's
// commands.def), the same for vigil-server and vigil-sentinel.
var ACLSubcommands = []Subcommand{
	{"cat", -2, lsFlags, slowACL},
	{"deluser", -3, admFlags, admACL},
	{"dryrun", -4, admFlags, admACL},
	{"genpass", -2, lsFlags, slowACL},
	{"getuser", 3, admFlags, admACL},
	{"help", 2, []string{"loading", "stale"}, slowACL},
	{"list", 2, admFlags, admACL},
	{"load", 2, admFlags, admACL},
	{"log", -2, admFlags, admACL},
	{"save", 2, admFlags, admACL},
	{"setuser", -3, admFlags, admACL},
	{"users", 2, admFlags, admACL},
	{"whoami", 2, lsFlags, slowACL},
}
