package server

import (
	"fmt"
	"time"

	"github.com/vigil-kv/vigil/replication"
)

// Sync-ack mode (Vigil's own; docs/safety.md): with min-replicas-ack N > 0
// on a master, the reply of a top-level command that moved the replication
// stream (a write, an EXEC or a script that wrote, a read that expired a
// key) is held until N replicas have acknowledged the offset the stream
// reached after it, as if the client had sent WAIT N timeout itself, with
// min-replicas-ack-timeout milliseconds as the timeout (0: forever).
//
// It is WAIT's machinery (blocking.go): the client is blocked on acks
// (kind blockAcks, syncAck set) with its reply cut out of c.w and kept in
// the blockState; runBatch parks it (parkBlocked sends the GETACK at once),
// its pipelined commands wait in the query buffer, other clients are
// served. processWaitingReplicas puts the held reply back when enough
// replicas acknowledge; at the deadline (or CLIENT UNBLOCK) the client
// gets errSyncAckTimeout instead: the write may or may not be applied,
// never a silent success. A client gone while parked is unblocked by the
// cron's sweep, as a WAIT.
//
// Which acknowledgements count (replication.AckGate; sentinel/doc.go,
// "Sync-ack mode"): a replica's, only once every sentinel this master knows
// (master-known-sentinels) confirmed (REPLCONF sentinel-seen) an INFO
// numbered (sync_ack_info_seq) after the replica attached, i.e. recorded it
// as an ack member: then whichever sentinel leads a failover counts it. WAIT
// and min-replicas-to-write count every replica, as in Redis.
//
// Never held: a replica's own clients (a replica does not wait), the
// master's link and the AOF loader, replicas' connections, commands that
// blocked (WAIT itself, BLPOP...: their eventual replies are not held), and
// commands that propagated nothing (reads, no-op writes).

// syncAckStats are INFO's sync-ack counters (guarded by mu).
type syncAckStats struct {
	gate     replication.AckGate // which replicas' acks count
	held     int64               // writes whose reply was held
	timeouts int64               // held writes answered with the timeout error
	// heldReads and readTimeouts are the same for reads.
	heldReads    int64
	readTimeouts int64
}

// errSyncAckTimeout is the reply to a held write whose acknowledgements did
// not come in time. Its code is not NOREPLICAS on purpose: that error
// (min-replicas-to-write) means the write was refused, this one that it
// ran on the master and may or may not survive.
const errSyncAckTimeout = "UNACKED Write may or may not be applied: acknowledged by %d of %d required replicas %s"

// errSyncAckReadTimeout replaces a held read's reply when the writes it may
// have seen were not acknowledged in time: the value is not returned.
const errSyncAckReadTimeout = "UNACKED Read not served: the writes it may see are acknowledged by %d of %d required replicas %s"

// syncAckApplies reports whether c's writes are held: a master with the
// mode on, a client that is not the master's link, the AOF loader or a
// replica.
func (s *Server) syncAckApplies(c *Client) bool {
	if s.cfg.MinReplicasAck <= 0 || c.aofClient || s.isReplica() {
		return false
	}
	switch c.kind() {
	case kindMaster, kindReplica:
		return false
	}
	return true
}

// holdForAcks blocks c after a top-level command cmd that moved the
// replication stream: its reply, c.w.B[mark:], is held until
// min-replicas-ack replicas acknowledged the current offset.
func (c *Client) holdForAcks(cmd *Command, mark int) {
	s := c.srv
	n := int64(s.cfg.MinReplicasAck)
	offset := s.repl.offset
	if s.countSyncAcks(offset) >= n {
		return // already acknowledged (cannot be before the GETACK, but cheap)
	}
	var deadline time.Time
	timeout := s.cfg.MinReplicasAckTimeout
	if timeout > 0 {
		deadline = time.UnixMilli(s.nowMs + int64(timeout))
	}
	held := append([]byte(nil), c.w.B[mark:]...)
	c.w.B = c.w.B[:mark]
	s.syncAck.held++
	bs := &blockState{c: c, kind: blockAcks, cmd: cmd, db: c.db, deadline: deadline,
		reploff: offset, numreplicas: n, syncAck: true, held: held, ackTimeout: timeout}
	s.blocking.acks = append(s.blocking.acks, bs)
	s.block(bs)
	s.repl.getackPending = true
	if r := s.blocking.replicas; r != nil {
		r.RequestAcks()
	}
}

// syncAckHoldsRead: cmd reads the dataset (a read-only command, or EXEC,
// a script or a function that wrote nothing). Connection and server
// commands (PING, INFO, CLIENT, ...: the sentinels' own) are never held.
func syncAckHoldsRead(cmd *Command) bool {
	if cmd.Has(FlagPubSub) {
		return false
	}
	if cmd.Has(FlagReadonly) {
		return true
	}
	switch cmd.Name {
	case "exec", "eval", "evalsha", "fcall":
		return true
	}
	return false
}

// holdReadForAcks blocks c after a read-only command cmd when the
// master's offset (every write the read may have seen) is not yet
// acknowledged by min-replicas-ack replicas: its reply is held until it
// is, so a read never returns a value that a failover may take back (the
// sentinel promotes a replica holding every acknowledged offset). At the
// timeout the client gets UNACKED instead of the value.
func (c *Client) holdReadForAcks(cmd *Command, mark int) {
	s := c.srv
	if s.countSyncAcks(s.repl.offset) >= int64(s.cfg.MinReplicasAck) {
		return
	}
	c.holdForAcks(cmd, mark)
	if c.blocked != nil {
		c.blocked.ackRead = true
		s.syncAck.held--
		s.syncAck.heldReads++
	}
}

