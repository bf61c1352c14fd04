package replication

import (
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// The FAILOVER command's decisions (Redis 7.0's failoverCommand,
// updateFailoverStatus, abortFailover and clearFailoverState in
// replication.c) as pure code: the request and the node's state go in,
// a reply or an action comes out; time is an input. The shell
// (server/failover.go) pauses the writes, turns the node into a replica of
// the target and back, and feeds the outcome of the PSYNC FAILOVER
// handshake (Handshake's FailoverReply) back.
//
// The flow, as 7.0's: FAILOVER pauses the writes (PAUSE_DURING_FAILOVER)
// and enters WAIT_FOR_SYNC; once the target (or, without TO, the first
// replica) acknowledged master_repl_offset, the node becomes a replica of
// it (FAILOVER_IN_PROGRESS) and its handshake sends
// PSYNC <replid> <offset+1> FAILOVER; the target, whose replid is the
// same, promotes itself and answers +CONTINUE <its new id>; the old master
// clears the state and unpauses (the paused writes are then refused with
// -READONLY). A rejected PSYNC FAILOVER, a TIMEOUT without FORCE or
// FAILOVER ABORT turn the node back into a master (abortFailover).

// FailoverRequest is a parsed FAILOVER command.
type FailoverRequest struct {
	// Abort: FAILOVER ABORT (exactly two arguments).
	Abort bool
	// Host and Port: TO host port (HasTarget); Port is not range-checked,
	// as 7.0's getLongFromObjectOrReply.
	HasTarget bool
	Host      string
	Port      int64
	Force     bool
	// TimeoutMs: TIMEOUT ms (0: none).
	TimeoutMs int64
}

// FailoverReplica is one replica as failoverCommand's findReplica and
// updateFailoverStatus see it.
type FailoverReplica struct {
	// Host is slave_addr (REPLCONF ip-address) or the peer's IP.
	Host string
	// Port is the REPLCONF listening-port.
	Port int
	// Online: replstate is SLAVE_STATE_ONLINE.
	Online bool
	// AckOffset is repl_ack_off.
	AckOffset int64
}

// FailoverEnv is what failoverCommand consults beyond its arguments.
type FailoverEnv struct {
	ClusterEnabled bool
	// State is server.failover_state.
	State FailoverState
	// IsReplica: server.masterhost is set.
	IsReplica bool
	Replicas  []FailoverReplica
}

// The reply lines, byte for byte as Redis 7.0.15 writes them.
const (
	errFailoverCluster    = "-ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.\r\n"
	errFailoverNone       = "-ERR No failover in progress.\r\n"
	errFailoverTimeout    = "-ERR FAILOVER timeout must be greater than 0\r\n"
	errFailoverSyntax     = "-ERR syntax error\r\n"
	errFailoverNotInt     = "-ERR value is not an integer or out of range\r\n"
	errFailoverRunning    = "-ERR FAILOVER already in progress.\r\n"
	errFailoverOnReplica  = "-ERR FAILOVER is not valid when server is a replica.\r\n"
	errFailoverNoReplicas = "-ERR FAILOVER requires connected replicas.\r\n"
	errFailoverForce      = "-ERR FAILOVER with force option requires both a timeout and target HOST and IP.\r\n"
	errFailoverNotReplica = "-ERR FAILOVER target HOST and PORT is not a replica.\r\n"
	errFailoverNotOnline  = "-ERR FAILOVER target replica is not online.\r\n"
	okReplyLine           = "+OK\r\n"
)

// FailoverCommand is what the shell does for a FAILOVER command.
type FailoverCommand struct {
	// Reply is the line to write (an error, or +OK).
	Reply string
	// Abort: FAILOVER ABORT accepted: Failover.Abort then reply.
	Abort bool
	// Start: Failover.Start(Request, now), pause the writes, reply.
	Start   bool
	Request FailoverRequest
	// Log is the notice line, in Redis's words.
	Log string
}

// DecideFailoverCommand is failoverCommand: argv is FAILOVER and its
// arguments; the checks in Redis's order.
func DecideFailoverCommand(argv [][]byte, env FailoverEnv) FailoverCommand {
	if env.ClusterEnabled {
		return FailoverCommand{Reply: errFailoverCluster}
	}
	// "Handle special case for abort"
	if len(argv) == 2 && redisutil.EqFold(argv[1], "abort") {
		if env.State == NoFailover {
			return FailoverCommand{Reply: errFailoverNone}
		}
		return FailoverCommand{Reply: okReplyLine, Abort: true}
	}
	var req FailoverRequest
	for j := 1; j < len(argv); j++ {
		switch {
		case redisutil.EqFold(argv[j], "timeout") && j+1 < len(argv) && req.TimeoutMs == 0:
			n, ok := redisutil.String2ll(string(argv[j+1]))
			if !ok {
				return FailoverCommand{Reply: errFailoverNotInt}
			}
			if n <= 0 {
				return FailoverCommand{Reply: errFailoverTimeout}
			}
			req.TimeoutMs = n
			j++
		case redisutil.EqFold(argv[j], "to") && j+2 < len(argv) && !req.HasTarget:
			n, ok := redisutil.String2ll(string(argv[j+2]))
			if !ok {
				return FailoverCommand{Reply: errFailoverNotInt}
			}
			req.HasTarget, req.Host, req.Port = true, string(argv[j+1]), n
			j += 2
		case redisutil.EqFold(argv[j], "force") && !req.Force:
			req.Force = true
		default:
			return FailoverCommand{Reply: errFailoverSyntax}
		}
	}
	if env.State != NoFailover {
		return FailoverCommand{Reply: errFailoverRunning}
	}
	if env.IsReplica {
		return FailoverCommand{Reply: errFailoverOnReplica}
	}
	if len(env.Replicas) == 0 {
		return FailoverCommand{Reply: errFailoverNoReplicas}
	}
	if req.Force && (req.TimeoutMs == 0 || !req.HasTarget) {
		return FailoverCommand{Reply: errFailoverForce}
	}
	log := "FAILOVER requested to any replica."
	if req.HasTarget {
		r, ok := FindReplica(env.Replicas, req.Host, req.Port)
		if !ok {
			return FailoverCommand{Reply: errFailoverNotReplica}
		}
		if !r.Online {
			return FailoverCommand{Reply: errFailoverNotOnline}
		}
		log = "FAILOVER requested to " + req.Host + ":" + strconv.FormatInt(req.Port, 10) + "."
	}
	return FailoverCommand{Reply: okReplyLine, Start: true, Request: req, Log: log}
}

// FindReplica is findReplica: the first replica whose address matches
// host (case-insensitively) and whose listening port is port.
func FindReplica(rs []FailoverReplica, host string, port int64) (FailoverReplica, bool) {
	for _, r := range rs {
		if strings.EqualFold(host, r.Host) && port == int64(r.Port) {
			return r, true
		}
	}
	return FailoverReplica{}, false
}

// Failover is the failover state of a master (server.failover_state,
// failover_end_time, force_failover, target_replica_host/port).
type Failover struct {
	State FailoverState
	// End is failover_end_time (zero: no TIMEOUT).
	End   time.Time
	Force bool
	// Host and Port are the target; Host is empty until one is known.
	Host string
	Port int
}

// Start is the end of failoverCommand: WAIT_FOR_SYNC, with the target and
// the deadline of req.
func (f *Failover) Start(req FailoverRequest, now time.Time) {
	*f = Failover{State: FailoverWaitSync, Force: req.Force}
	if req.HasTarget {
		f.Host, f.Port = req.Host, int(req.Port)
	}
	if req.TimeoutMs > 0 {
		f.End = now.Add(time.Duration(req.TimeoutMs) * time.Millisecond)
	}
}

// Clear is clearFailoverState (the shell also unpauses the writes).
func (f *Failover) Clear() { *f = Failover{} }

// FailoverStepKind is what updateFailoverStatus decided.
type FailoverStepKind int

const (
	// FailoverWait: nothing to do yet.
	FailoverWait FailoverStepKind = iota
	// FailoverAbort: abortFailover(Reason).
	FailoverAbort
	// FailoverGo: the state is FAILOVER_IN_PROGRESS: become a replica of
	// Host:Port (replicationSetMaster), whose handshake sends PSYNC ...
	// FAILOVER.
	FailoverGo
)

// FailoverStep is Update's decision.
type FailoverStep struct {
	Kind   FailoverStepKind
	Reason string // FailoverAbort's reason
	Host   string // FailoverGo's target
	Port   int
	Log    string
}

// Update is updateFailoverStatus, run by the shell after each batch of
// events (beforeSleep) and every cron tick: in WAIT_FOR_SYNC, the deadline
// first (FORCE fails over to the target regardless, else the failover is
// aborted), then the target (or the first replica, without TO, whose
// acknowledged offset is masterOffset, which becomes the target) is
// checked for having acknowledged everything.
func (f *Failover) Update(now time.Time, masterOffset int64, rs []FailoverReplica) FailoverStep {
	if f.State != FailoverWaitSync {
		return FailoverStep{}
	}
	if !f.End.IsZero() && !f.End.After(now) {
		if f.Force {
			f.State = FailoverInProgress
			return FailoverStep{Kind: FailoverGo, Host: f.Host, Port: f.Port,
				Log: "FAILOVER to " + f.target() + " time out exceeded, failing over."}
		}
		return FailoverStep{Kind: FailoverAbort, Reason: "Replica never caught up before timeout"}
	}
	var r FailoverReplica
	found := false
	if f.Host != "" {
		r, found = FindReplica(rs, f.Host, int64(f.Port))
	} else {
		for _, x := range rs {
			if x.AckOffset == masterOffset {
				r, found = x, true
				f.Host, f.Port = x.Host, x.Port
				break
			}
		}
	}
	if found && r.AckOffset == masterOffset {
		f.State = FailoverInProgress
		return FailoverStep{Kind: FailoverGo, Host: f.Host, Port: f.Port,
			Log: "Failover target " + f.target() + " is synced, failing over."}
	}
	return FailoverStep{}
}

func (f *Failover) target() string { return f.Host + ":" + strconv.Itoa(f.Port) }

// AbortLog is abortFailover's notice line.
func (f *Failover) AbortLog(reason string) string {
	if f.Host != "" {
		return "FAILOVER to " + f.target() + " aborted: " + reason
	}
	return "FAILOVER to any replica aborted: " + reason
}

// PingPaused is replicationCron's manual_failover_in_progress: with a
// FAILOVER deadline set and the clients paused, no PING goes to the
// replicas (it would move master_repl_offset away from what they
// acknowledge). Without TIMEOUT 7.0 still pings.
func (f *Failover) PingPaused(paused bool) bool { return !f.End.IsZero() && paused }
