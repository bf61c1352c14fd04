package server

import (
	"sort"
	"strings"

	"github.com/vigil-kv/vigil/internal/netshell"

	"github.com/vigil-kv/vigil/internal/redistext"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// COMMAND and its subcommands (COUNT, DOCS, GETKEYS, GETKEYSANDFLAGS, INFO,
// LIST): every reply derived from the command table and Redis 7.0.15's
// recorded docs (commanddata.go).

func init() {
	ls := FlagLoading | FlagStale
	conn := []string{"slow", "connection"}
	register(
		&Command{Name: "command", Arity: -1, Flags: ls, ACL: conn, Handler: cmdCommand, Subs: netshell.CommandSubcommands(map[string]Handler{
			"count":           cmdCommandCount,
			"docs":            cmdCommandDocs,
			"getkeys":         cmdCommandGetKeys,
			"getkeysandflags": cmdCommandGetKeysAndFlags,
			"help":            helpHandler("COMMAND", commandHelp),
			"info":            cmdCommandInfo,
			"list":            cmdCommandList,
		})},
	)
}

// --- COMMAND -------------------------------------------------------------------

// commandHelp is Redis 7.0's COMMAND HELP text.
var commandHelp = redistext.CommandHelp

// aclCategoryOrder is the order of Redis 7.0's ACL category bits, the
// order COMMAND INFO lists them in.
var aclCategoryOrder = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting",
}

// aclCategories returns the command's categories with the implicit ones
// of setImplicitACLCategories, in Redis's order.
func aclCategories(cmd *Command) []string {
	has := map[string]bool{}
	for _, c := range cmd.ACL {
		has[strings.TrimPrefix(strings.ToLower(c), "@")] = true
	}
	if cmd.Has(FlagWrite) {
		has["write"] = true
	}
	if cmd.Has(FlagReadonly) && !has["scripting"] {
		has["read"] = true
	}
	if cmd.Has(FlagAdmin) {
		has["admin"], has["dangerous"] = true, true
	}
	if cmd.Has(FlagPubSub) {
		has["pubsub"] = true
	}
	if cmd.Has(FlagFast) {
		has["fast"] = true
	}
	if cmd.Has(FlagBlocking) {
		has["blocking"] = true
	}
	if !has["fast"] {
		has["slow"] = true
	}
	out := make([]string, 0, len(has))
	for _, c := range aclCategoryOrder {
		if has[c] {
			out = append(out, c)
		}
	}
	return out
}

// lookupFullName finds "name" or "container|sub" (lookupCommandBySds).
func (s *Server) lookupFullName(name string) *Command {
	name = strings.ToLower(name)
	parent, sub, isSub := strings.Cut(name, "|")
	cmd := s.cmds[parent]
	if cmd == nil || !isSub {
		return cmd
	}
	if !cmd.IsContainer() || strings.Contains(sub, "|") {
		return nil
	}
	return cmd.SubNamed(sub)
}

// lookupArgv finds the command an argv would run (lookupCommand).
func (s *Server) lookupArgv(argv [][]byte) *Command {
	cmd := s.lookup(argv[0])
	if cmd == nil || !cmd.IsContainer() || len(argv) < 2 {
		return cmd
	}
	return cmd.Sub(argv[1])
}

