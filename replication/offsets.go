package replication

import (
	"strconv"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// Commands a master appends to the replication stream; their bytes count in
// master_repl_offset like any other.
const (
	// PingCommand is fed every repl-ping-replica-period seconds (14 bytes).
	PingCommand = "*1\r\n$4\r\nPING\r\n"
	// GetAckCommand is fed once per event-loop iteration while a client
	// waits in WAIT (37 bytes).
	GetAckCommand = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n"
)

// AckCommand is replicationSendAck's REPLCONF ACK <offset>, the only thing a
// replica ever writes to its master once connected (7.0 sends no FACK).
func AckCommand(offset int64) []byte {
	var num [20]byte
	return resp.AppendCommand(nil, []byte("REPLCONF"), []byte("ACK"), strconv.AppendInt(num[:0], offset, 10))
}

// StreamOffsets is the replica-side bookkeeping of the master client's
// offsets (read_reploff and reploff).
//
// Read counts every byte read from the master. Applied is what the replica
// acknowledges and forwards to its sub-replicas: it only moves after a whole
// command was executed, and not while the master's MULTI is open
// (commandProcessed: "if (c->flags & CLIENT_MASTER && !(c->flags & CLIENT_MULTI))
// c->reploff = c->read_reploff - sdslen(c->querybuf) + c->qb_pos"), so
// inside MULTI/EXEC it jumps over the whole block when EXEC completes.
type StreamOffsets struct {
	Read    int64
	Applied int64
	pending int64 // processed bytes not yet in Applied (inside MULTI)
}

// NewStreamOffsets starts both offsets at offset: the +FULLRESYNC offset
// after a full sync, the cached master's after +CONTINUE.
func NewStreamOffsets(offset int64) StreamOffsets {
	return StreamOffsets{Read: offset, Applied: offset}
}

// Received records n bytes read from the master's socket.
func (o *StreamOffsets) Received(n int) { o.Read += int64(n) }

// Processed records a command of n stream bytes that was fully executed.
// inMulti says whether the master client is inside MULTI after it (true for
// MULTI and the queued commands, false for EXEC and everything outside).
// It returns the number of bytes that became applied now (what a chained
// replica is fed: replicationFeedStreamFromMasterStream).
func (o *StreamOffsets) Processed(n int, inMulti bool) int64 {
	o.pending += int64(n)
	if inMulti {
		return 0
	}
	done := o.pending
	o.Applied += done
	o.pending = 0
	return done
}

// Skipped records n bytes of an empty inline line (a bare newline): never a
// command, counted with the next processed command as Redis's qb_pos is.
func (o *StreamOffsets) Skipped(n int) { o.pending += int64(n) }

// GetAck is the replica's answer to REPLCONF GETACK, run while the GETACK
// itself executes, so the offset excludes the GETACK's own 37 bytes.
func (o *StreamOffsets) GetAck() []byte { return AckCommand(o.Applied) }

// AckDue is replicationCron's once-a-second REPLCONF ACK: due when at least
// a second passed since the last one, never to a pre-PSYNC master (one that
// answered SYNC, not PSYNC).
func AckDue(prePsync bool, lastAck, now time.Time) bool {
	return !prePsync && now.Sub(lastAck) >= time.Second
}

// NewlineDue is replicationSendNewlineToMaster: while loading the payload a
// replica writes "\n" to its master at most once per second (server.unixtime
// changed), so the master does not time it out.
func NewlineDue(lastNewline, now time.Time) bool {
	return now.Unix() != lastNewline.Unix()
}

// ReplicaState is a replica client's state on the master (SLAVE_STATE_*).
type ReplicaState int

const (
	ReplicaWaitBgsaveStart ReplicaState = iota + 6 // SLAVE_STATE_WAIT_BGSAVE_START
	ReplicaWaitBgsaveEnd                           // SLAVE_STATE_WAIT_BGSAVE_END
	ReplicaSendBulk                                // SLAVE_STATE_SEND_BULK
	ReplicaOnline                                  // SLAVE_STATE_ONLINE
	ReplicaRDBTransmitted                          // SLAVE_STATE_RDB_TRANSMITTED (rdb-only)
)

// String is replstateToString, as INFO prints it: wait_bgsave, send_bulk,
// online, or "" (INFO then skips the replica).
func (s ReplicaState) String() string {
	switch s {
	case ReplicaWaitBgsaveStart, ReplicaWaitBgsaveEnd:
		return "wait_bgsave"
	case ReplicaSendBulk:
		return "send_bulk"
	case ReplicaOnline:
		return "online"
	}
	return ""
}

// ReplicaAck is what the master knows of one replica's progress.
type ReplicaAck struct {
	State ReplicaState
	// PrePsync: the replica used SYNC (CLIENT_PRE_PSYNC): it never ACKs.
	PrePsync bool
	// Offset is repl_ack_off, Time is repl_ack_time.
	Offset int64
	Time   time.Time
}

// OnAck is replconfCommand's "ack": the offset only grows; the time is
// refreshed whatever the offset.
func (r *ReplicaAck) OnAck(offset int64, now time.Time) {
	if offset > r.Offset {
		r.Offset = offset
	}
	r.Time = now
}

// Lag is INFO's lag=: seconds since the last ACK for an online replica
// (time(NULL) - repl_ack_time), else 0.
func (r ReplicaAck) Lag(now time.Time) int64 {
	if r.State != ReplicaOnline {
		return 0
	}
	return now.Unix() - r.Time.Unix()
}

// CountAcks is replicationCountAcksByOffset, WAIT's count: ONLINE replicas
// whose acknowledged offset reached target.
func CountAcks(replicas []ReplicaAck, target int64) int {
	n := 0
	for _, r := range replicas {
		if r.State == ReplicaOnline && r.Offset >= target {
			n++
		}
	}
	return n
}

// WaitDone is waitCommand's immediate answer: reply now (with the count)
// when enough replicas acknowledged target or the caller is inside MULTI;
// otherwise block.
func WaitDone(replicas []ReplicaAck, target int64, numReplicas int64, inMulti bool) (count int, done bool) {
	count = CountAcks(replicas, target)
	return count, inMulti || int64(count) >= numReplicas
}

// GoodReplicas is refreshGoodSlavesCount: with min-replicas-to-write and
// min-replicas-max-lag both set (else active is false and nothing is
// counted), the ONLINE replicas whose last ACK is at most maxLag seconds old,
// in whole seconds as server.unixtime.
func GoodReplicas(replicas []ReplicaAck, toWrite, maxLag int, now time.Time) (good int, active bool) {
	if toWrite == 0 || maxLag == 0 {
		return 0, false
	}
	for _, r := range replicas {
		if r.State == ReplicaOnline && now.Unix()-r.Time.Unix() <= int64(maxLag) {
			good++
		}
	}
	return good, true
}

// ErrNoReplicas is the reply to a write refused by min-replicas-to-write.
const ErrNoReplicas = "-NOREPLICAS Not enough good replicas to write.\r\n"

// WritesAllowed is checkGoodReplicasStatus: a replica, or a master without
// both min-replicas settings, always accepts writes; otherwise it needs
// toWrite good replicas.
func WritesAllowed(isReplica bool, toWrite, maxLag, good int) bool {
	return isReplica || maxLag == 0 || toWrite == 0 || good >= toWrite
}

// ReplicaTimedOut is replicationCron's check on the master: an ONLINE
// replica that is not pre-PSYNC and has not ACKed for more than repl-timeout
// seconds is disconnected ("Disconnecting timedout replica (streaming sync)").
func ReplicaTimedOut(r ReplicaAck, timeout time.Duration, now time.Time) bool {
	if r.State != ReplicaOnline || r.PrePsync {
		return false
	}
	return now.Unix()-r.Time.Unix() > int64(timeout/time.Second)
}

// NeedsNewline is replicationCron's keepalive for replicas waiting for
// their payload: a bare "\n" each second to those in wait_bgsave_start, and
// to those in wait_bgsave_end when the snapshot goes to disk (a diskless
// transfer is writing to them already).
func NeedsNewline(s ReplicaState, disklessTransfer bool) bool {
	return s == ReplicaWaitBgsaveStart || (s == ReplicaWaitBgsaveEnd && !disklessTransfer)
}

// PingDue is replicationCron's "send PING according to ping_slave_period":
// every period cron loops (one a second) while any replica is attached.
func PingDue(cronLoops int64, period int, replicas int) bool {
	return replicas > 0 && period > 0 && cronLoops%int64(period) == 0
}

// LinkTimeout is replicationCron's checks on a replica's link to its master,
// with Redis's log line: no I/O for more than repl-timeout while connecting
// or in the handshake (lastIO is repl_transfer_lastio), during the RDB
// transfer, or no data nor PING from a connected master (lastInteraction).
// The shell then feeds LinkFailed{reason} to the Handshake.
func LinkTimeout(state ReplState, lastIO, lastInteraction time.Time, timeout time.Duration, now time.Time) (reason string, timedOut bool) {
	t := int64(timeout / time.Second)
	switch {
	case (state == StateConnecting || state.InHandshake()) && now.Unix()-lastIO.Unix() > t:
		return "Timeout connecting to the MASTER...", true
	case state == StateTransfer && now.Unix()-lastIO.Unix() > t:
		return "Timeout receiving bulk data from MASTER... If the problem persists try to set the 'repl-timeout' parameter in redis.conf to a larger value.", true
	case state == StateConnected && now.Unix()-lastInteraction.Unix() > t:
		return "MASTER timeout: no data nor PING received...", true
	}
	return "", false
}
