package server

import (
	"slices"
	"sync"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// Arrival order for blocking commands (order.go; README, "Differences").
//
// A blocking command sent on one connection and, at once, a write on
// another: redis-server runs the blocking command first, so it is parked
// when the write runs, and the write serves it or makes it fail
// (unit/type/list.tcl's BRPOPLPUSH tests, stream-cgroups.tcl's "Blocking
// XREADGROUP: key deleted" and "key type changed with SET"). Two blocking
// commands on the same key are served in the order they arrived.
//
// The commands whose order decides this wait as an observer does
// (ordCollectAll: every other connection's input that had arrived and not
// run, bounded by ordAllMax), but only when one of their keys is in a
// state a blocking command waits on:
//
//   - a blocking command (BLPOP, BLMOVE, BZPOPMIN, BLMPOP, XREAD and
//     XREADGROUP with BLOCK, ...), when a key is missing or a stream: it
//     may park (ordBlock);
//   - a write that may create a list, sorted set or stream (LPUSH, ZADD,
//     XADD, LMOVE's destination, COPY, RENAME, RESTORE, SORT STORE, ...)
//     when the key is missing: it may serve a parked command;
//   - a write that may delete or replace a value (DEL, SET, RENAME, ...)
//     when the key is a stream: a parked XREADGROUP then fails ("no
//     longer exists"), a parked XREAD goes on waiting.
//
// A blocking command that waits is waited for until it has run
// (ordState.waitBlk), by anything but another blocking command waiting:
// a write whose input was pending when the blocking command looked goes
// first otherwise (its check comes later and finds the blocking command
// waiting, not pending), as Go's scheduler often runs the goroutine woken
// last first. Between two blocking commands waiting, each having found
// the other's input pending, the connection that came first goes first
// (ordBlkFirst).
//
// Until the server has seen a blocking command (ordWaiters.blockSeen),
// writes are not looked at (LPUSH -P 16 on one key: the look at the key
// cost about 5% of the throughput); nor, while no stream was ever made
// (keyspace.StreamsMade), the writes that only matter for a stream (SET,
// DEL...). Past that, anything else (SET or INCR on a string, LPUSH on a
// list that exists, LPOP, XADD on a stream that exists) costs one look at
// its key, no system call.
//
// Not ordered: a write racing the first blocking command the server sees;
// a write that creates a string, hash or set where a blocking command
// waits for a list (Redis leaves it blocked; run first, the write makes
// it fail with WRONGTYPE); XADD to a stream a blocking XREAD waits on with
// $ (the entry is missed); the commands of MULTI/EXEC and scripts (the
// lock cannot be let go there).

// What ordKeyed looks at in a command's keys (ordKeyKinds).
const (
	ordKeyAbsent uint8 = 1 << iota // a missing key
	ordKeyStream                   // a stream
	ordKeyBlock                    // a blocking command (XREAD/XREADGROUP: with BLOCK)
)

// ordKeyKinds holds each command's kind, by Command.Index.
var ordKeyKinds = sync.OnceValue(func() []uint8 {
	initTable()
	kinds := make([]uint8, len(allCommands))
	for i, cmd := range allCommands {
		kinds[i] = ordKeyKindOf(cmd)
	}
	return kinds
})

// ordKeyKindOf classifies cmd from its flags, ACL categories and the
// flags of its key specs (Redis's COMMAND INFO).
func ordKeyKindOf(cmd *Command) uint8 {
	rc := redisCommands()[cmd.FullName()]
	if len(cmd.Subs) > 0 || rc == nil || !cmd.Has(FlagWrite|FlagBlocking) {
		return 0 // a container, or neither a write nor a blocking command
	}
	specs := rc.keySpecs()
	if !slices.ContainsFunc(specs, func(ks keySpec) bool { return !ks.notKey }) {
		return 0 // no keys (WAIT)
	}
	if cmd.Has(FlagBlocking) {
		return ordKeyAbsent | ordKeyStream | ordKeyBlock
	}
	var creates, replaces, updates bool
	for _, ks := range specs {
		for _, f := range ks.flags {
			switch f {
			case "insert", "OW":
				creates = true
			case "update":
				updates = true
			}
			if f == "OW" || f == "RM" {
				replaces = true
			}
		}
	}
	in := func(cat string) bool { return slices.Contains(cmd.ACL, cat) }
	var k uint8
	switch {
	case in("list") || in("sortedset") || in("stream") || in("geo"):
		if creates || updates { // ZADD and XADD update
			k |= ordKeyAbsent
		}
	case in("keyspace"): // COPY, RENAME, MOVE, RESTORE, SORT STORE
		if creates {
			k |= ordKeyAbsent
		}
	}
	if replaces || in("string") && updates { // SET's key spec is RW update
		k |= ordKeyStream
	}
	return k
}

// ordKeyed reports whether c's top-level command (args) must wait for the
// input that arrived before it on other connections, for its keys' sake
// (see above): ordAll for a write, ordBlock for a blocking command, or
// ordNone. Called with mu held, before the command runs.
func (s *Server) ordKeyed(c *Client, args [][]byte) int {
	cmd := c.lookupCached(args[0])
	if cmd == nil {
		return ordNone
	}
	k := ordKeyKinds()[cmd.Index()]
	if k == 0 || c.db < 0 || c.db >= len(s.ks.DBs) {
		return ordNone
	}
	kind := ordAll
	if k&ordKeyBlock != 0 {
		if n := cmd.FullName(); (n == "xread" || n == "xreadgroup") && !ordHasBlockArg(args) {
			return ordNone // XREAD, XREADGROUP without BLOCK
		}
		kind = ordBlock
		s.ord.blockSeen = true
	} else if !s.ord.blockSeen {
		return ordNone // no blocking command yet: nothing to order writes for
	}
	if s.ordKeysMatter(c, cmd, k, args) {
		return kind
	}
	return ordNone
}

// ordKeysMatter reports whether one of cmd's keys in args is in a state k
// looks at: missing (ordKeyAbsent) or a stream (ordKeyStream).
func (s *Server) ordKeysMatter(c *Client, cmd *Command, k uint8, args [][]byte) bool {
	if k&ordKeyAbsent == 0 && !keyspace.StreamsMade() {
		return false // SET, DEL...: no key can be a stream
	}
	db := c.selectedDB()
	matters := func(key []byte) bool {
		e := db.Peek(key)
		if e == nil {
			return k&ordKeyAbsent != 0
		}
		if at := db.ExpireAt(e); at != 0 && at <= s.nowMs {
			return k&ordKeyAbsent != 0
		}
		return k&ordKeyStream != 0 && e.Value().Type() == keyspace.TypeStream
	}
	if cmd.FirstKey > 0 && !cmd.Has(FlagMovableKeys) {
		last := cmd.LastKey
		if last < 0 {
			last += len(args)
		}
		step := max(cmd.Step, 1)
		for i := cmd.FirstKey; i <= last && i < len(args); i += step {
			if matters(args[i]) {
				return true
			}
		}
		return false
	}
	refs, _ := commandKeyRefs(cmd, args) // movable keys: BLMPOP, XREAD, ZUNIONSTORE, SORT...
	for _, r := range refs {
		if r.pos < len(args) && matters(args[r.pos]) {
			return true
		}
	}
	return false
}

// ordHasBlockArg reports whether XREAD or XREADGROUP args carry BLOCK
// before STREAMS.
func ordHasBlockArg(args [][]byte) bool {
	for _, a := range args[1:] {
		if asciiEqualFold(a, "streams") {
			return false
		}
		if asciiEqualFold(a, "block") {
			return true
		}
	}
	return false
}