// topCommands returns the commands enabled in this server (after
// rename-command), ordered by name.
func (s *Server) topCommands() []*Command {
	out := make([]*Command, 0, len(s.cmds))
	for _, cmd := range s.cmds {
		out = append(out, cmd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// keySpecFlags derives a key spec's flags from the command's flags: Vigil's
// table has key positions, not Redis's per-spec flags.
func keySpecFlags(cmd *Command) []string {
	switch {
	case cmd.Has(FlagWrite):
		return []string{"RW", "update"}
	case cmd.Has(FlagReadonly):
		return []string{"RO", "access"}
	}
	return []string{"RW"}
}

// movableKeys is CMD_MOVABLE_KEYS (populateCommandMovableKeys): a key
// spec that is not an index begin_search with a range find_keys (LMPOP's
// keynum, a keyword search).
func movableKeys(cmd *Command) bool {
	rc := redisCommands()[cmd.FullName()]
	if rc == nil {
		return false
	}
	for _, ks := range rc.keySpecs() {
		if ks.keynum || ks.keyword != "" || ks.unknownBegin || ks.unknownFnd {
			return true
		}
	}
	return false
}

// writeCommandInfo is addReplyCommandInfo: the 10-element 7.0 entry.
func writeCommandInfo(w *resp.Writer, cmd *Command) {
	w.ArrayLen(10)
	w.BulkString(cmd.FullName())
	w.Int(int64(cmd.Arity))
	flags := cmd.Flags.Names()
	if movableKeys(cmd) && !cmd.Has(FlagMovableKeys) {
		// Derived from the key specs when the table does not say so
		// (FlagMovableKeys prints it in Redis's flag order already).
		flags = append(flags, "movablekeys")
	}
	w.SetLen(len(flags))
	for _, f := range flags {
		w.Simple(f)
	}
	w.Int(int64(cmd.FirstKey))
	w.Int(int64(cmd.LastKey))
	w.Int(int64(cmd.Step))
	cats := aclCategories(cmd)
	w.SetLen(len(cats))
	for _, c := range cats {
		w.Simple("@" + c)
	}
	if rc := redisCommands()[cmd.FullName()]; rc != nil {
		w.Value(rc.info.Elems[infoTips])
		w.Value(rc.info.Elems[infoKeySpecs])
	} else {
		w.SetLen(0)
		writeDerivedKeySpec(w, cmd)
	}
	// addReplyCommandSubCommands: an empty set, or an array.
	if len(cmd.Subs) == 0 {
		w.SetLen(0)
		return
	}
	w.ArrayLen(len(cmd.Subs))
	for _, sub := range cmd.Subs {
		writeCommandInfo(w, sub)
	}
}

// writeDerivedKeySpec writes the key specs of a command Redis does not
// have: one range spec from FirstKey/LastKey/Step, or none.
func writeDerivedKeySpec(w *resp.Writer, cmd *Command) {
	if cmd.FirstKey <= 0 {
		w.SetLen(0)
		return
	}
	w.SetLen(1)
	w.MapLen(3)
	w.BulkString("flags")
	kf := keySpecFlags(cmd)
	w.SetLen(len(kf))
	for _, f := range kf {
		w.Simple(f)
	}
	w.BulkString("begin_search")
	w.MapLen(2)
	w.BulkString("type")
	w.BulkString("index")
	w.BulkString("spec")
	w.MapLen(1)
	w.BulkString("index")
	w.Int(int64(cmd.FirstKey))
	w.BulkString("find_keys")
	w.MapLen(2)
	w.BulkString("type")
	w.BulkString("range")
	w.BulkString("spec")
	w.MapLen(3)
	last := cmd.LastKey
	if last >= 0 {
		last -= cmd.FirstKey
	}
	w.BulkString("lastkey")
	w.Int(int64(last))
	w.BulkString("keystep")
	w.Int(int64(cmd.Step))
	w.BulkString("limit")
	w.Int(0)
}

// cmdCommand is COMMAND with no subcommand: every command's info.
func cmdCommand(c *Client, args [][]byte) {
	cmds := c.srv.topCommands()
	c.w.ArrayLen(len(cmds))
	for _, cmd := range cmds {
		writeCommandInfo(&c.w, cmd)
	}
}

func cmdCommandCount(c *Client, args [][]byte) { c.w.Int(int64(len(c.srv.cmds))) }

func cmdCommandInfo(c *Client, args [][]byte) {
	if len(args) == 2 {
		cmdCommand(c, args)
		return
	}
	c.w.ArrayLen(len(args) - 2)
	for _, a := range args[2:] {
		cmd := c.srv.lookupFullName(string(a))
		if cmd == nil {
			c.w.Null()
			continue
		}
		writeCommandInfo(&c.w, cmd)
	}
}

// cmdCommandList is COMMAND LIST [FILTERBY MODULE name|ACLCAT cat|PATTERN p]:
// command and subcommand full names.
func cmdCommandList(c *Client, args [][]byte) {
	var match func(*Command) bool
	switch {
	case len(args) == 2:
		match = func(*Command) bool { return true }
	case len(args) == 5 && eqFold(args[2], "filterby"):
		val := args[4]
		switch {
		case eqFold(args[3], "module"):
			match = func(*Command) bool { return false } // no modules
		case eqFold(args[3], "aclcat"):
			cat := strings.ToLower(string(val))
			match = func(cmd *Command) bool {
				for _, x := range aclCategories(cmd) {
					if x == cat {
						return true
					}
				}
				return false
			}
		case eqFold(args[3], "pattern"):
			match = func(cmd *Command) bool { return keyspace.GlobMatchString(val, cmd.FullName(), true) }
		default:
			c.w.Error(ErrSyntax)
			return
		}
	default:
		c.w.Error(ErrSyntax)
		return
	}
	var out []string
	for _, cmd := range c.srv.topCommands() {
		if match(cmd) {
			out = append(out, cmd.FullName())
		}
		for _, sub := range cmd.Subs {
			if match(sub) {
				out = append(out, sub.FullName())
			}
		}
	}
	c.w.ArrayLen(len(out))
	for _, n := range out {
		c.w.BulkString(n)
	}
}

// commandKeys returns the key positions of argv for cmd from its
// FirstKey/LastKey/Step (getKeysUsingLegacyRangeSpec); ok is false when
// the argument count does not fit the command.
func commandKeys(cmd *Command, argv [][]byte) []int {
	if cmd.FirstKey <= 0 {
		return nil
	}
	last := cmd.LastKey
	if last < 0 {
		last = len(argv) + last
	}
	step := max(cmd.Step, 1)
	var pos []int
	for i := cmd.FirstKey; i <= last && i < len(argv); i += step {
		pos = append(pos, i)
	}
	return pos
}

// getKeysCommon is getKeysSubcommandImpl's validation for COMMAND
// GETKEYS[ANDFLAGS]: it returns the command and its keys, or false after
// replying an error.
func getKeysCommon(c *Client, args [][]byte) (*Command, []keyRef, bool) {
	argv := args[2:]
	cmd := c.srv.lookupArgv(argv)
	if cmd == nil {
		c.w.Error(ErrInvalidCommand)
		return nil, nil, false
	}
	keys, hasKeys := commandKeyRefs(cmd, argv)
	switch {
	case !hasKeys:
		c.w.Error(ErrNoKeyArguments)
		return nil, nil, false
	case (cmd.Arity > 0 && cmd.Arity != len(argv)) || len(argv) < -cmd.Arity:
		c.w.Error(ErrInvalidArgCount)
		return nil, nil, false
	}
	if len(keys) == 0 && !cmd.Has(FlagNoMandatoryKeys) {
		c.w.Error(ErrInvalidArguments)
		return nil, nil, false
	}
	return cmd, keys, true
}

func cmdCommandGetKeys(c *Client, args [][]byte) {
	_, keys, ok := getKeysCommon(c, args)
	if !ok {
		return
	}
	c.w.ArrayLen(len(keys))
	for _, k := range keys {
		c.w.Bulk(args[2+k.pos])
	}
}

// cmdCommandGetKeysAndFlags replies each key with the flags of the key
// spec that found it (addReplyFlagsForKeyArgs).
func cmdCommandGetKeysAndFlags(c *Client, args [][]byte) {
	_, keys, ok := getKeysCommon(c, args)
	if !ok {
		return
	}
	c.w.ArrayLen(len(keys))
	for _, k := range keys {
		c.w.ArrayLen(2)
		c.w.Bulk(args[2+k.pos])
		c.w.SetLen(len(k.flags))
		for _, f := range k.flags {
			c.w.Simple(f)
		}
	}
}

// docGroupByACL names the documentation group of a command Redis does not
// have, from its ACL categories.
func docGroupByACL(cmd *Command) string {
	groups := map[string]string{
		"string": "string", "list": "list", "hash": "hash", "set": "set", "sortedset": "sorted-set",
		"stream": "stream", "bitmap": "bitmap", "hyperloglog": "hyperloglog", "geo": "geo",
		"pubsub": "pubsub", "scripting": "scripting", "transaction": "transactions",
		"connection": "connection", "keyspace": "generic",
	}
	for _, c := range aclCategories(cmd) {
		if g, ok := groups[c]; ok {
			return g
		}
	}
	return "server"
}

// writeCommandDocs is addReplyCommandDocs: Redis 7.0.15's recorded docs of
// the command (redisCommands), field for field and in Redis's order, then
// "subcommands" with the docs of the subcommands Vigil implements. A command
// Redis does not have gets its group only, as Redis gives a command
// without docs.
func writeCommandDocs(w *resp.Writer, cmd *Command) {
	n := 0
	if len(cmd.Subs) > 0 {
		n++
	}
	rc := redisCommands()[cmd.FullName()]
	if rc != nil {
		n += len(rc.docs.Elems) / 2
		w.MapLen(n)
		for _, e := range rc.docs.Elems {
			w.Value(e)
		}
	} else {
		w.MapLen(n + 1)
		w.BulkString("group")
		w.BulkString(docGroupByACL(cmd))
	}
	if len(cmd.Subs) > 0 {
		w.BulkString("subcommands")
		w.MapLen(len(cmd.Subs))
		for _, sub := range cmd.Subs {
			w.BulkString(sub.FullName())
			writeCommandDocs(w, sub)
		}
	}
}

// cmdCommandDocs is commandDocsCommand: every command's docs, or those of
// the named commands that exist (full names, "container|sub").
func cmdCommandDocs(c *Client, args [][]byte) {
	var cmds []*Command
	if len(args) == 2 {
		cmds = c.srv.topCommands()
	} else {
		for _, a := range args[2:] {
			if cmd := c.srv.lookupFullName(string(a)); cmd != nil {
				cmds = append(cmds, cmd)
			}
		}
	}
	c.w.MapLen(len(cmds))
	for _, cmd := range cmds {
		c.w.BulkString(cmd.FullName())
		writeCommandDocs(&c.w, cmd)
	}
}
