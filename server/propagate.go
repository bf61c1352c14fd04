package server

import "strconv"

// The write path (server.c's call(), alsoPropagate and
// propagatePendingCommands).
//
// After a command runs, exec knows from the dirty counter (Redis's
// server.dirty, Keyspace.Dirty) whether it changed the dataset. If it did,
// or if the handler forced propagation (FLUSHALL on empty databases,
// PUBLISH to replicas), the command is added to the pending operations of
// the current execution unit: its argv as the client sent it, or the form
// the handler set with rewriteArgv (SET EX -> SET PXAT, EXPIRE ->
// PEXPIREAT, ...), in the database the client has selected once it ran.
// Handlers add more operations with alsoPropagate, and keys deleted by
// lazy expiry inside the unit join it as DEL/UNLINK, before the command
// that found them expired.
//
// An execution unit is the outermost command (EXEC with everything it
// runs is one unit). When it ends, its operations go to every Propagator
// at once; a unit of more than one operation is wrapped in MULTI ... EXEC,
// MULTI taking the first operation's database and EXEC the last one's, so
// that no SELECT appears between EXEC and what follows. Deletions outside
// any command (the active expire cycle, eviction) are units of their own.
//
// With no Propagator attached nothing is recorded, so the path costs one
// length check per command.

// Target is where an operation goes: the AOF, the replicas, or both
// (Redis's PROPAGATE_AOF and PROPAGATE_REPL).
type Target uint8

// Propagation targets.
const (
	TargetAOF Target = 1 << iota
	TargetRepl
	TargetAll = TargetAOF | TargetRepl
)

// Op is one propagated command: argv run in database DB, for Target.
type Op struct {
	DB     int
	Argv   [][]byte
	Target Target
}

// Propagator consumes the write path's command stream: the AOF writer and
// the replication backlog (each emits SELECT itself when the database
// changes; resp.CommandStream does that).
type Propagator interface {
	// Propagate receives the operations of one execution unit, in
	// execution order, under the execution lock. The slices are valid
	// only during the call: encode or copy them.
	Propagate(ops []Op)
}

// AddPropagator attaches p to the write path; it sees every unit that
// ends after this call.
func (s *Server) AddPropagator(p Propagator) {
	s.mu.Lock()
	s.props = append(s.props, p)
	s.mu.Unlock()
}

// RemovePropagator detaches p.
func (s *Server) RemovePropagator(p Propagator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, q := range s.props {
		if q == p {
			s.props = append(s.props[:i:i], s.props[i+1:]...)
			return
		}
	}
}

// propagating reports whether anything consumes the stream; handlers
// build rewritten argv only then.
func (s *Server) propagating() bool { return len(s.props) > 0 }

// alsoPropagate adds an operation to the current unit (alsoPropagate).
// argv must stay valid until the unit ends: arguments of the running
// command or slices the caller does not reuse.
func (s *Server) alsoPropagate(db int, target Target, argv ...[]byte) {
	if len(s.props) == 0 {
		return
	}
	s.pending = append(s.pending, Op{DB: db, Argv: argv, Target: target})
}

// propagatePending ends an execution unit (propagatePendingCommands).
func (s *Server) propagatePending() { s.propagateUnit(true) }

// propagateUnit ends an execution unit; wrap false sends its operations
// unwrapped, as Redis does for a unit that is a command flagged
// CMD_TOUCHES_ARBITRARY_KEYS run directly (the lazy-expire DELs of a SCAN
// or RANDOMKEY, "much like active-expire"), not inside EXEC or a script.
func (s *Server) propagateUnit(wrap bool) {
	ops := s.pending
	if len(ops) == 0 {
		return
	}
	if wrap && len(ops) > 1 {
		wrapped := make([]Op, 0, len(ops)+2)
		wrapped = append(wrapped, Op{DB: ops[0].DB, Argv: argvMulti, Target: TargetAll})
		wrapped = append(wrapped, ops...)
		wrapped = append(wrapped, Op{DB: ops[len(ops)-1].DB, Argv: argvExec, Target: TargetAll})
		ops = wrapped
	}
	for _, p := range s.props {
		p.Propagate(ops)
	}
	s.propUnits++ // sync-ack mode: the unit's command moved the stream (syncack.go)
	clear(s.pending)
	s.pending = s.pending[:0]
}

// propagateDeletion is propagateDeletion for a key removed by expiry or
// eviction: DEL, or UNLINK when the matching lazyfree option is on.
// Outside a command (active expiry, eviction before a command runs) it is
// a unit of its own.
func (s *Server) propagateDeletion(db int, key []byte, lazy bool) {
	if len(s.props) == 0 {
		return
	}
	name := argvDel[0]
	if lazy {
		name = argvUnlink[0]
	}
	s.alsoPropagate(db, TargetAll, name, key)
	if s.execDepth == 0 {
		s.propagatePending()
	}
}

var (
	argvMulti   = [][]byte{[]byte("MULTI")}
	argvExec    = [][]byte{[]byte("EXEC")}
	argvDel     = [][]byte{[]byte("DEL")}
	argvUnlink  = [][]byte{[]byte("UNLINK")}
	wordSet     = []byte("SET")
	wordPXAT    = []byte("PXAT")
	wordKeepTTL = []byte("KEEPTTL")
	wordPExpAt  = []byte("PEXPIREAT")
	wordPersist = []byte("PERSIST")
)

// propState is a client's propagation state for the command it runs
// (c->argv rewrites and the CLIENT_FORCE_* / CLIENT_PREVENT_* flags).
type propState struct {
	argv    [][]byte // rewritten argv, nil: the command's own
	force   Target   // forceCommandPropagation
	prevent bool     // preventCommandPropagation
}

// rewriteArgv replaces what the running command propagates
// (rewriteClientCommandVector). Call it only when c.srv.propagating(),
// so that building argv costs nothing otherwise.
func (c *Client) rewriteArgv(argv ...[]byte) { c.prop.argv = argv }

// forcePropagation propagates the running command even if it changed
// nothing (forceCommandPropagation).
func (c *Client) forcePropagation(t Target) { c.prop.force |= t }

// preventPropagation keeps the running command itself out of the stream
// (preventCommandPropagation); what it added with alsoPropagate stays.
func (c *Client) preventPropagation() { c.prop.prevent = true }

// afterHandler is the propagation half of call(): it adds the command that
// just ran to the unit if it wrote, and ends the unit when it is the
// outermost command.
func (s *Server) afterHandler(c *Client, cmd *Command, args [][]byte, dirty int64) {
	if len(s.props) != 0 && cmd.FullName() != "exec" && !c.prop.prevent {
		t := c.prop.force
		if dirty > 0 { // persist: call()'s "if (dirty < 0) dirty = 0" (SAVE, DEBUG LOADAOF reset it)
			t = TargetAll
		}
		if t != 0 {
			argv := args
			if c.prop.argv != nil {
				argv = c.prop.argv
			}
			s.pending = append(s.pending, Op{DB: c.db, Argv: argv, Target: t})
		}
	}
	c.prop = propState{}
	if s.execDepth == 0 {
		s.propagateUnit(!cmd.Has(FlagTouchesArbitraryKeys))
	}
}

// delWord is the command a deletion propagates as: UNLINK when the
// matching lazyfree option is on, else DEL.
func (s *Server) delWord(lazy bool) []byte {
	if lazy {
		return argvUnlink[0]
	}
	return argvDel[0]
}

// msArg formats a millisecond time for a rewritten argv.
func msArg(ms int64) []byte { return strconv.AppendInt(nil, ms, 10) }
