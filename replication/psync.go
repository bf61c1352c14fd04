package replication

import (
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// PsyncRequest is a SYNC or PSYNC command as the master receives it.
type PsyncRequest struct {
	// Sync is true for the old SYNC command (no arguments): always a full
	// resync, without a +FULLRESYNC line, and the replica is flagged
	// pre-PSYNC (CLIENT_PRE_PSYNC: no ACKs expected).
	Sync bool
	// ReplID and Offset are PSYNC's argv[1] and argv[2], as sent.
	ReplID string
	Offset string
	// Failover is PSYNC's optional 4th argument "FAILOVER" (sent by a
	// master running the FAILOVER command against this replica).
	Failover bool
	// PSYNC2 is true when the replica sent REPLCONF capa psync2 (it
	// understands "+CONTINUE <replid>").
	PSYNC2 bool
	// AlreadyReplica: the client already is a replica (CLIENT_SLAVE);
	// Redis silently ignores its SYNC.
	AlreadyReplica bool
	// PendingOutput: the client has replies not yet written
	// (clientHasPendingReplies).
	PendingOutput bool
	// Filtered: the client asked for a filtered RDB (REPLCONF
	// rdb-filter-only: slave_req & SLAVE_REQ_RDB_MASK); CapaEOF: it sent
	// REPLCONF capa eof. A filtered RDB is always sent over the socket, so
	// it needs the EOF capability.
	Filtered, CapaEOF bool
}

// BacklogWindow is what the PSYNC decision needs to know of the backlog.
type BacklogWindow struct {
	Active  bool  // a backlog exists (repl_backlog != NULL)
	First   int64 // repl_backlog->offset
	Histlen int64 // repl_backlog->histlen
}

// Window describes b for Decide; a nil backlog is inactive.
func (b *Backlog) Window() BacklogWindow {
	if b == nil {
		return BacklogWindow{}
	}
	return BacklogWindow{Active: true, First: b.First(), Histlen: b.hist}
}

// MasterState is the serving node's state as syncCommand and
// masterTryPartialResynchronization consult it.
type MasterState struct {
	IDs              IDs
	MasterReplOffset int64
	Backlog          BacklogWindow
	// Replicas is the number of replica clients before this request
	// (listLength(server.slaves)).
	Replicas int
	// IsReplica and LinkUp: the node follows a master (server.masterhost)
	// and its link is REPL_STATE_CONNECTED.
	IsReplica bool
	LinkUp    bool
	// FailingOver: server.failover_state != NO_FAILOVER.
	FailingOver bool
}

// Outcome is the kind of a Decision.
type Outcome int

const (
	// PsyncIgnore: say nothing and do nothing (a replica sending SYNC again).
	PsyncIgnore Outcome = iota
	// PsyncReject: write Decision.Reply (an error line) and stop.
	PsyncReject
	// PsyncPromote: PSYNC ... FAILOVER carrying this node's own replid: the shell
	// promotes the node (replicationUnsetMaster) and decides again on the
	// new state with the request's Failover cleared.
	PsyncPromote
	// PsyncContinue: write Decision.Reply, then the backlog from
	// Decision.Offset; the replica is ONLINE at once.
	PsyncContinue
	// PsyncFull: the replica waits for a snapshot (wait_bgsave_start); the
	// +FULLRESYNC line (FullResyncLine) is written when the snapshot starts.
	PsyncFull
)

func (o Outcome) String() string {
	return [...]string{"ignore", "reject", "promote", "continue", "fullresync"}[o]
}

// Decision is the master's answer to a SYNC/PSYNC.
type Decision struct {
	Outcome Outcome
	// Reply is the exact line to write for PsyncReject and PsyncContinue.
	Reply string
	// Offset is, for PsyncContinue, the first backlog byte to send.
	Offset int64
	// CreateBacklog (PsyncFull only): this is the first replica and there is
	// no backlog: reset the IDs (changeReplicationId + clearReplicationId2)
	// and create the backlog before anything else.
	CreateBacklog bool
	// PrePsync (PsyncFull only): the request was SYNC; send no +FULLRESYNC
	// line and expect no ACKs.
	PrePsync bool
	// Stats to increment: sync_partial_ok, sync_partial_err, sync_full.
	PartialOK, PartialErr, Full bool
	// Log is why, in Redis's words (for the shell's log).
	Log string
}

// The reply lines, byte for byte as Redis writes them.
const (
	ContinueLine               = "+CONTINUE\r\n"
	errFailoverReplID          = "-ERR PSYNC FAILOVER replid must match my replid.\r\n"
	errFailoverToMaster        = "-ERR PSYNC FAILOVER can't be sent to a master.\r\n"
	errSyncWhileFailingOver    = "-NOMASTERLINK Can't SYNC while failing over\r\n"
	errSyncWhileNotConnected   = "-NOMASTERLINK Can't SYNC while not connected with my master\r\n"
	errSyncWithPendingOutput   = "-ERR SYNC and PSYNC are invalid with pending output\r\n"
	errPsyncOffsetNotAnInteger = "-ERR value is not an integer or out of range\r\n"
	errFilteredNeedsEOF        = "-ERR Filtered replica requires EOF capability\r\n"
)

// FullResyncLine is replicationSetupSlaveForFullResync's
// "+FULLRESYNC <replid> <offset>\r\n"; offset is master_repl_offset when the
// snapshot starts.
func FullResyncLine(replID string, offset int64) string {
	return "+FULLRESYNC " + replID + " " + strconv.FormatInt(offset, 10) + "\r\n"
}

// ContinueIDLine is "+CONTINUE <replid>\r\n", sent to psync2-capable replicas.
func ContinueIDLine(replID string) string { return "+CONTINUE " + replID + "\r\n" }

// Decide is syncCommand plus masterTryPartialResynchronization as a pure
// function: the checks in Redis's order, then +CONTINUE or a full resync.
func Decide(req PsyncRequest, st MasterState) Decision {
	// syncCommand: "ignore SYNC if already slave or in monitor mode".
	if req.AlreadyReplica {
		return Decision{Outcome: PsyncIgnore}
	}
	// "Check if this is a failover request to a replica with the same
	// replid and become a master if so."
	if !req.Sync && req.Failover {
		if !st.IsReplica {
			return Decision{Outcome: PsyncReject, Reply: errFailoverToMaster}
		}
		if strings.EqualFold(req.ReplID, st.IDs.ID) {
			return Decision{Outcome: PsyncPromote, Log: "MASTER MODE enabled (failover request)"}
		}
		return Decision{Outcome: PsyncReject, Reply: errFailoverReplID}
	}
	// "Don't let replicas sync with us while we're failing over".
	if st.FailingOver {
		return Decision{Outcome: PsyncReject, Reply: errSyncWhileFailingOver}
	}
	// "Refuse SYNC requests if we are a slave but the link with our master
	// is not ok..."
	if st.IsReplica && !st.LinkUp {
		return Decision{Outcome: PsyncReject, Reply: errSyncWhileNotConnected}
	}
	// "SYNC can't be issued when the server has pending data to send to the
	// client about already issued commands."
	if req.PendingOutput {
		return Decision{Outcome: PsyncReject, Reply: errSyncWithPendingOutput}
	}
	// "Fail sync if slave doesn't support EOF capability but wants a
	// filtered RDB."
	if req.Filtered && !req.CapaEOF {
		return Decision{Outcome: PsyncReject, Reply: errFilteredNeedsEOF}
	}
	d := Decision{Outcome: PsyncFull, Full: true}
	if req.Sync {
		// "If a slave uses SYNC, we are dealing with an old implementation
		// of the replication protocol (like redis-cli --slave)."
		d.PrePsync = true
	} else {
		// getLongLongFromObjectOrReply(c, c->argv[2], &psync_offset, NULL)
		off, ok := redisutil.String2ll(req.Offset)
		if !ok {
			return Decision{Outcome: PsyncReject, Reply: errPsyncOffsetNotAnInteger,
				Log: "Replica asks for synchronization but with a wrong offset"}
		}
		c, why := tryPartial(req, off, st)
		if c.Outcome == PsyncContinue {
			return c
		}
		d.Log = why
		// "Increment stats for failed PSYNCs, but only if the replid is
		// not "?", as this is used by slaves to force a full resync on
		// purpose when they are not able to partially resync."
		d.PartialErr = !strings.HasPrefix(req.ReplID, "?")
	}
	// "Create the replication backlog if needed": listLength(server.slaves)
	// == 1 (this replica, just added) && server.repl_backlog == NULL.
	d.CreateBacklog = st.Replicas == 0 && !st.Backlog.Active
	return d
}

// tryPartial is masterTryPartialResynchronization.
func tryPartial(req PsyncRequest, off int64, st MasterState) (Decision, string) {
	id := req.ReplID
	// if (strcasecmp(master_replid, server.replid) &&
	//     (strcasecmp(master_replid, server.replid2) ||
	//      psync_offset > server.second_replid_offset))
	if !strings.EqualFold(id, st.IDs.ID) &&
		(!strings.EqualFold(id, st.IDs.ID2) || off > st.IDs.SecondOffset) {
		switch {
		case strings.HasPrefix(id, "?"):
			// "Replid "?" is used by slaves that want to force a full resync."
			return Decision{}, "Full resync requested by replica"
		case !strings.EqualFold(id, st.IDs.ID) && !strings.EqualFold(id, st.IDs.ID2):
			return Decision{}, "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for '" +
				id + "', my replication IDs are '" + st.IDs.ID + "' and '" + st.IDs.ID2 + "')"
		default:
			return Decision{}, "Partial resynchronization not accepted: Requested offset for second ID was " +
				strconv.FormatInt(off, 10) + ", but I can reply up to " + strconv.FormatInt(st.IDs.SecondOffset, 10)
		}
	}
	// "We still have the data our slave is asking for?"
	// if (!server.repl_backlog ||
	//     psync_offset < server.repl_backlog->offset ||
	//     psync_offset > (server.repl_backlog->offset + server.repl_backlog->histlen))
	b := st.Backlog
	if !b.Active || off < b.First || off > b.First+b.Histlen {
		why := "Unable to partial resync with replica for lack of backlog (Replica request was: " + strconv.FormatInt(off, 10) + ")."
		if off > st.MasterReplOffset {
			why += " Warning: replica tried to PSYNC with an offset that is greater than the master replication offset."
		}
		return Decision{}, why
	}
	// if (c->slave_capa & SLAVE_CAPA_PSYNC2) "+CONTINUE %s\r\n" else "+CONTINUE\r\n"
	d := Decision{Outcome: PsyncContinue, Offset: off, PartialOK: true, Reply: ContinueLine,
		Log: "Partial resynchronization request accepted. Sending " +
			strconv.FormatInt(b.First+b.Histlen-off, 10) + " bytes of backlog starting from offset " +
			strconv.FormatInt(off, 10) + "."}
	if req.PSYNC2 {
		d.Reply = ContinueIDLine(st.IDs.ID)
	}
	return d, ""
}
