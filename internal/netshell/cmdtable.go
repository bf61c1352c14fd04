package netshell

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/vigil-kv/vigil/internal/redistext"
)

// Flag is a command flag, named as in Redis 7.0's command table (server.h
// CMD_*). Both binaries' tables use it.
type Flag uint32

// Command flags. Their Redis names (Flag.Names) are what COMMAND INFO prints,
// except may_replicate, which Redis 7.0 hides there.
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagNoMandatoryKeys
	FlagNoMulti
	FlagAllowBusy
	FlagNoAsyncLoading
	FlagProtected   // CMD_PROTECTED (DEBUG): gated by enable-debug-command, not shown by COMMAND
	FlagMovableKeys // CMD_MOVABLE_KEYS: keys found by key specs other than a range (SINTERCARD's numkeys)
	FlagAsking      // CMD_ASKING (RESTORE-ASKING): served to ASKING clients in cluster mode
	// FlagTouchesArbitraryKeys is CMD_TOUCHES_ARBITRARY_KEYS (SCAN,
	// RANDOMKEY: they may lazily expire keys they were not given), not
	// shown by COMMAND: run directly, the DELs of the keys they expire are
	// not wrapped in MULTI/EXEC (server/propagate.go).
	FlagTouchesArbitraryKeys
)

