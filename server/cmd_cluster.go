package server

import "strings"

// CLUSTER, ASKING, MODULE, LOLWUT and RESTORE-ASKING as redis-server 7.0
// answers them without cluster support and without modules: clients probe
// them (cluster-aware clients send CLUSTER INFO or CLUSTER SLOTS,
// redis-cli and monitoring tools MODULE LIST), so the table has every
// name, with Redis's arity, flags and ACL categories (COMMAND INFO), and
// each answers as redis-server does with cluster-enabled no.

func init() {
	adm := FlagAdmin | FlagStale | FlagNoAsyncLoading
	admACL := []string{"admin", "slow", "dangerous"}
	slow := []string{"slow"}
	cl := cmdClusterDisabled
	register(
		&Command{Name: "cluster", Arity: -2, ACL: slow, Subs: []*Command{
			{Name: "addslots", Arity: -3, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "addslotsrange", Arity: -4, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "bumpepoch", Arity: 2, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "count-failure-reports", Arity: 3, Flags: FlagAdmin | FlagStale, ACL: admACL, Handler: cl},
			{Name: "countkeysinslot", Arity: 3, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "delslots", Arity: -3, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "delslotsrange", Arity: -4, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "failover", Arity: -2, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "flushslots", Arity: 2, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "forget", Arity: 3, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "getkeysinslot", Arity: 4, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: slow, Handler: cl},
			{Name: "info", Arity: 2, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "keyslot", Arity: 3, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "links", Arity: 2, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "meet", Arity: -4, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "myid", Arity: 2, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "nodes", Arity: 2, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "replicas", Arity: 3, Flags: FlagAdmin | FlagStale, ACL: admACL, Handler: cl},
			{Name: "replicate", Arity: 3, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "reset", Arity: -2, Flags: FlagAdmin | FlagNoScript | FlagStale, ACL: admACL, Handler: cl},
			{Name: "saveconfig", Arity: 2, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "set-config-epoch", Arity: 3, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "setslot", Arity: -4, Flags: adm, ACL: admACL, Handler: cl},
			{Name: "shards", Arity: 2, Flags: FlagStale, ACL: slow, Handler: cl},
			{Name: "slaves", Arity: 3, Flags: FlagAdmin | FlagStale, ACL: admACL, Handler: cl},
			{Name: "slots", Arity: 2, Flags: FlagStale, ACL: slow, Handler: cl},
		}},
		&Command{Name: "asking", Arity: 1, Flags: FlagFast, ACL: []string{"fast", "connection"}, Handler: cl},
		&Command{Name: "module", Arity: -2, ACL: slow, Subs: []*Command{
			{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: slow, Handler: helpHandler("MODULE", moduleHelp)},
			{Name: "list", Arity: 2, Flags: FlagAdmin | FlagNoScript, ACL: admACL, Handler: cmdModuleList},
			{Name: "load", Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagProtected, ACL: admACL, Handler: cmdModuleLoad},
			{Name: "loadex", Arity: -3, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagProtected, ACL: admACL, Handler: cmdModuleLoad},
			{Name: "unload", Arity: 3, Flags: FlagAdmin | FlagNoScript | FlagNoAsyncLoading | FlagProtected, ACL: admACL, Handler: cmdModuleUnload},
		}},
		&Command{Name: "lolwut", Arity: -1, Flags: FlagReadonly | FlagFast, ACL: []string{"read", "fast"}, Handler: cmdLolwut},
		// restoreCommand: without cluster support RESTORE-ASKING is RESTORE.
		&Command{Name: "restore-asking", Arity: -4, Flags: FlagWrite | FlagDenyOOM | FlagAsking, FirstKey: 1, LastKey: 1, Step: 1,
			ACL: []string{"keyspace", "write", "slow", "dangerous"}, Handler: cmdRestore},
	)
}

// Every CLUSTER subcommand, and ASKING, answer ErrClusterDisabled
// (cmdClusterDisabled, cmd_admin.go), as clusterCommand does when
// cluster-enabled is no.

var moduleHelp = []string{
	"LIST",
	"    Return a list of loaded modules.",
	"LOAD <path> [<arg> ...]",
	"    Load a module library from <path>, passing to it any optional arguments.",
	"LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
	"    Load a module library from <path>, while passing it module configurations and optional arguments.",
	"UNLOAD <name>",
	"    Unload a module.",
}

// cmdModuleList: no module is ever loaded.
func cmdModuleList(c *Client, args [][]byte) { c.w.ArrayLen(0) }

// cmdModuleLoad is MODULE LOAD/LOADEX (once enable-module-command let it
// through): Vigil cannot load Redis modules, so every load fails as a
// failed dlopen does in Redis, logged as Redis logs it.
func cmdModuleLoad(c *Client, args [][]byte) {
	c.srv.log.Warn().Msgf("Module %s failed to load: Vigil does not load Redis modules", args[2])
	c.w.Error("ERR Error loading the extension. Please check the server logs.")
}

func cmdModuleUnload(c *Client, args [][]byte) {
	c.w.Error("ERR Error unloading module: no such module with that name")
}

// protectedAllowed is allowProtectedAction for a CMD_PROTECTED command:
// MODULE LOAD/LOADEX/UNLOAD follow enable-module-command, DEBUG
// enable-debug-command.
func (c *Client) protectedAllowed(cmd *Command) (bool, string) {
	if cmd.Parent() != nil && cmd.Parent().Name == "module" {
		return c.protectedAction(c.srv.cfg.EnableModuleCommand), ErrModuleDisabled
	}
	return c.debugAllowed(), ErrDebugDisabled
}

// ErrModuleDisabled is processCommand's rejection of a protected MODULE
// subcommand.
const ErrModuleDisabled = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."

// cmdLolwut is LOLWUT [VERSION v] ...: as lolwutCommand, the VERSION
// option is an integer; Redis draws art for versions 5 and 6 (random
// art, never twice the same) and for any other version, its own included,
// answers its version line, which is what Vigil answers for all.
func cmdLolwut(c *Client, args [][]byte) {
	if len(args) >= 3 && eqFold(args[1], "version") {
		if _, ok := parseInt(args[2]); !ok {
			c.w.Error(ErrNotInteger)
			return
		}
	}
	var b strings.Builder
	b.WriteString("Redis ver. ")
	b.WriteString(RedisVersion)
	b.WriteByte('\n')
	c.w.Verbatim("txt", b.String())
}
