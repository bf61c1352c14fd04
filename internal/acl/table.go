package acl

import (
	"strings"
)

// Categories are Redis 7.0's ACL categories in ACLCommandCategories order,
// the order ACL CAT lists them and the best-fit description tries them.
var Categories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

// CommandSpec describes one command of a binary's command table to the ACL:
// its full name ("get", "config|get") and its ACL categories without '@'.
// A subcommand comes after its container.
type CommandSpec struct {
	Name       string
	Categories []string
}

type tableEntry struct {
	name   string // fullname: "ping", "client|id"
	cats   uint32 // bit i = Categories[i]
	parent int    // index of the container command, -1 for top-level
	subs   []int
}

// Table is the ACL's view of a command table: the command ids of acl.c
// (ACLGetCommandID), each command's categories and its subcommands. It is
// read-only once built, so users of one Store share it.
type Table struct {
	cmds  []tableEntry
	index map[string]int
}

// NewTable builds the ACL's table from a binary's commands, in the order
// given (the order single-command rules are described in).
func NewTable(specs []CommandSpec) *Table {
	t := &Table{index: map[string]int{}}
	for _, sp := range specs {
		var cats uint32
		for _, c := range sp.Categories {
			cats |= categoryFlag(c)
		}
		name := strings.ToLower(sp.Name)
		e := tableEntry{name: name, cats: cats, parent: -1}
		if p, _, ok := strings.Cut(name, "|"); ok {
			pi, found := t.index[p]
			if !found {
				continue // a subcommand without its container: ignored
			}
			e.parent = pi
			t.cmds[pi].subs = append(t.cmds[pi].subs, len(t.cmds))
		}
		t.index[name] = len(t.cmds)
		t.cmds = append(t.cmds, e)
	}
	return t
}

// Lookup is ACLLookupCommand: "name" or "container|sub", any case.
func (t *Table) Lookup(name string) (int, bool) {
	i, ok := t.index[strings.ToLower(name)]
	return i, ok
}

// Name is the full name of command id.
func (t *Table) Name(id int) string { return t.cmds[id].name }

// InCategory lists the commands of category cat (ACL CAT <category>), in
// table order; ok is false for an unknown category.
func (t *Table) InCategory(cat string) (names []string, ok bool) {
	f := categoryFlag(cat)
	if f == 0 {
		return nil, false
	}
	for _, c := range t.cmds {
		if c.cats&f != 0 {
			names = append(names, c.name)
		}
	}
	return names, true
}

func categoryFlag(name string) uint32 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}