// flagNames is addReplyFlagsForCommand's order.
var flagNames = []struct {
	f    Flag
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"},
	{FlagBlocking, "blocking"}, {FlagLoading, "loading"}, {FlagStale, "stale"},
	{FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"}, {FlagAsking, "asking"},
	{FlagFast, "fast"}, {FlagNoAuth, "no_auth"},
	{FlagNoMandatoryKeys, "no_mandatory_keys"}, {FlagNoAsyncLoading, "no_async_loading"},
	{FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// Names lists the flag names in Redis's order, as addReplyFlagsForCommand
// prints them (may_replicate is "hidden on purpose" there).
func (f Flag) Names() []string {
	var out []string
	for _, n := range flagNames {
		if f&n.f != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Command is one entry of a command table (server.c's redisCommand), the
// same type in both binaries; H is the binary's handler type. Arity is
// Redis's: N means exactly N arguments including the name, -N at least N.
// FirstKey/LastKey/Step locate keys (LastKey -1 = last argument). Subs are
// the subcommands of a container (CONFIG GET ...), whose Name is the
// subcommand's. NewTable fills in the rest.
type Command[H any] struct {
	Name     string
	Arity    int
	Flags    Flag
	FirstKey int
	LastKey  int
	Step     int
	ACL      []string // ACL categories without '@'
	Handler  H
	Subs     []*Command[H]

	parent     *Command[H]
	fullName   string // "get", "config|get"
	idx        int    // index into Table.All
	subMap     map[string]*Command[H]
	hasHandler bool
}

// FullName is Redis's fullname: "name" or "parent|sub".
func (c *Command[H]) FullName() string { return c.fullName }

// Parent is a subcommand's container (nil for a top-level command).
func (c *Command[H]) Parent() *Command[H] { return c.parent }

// Index is the command's place in its table's All (per-command statistics).
func (c *Command[H]) Index() int { return c.idx }

// Has reports whether any of the flags f is set.
func (c *Command[H]) Has(f Flag) bool { return c.Flags&f != 0 }

// IsContainer reports whether the command has subcommands.
func (c *Command[H]) IsContainer() bool { return c.subMap != nil }

// Sub finds a subcommand by name, ASCII case-insensitively (nil if none).
func (c *Command[H]) Sub(name []byte) *Command[H] {
	if c.subMap == nil {
		return nil
	}
	var buf [32]byte
	if len(name) > len(buf) {
		return c.subMap[strings.ToLower(string(name))]
	}
	for i, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return c.subMap[string(buf[:len(name)])]
}

// SubNamed is Sub for a lower-case name.
func (c *Command[H]) SubNamed(lowerName string) *Command[H] { return c.subMap[lowerName] }

// ArityOK is Redis's arity check of n arguments (the name included).
func ArityOK(arity, n int) bool {
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// Resolve is the command lookup both binaries share (processCommand's
// lookupCommand and its arity check) for argv, whose name found c: a
// container resolves its subcommand (a container with a handler of its
// own, as the server's COMMAND, runs it when called without one), then the
// arity is checked. It returns the command to run and "", or an error text
// and the command charged with it: the container or subcommand for a wrong
// number of arguments, nil for an unknown subcommand (Redis finds no
// command at all).
func (c *Command[H]) Resolve(argv [][]byte) (*Command[H], string) {
	if c.subMap != nil && (len(argv) >= 2 || !c.hasHandler) {
		if len(argv) < 2 {
			return c, redistext.WrongArgs(c.fullName)
		}
		sub := c.Sub(argv[1])
		if sub == nil {
			return nil, redistext.UnknownSubcommand(string(argv[1]), strings.ToUpper(c.Name))
		}
		c = sub
	}
	if !ArityOK(c.Arity, len(argv)) {
		return c, redistext.WrongArgs(c.fullName)
	}
	return c, ""
}

// LookupArgv is ACL DRYRUN's lookup (lookupCommand and its arity check):
// the command argv would run from m, or the error to reply.
func LookupArgv[H any](m map[string]*Command[H], argv [][]byte) (*Command[H], string) {
	cmd, msg := Lookup(m, argv[0]), ""
	if cmd != nil {
		cmd, msg = cmd.Resolve(argv)
	}
	if cmd == nil {
		return nil, "ERR Command '" + string(argv[0]) + "' not found"
	}
	return cmd, msg
}

// AllowedSubscribed reports the commands a RESP2 client in pub/sub context
// may run (processCommand's list).
func (c *Command[H]) AllowedSubscribed() bool {
	switch c.fullName {
	case "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe", "sunsubscribe", "ping", "quit", "reset":
		return true
	}
	return false
}

// Table is a binary's command table: the top-level commands by name, and
// all of them (each container followed by its subcommands) indexed.
type Table[H any] struct {
	Top    []*Command[H] // by name
	All    []*Command[H] // Top with each container's Subs after it; Command.Index is the place here
	byName map[string]*Command[H]
}

// NewTable indexes cmds (sorted by name in place) and their subcommands:
// full names, parents, indexes and the subcommand maps.
func NewTable[H any](cmds []*Command[H]) *Table[H] {
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	t := &Table[H]{Top: cmds, byName: make(map[string]*Command[H], len(cmds))}
	index := func(c *Command[H], parent *Command[H]) {
		c.parent = parent
		c.fullName = c.Name
		if parent != nil {
			c.fullName = parent.Name + "|" + c.Name
		}
		c.idx = len(t.All)
		c.hasHandler = !reflect.ValueOf(&c.Handler).Elem().IsZero()
		t.All = append(t.All, c)
	}
	for _, c := range cmds {
		index(c, nil)
		t.byName[c.Name] = c
		if len(c.Subs) > 0 {
			c.subMap = make(map[string]*Command[H], len(c.Subs))
			for _, sc := range c.Subs {
				index(sc, c)
				c.subMap[sc.Name] = sc
			}
		}
	}
	return t
}

// Get finds a top-level command by its original (lower-case) name.
func (t *Table[H]) Get(name string) *Command[H] { return t.byName[name] }

// Renamed returns the name -> command map after rename-command: renames
// maps an original name to its final one ("" disables the command), as
// configs keeps them. Errors carry Redis's texts; configs.Load checks the
// same at the directive's line when it knows the table.
func (t *Table[H]) Renamed(renames map[string]string) (map[string]*Command[H], error) {
	m := make(map[string]*Command[H], len(t.byName))
	for name, c := range t.byName {
		m[name] = c
	}
	if len(renames) == 0 {
		return m, nil
	}
	froms := make([]string, 0, len(renames))
	for from := range renames {
		froms = append(froms, from)
	}
	sort.Strings(froms)
	for _, from := range froms {
		if m[strings.ToLower(from)] == nil {
			return nil, fmt.Errorf("No such command in rename-command: '%s'", strings.ToLower(from))
		}
		delete(m, strings.ToLower(from))
	}
	for _, from := range froms {
		to := strings.ToLower(renames[from])
		if to == "" {
			continue
		}
		if m[to] != nil {
			return nil, fmt.Errorf("Target command name already exists in rename-command: '%s'", to)
		}
		m[to] = t.byName[strings.ToLower(from)]
	}
	return m, nil
}

// Lookup finds a command of m by name ASCII case-insensitively, without
// allocating for names of up to 32 bytes.
func Lookup[H any](m map[string]*Command[H], name []byte) *Command[H] {
	var buf [32]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(string(name))]
	}
	for i, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return m[string(buf[:len(name)])]
}

// Detached readies a command kept out of every table (a test's extra
// command added to one server's map): its full name is its name and it
// shares the statistics slot of slot.
func (c *Command[H]) Detached(slot *Command[H]) {
	c.fullName = c.Name
	c.idx = slot.idx
	c.hasHandler = true
}