// replySyncAckTimedOut writes the error a held write gets instead of its
// reply (timeout, CLIENT UNBLOCK TIMEOUT).
func (s *Server) replySyncAckTimedOut(bs *blockState) {
	when := fmt.Sprintf("within %d ms", bs.ackTimeout)
	if bs.ackTimeout <= 0 {
		when = "before it was unblocked"
	}
	s.replySyncAckUnacked(bs, when)
}

// replySyncAckUnacked writes the UNACKED error (the write ran, too few
// replicas acknowledged it; when says until what) instead of the held
// reply.
func (s *Server) replySyncAckUnacked(bs *blockState, when string) {
	if bs.ackRead {
		msg := fmt.Sprintf(errSyncAckReadTimeout, s.countSyncAcks(bs.reploff), bs.numreplicas, when) + s.syncAckUnseenNote(bs.reploff)
		s.syncAck.readTimeouts++
		s.countError([]byte("-" + msg))
		bs.c.w.Error(msg)
		return
	}
	msg := fmt.Sprintf(errSyncAckTimeout, s.countSyncAcks(bs.reploff), bs.numreplicas, when) + s.syncAckUnseenNote(bs.reploff)
	s.syncAck.timeouts++
	s.countError([]byte("-" + msg))
	bs.c.w.Error(msg)
}

// infoSyncAck appends the mode's fields to INFO replication, only when it
// is on or has been used (INFO stays redis-server's otherwise).
func (s *Server) infoSyncAck(w *infoWriter) {
	if s.cfg.MinReplicasAck <= 0 && s.syncAck.held == 0 && s.syncAck.heldReads == 0 {
		return
	}
	waiting := 0
	for _, bs := range s.blocking.acks {
		if bs.syncAck {
			waiting++
		}
	}
	w.int("min_replicas_ack", int64(s.cfg.MinReplicasAck))
	if s.cfg.MinReplicasAck > 0 && !s.isReplica() {
		// The number of this INFO (it lists every replica attached now):
		// a sentinel confirms it with REPLCONF sentinel-seen.
		w.int("sync_ack_info_seq", int64(s.syncAck.gate.NextInfo()))
		known := s.fence.SentinelKeys()
		unseen := 0
		for _, rp := range s.repl.replicas {
			if !s.syncAck.gate.Counted(rp.gateAt, known) {
				unseen++
			}
		}
		w.int("sync_ack_unseen_replicas", int64(unseen))
	}
	w.int("sync_ack_waiting_clients", int64(waiting))
	w.int("sync_ack_held_writes", s.syncAck.held)
	w.int("sync_ack_timeouts", s.syncAck.timeouts)
	w.int("sync_ack_held_reads", s.syncAck.heldReads)
	w.int("sync_ack_read_timeouts", s.syncAck.readTimeouts)
}

// countSyncAcks is countAcks for sync-ack mode: the online replicas at or
// above offset whose acknowledgements count (AckGate: every known sentinel
// confirmed an INFO listing them).
func (s *Server) countSyncAcks(offset int64) int64 {
	known := s.fence.SentinelKeys()
	n := int64(0)
	for _, rp := range s.repl.replicas {
		if rp.ack.State == replication.ReplicaOnline && rp.ack.Offset >= offset && s.syncAck.gate.Counted(rp.gateAt, known) {
			n++
		}
	}
	return n
}

// syncAckUnseenNote completes the UNACKED error when replicas not yet seen
// by every sentinel acknowledged the offset (their acks do not count).
func (s *Server) syncAckUnseenNote(offset int64) string {
	if d := s.countAcks(offset) - s.countSyncAcks(offset); d > 0 {
		return fmt.Sprintf(" (%d more from replicas not yet seen by every sentinel)", d)
	}
	return ""
}

// syncAckSentinelSeen is REPLCONF sentinel-seen <seq> [sentinel-id <runid>]
// from a vigil-sentinel: it recorded every replica listed in this master's
// INFO numbered seq as an ack member. The sentinel is known from then on
// (as by a hello); held replies its confirmation lets count are released.
func (s *Server) syncAckSentinelSeen(c *Client, id string, seq uint64) {
	key := replication.SentinelKey(id)
	if id == "" {
		key = replication.SentinelClientKey(c.name)
	}
	if key == "" || s.isReplica() {
		return
	}
	learned := s.fence.LearnSentinel(s.clock.Now(), key)
	moved := s.syncAck.gate.Seen(key, seq)
	if c := s.syncAck.gate.Confirmers(); c != s.cfg.MasterSyncAckSentinels {
		s.cfg.MasterSyncAckSentinels = c
		learned = true
	}
	if learned {
		s.fenceChanged(true) // persists both sets (CONFIG REWRITE)
	}
	if moved {
		s.processWaitingReplicas(s.repl.offset)
	}
}

// syncAckInit loads the persisted confirmers and starts the INFO
// numbering above any previous run's (New; lock not needed yet).
func (s *Server) syncAckInit() {
	s.syncAck.gate.RestoreConfirmers(s.cfg.MasterSyncAckSentinels)
	s.syncAck.gate.Start(uint64(max(s.clock.Now().UnixMicro(), 0)))
}
