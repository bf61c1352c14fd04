package replication

import (
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/resp"
)

// ReplState is a replica's link state, server.repl_state, named after
// Redis's REPL_STATE_* (server.h), in the same order.
type ReplState int

const (
	StateNone              ReplState = iota // REPL_STATE_NONE: no active replication
	StateConnect                            // REPL_STATE_CONNECT: must connect to master
	StateConnecting                         // REPL_STATE_CONNECTING
	StateReceivePingReply                   // REPL_STATE_RECEIVE_PING_REPLY
	StateSendHandshake                      // REPL_STATE_SEND_HANDSHAKE
	StateReceiveAuthReply                   // REPL_STATE_RECEIVE_AUTH_REPLY
	StateReceivePortReply                   // REPL_STATE_RECEIVE_PORT_REPLY
	StateReceiveIPReply                     // REPL_STATE_RECEIVE_IP_REPLY
	StateReceiveCapaReply                   // REPL_STATE_RECEIVE_CAPA_REPLY
	StateSendPsync                          // REPL_STATE_SEND_PSYNC
	StateReceivePsyncReply                  // REPL_STATE_RECEIVE_PSYNC_REPLY
	StateTransfer                           // REPL_STATE_TRANSFER: receiving the RDB
	StateConnected                          // REPL_STATE_CONNECTED
)

var replStateNames = [...]string{"REPL_STATE_NONE", "REPL_STATE_CONNECT", "REPL_STATE_CONNECTING",
	"REPL_STATE_RECEIVE_PING_REPLY", "REPL_STATE_SEND_HANDSHAKE", "REPL_STATE_RECEIVE_AUTH_REPLY",
	"REPL_STATE_RECEIVE_PORT_REPLY", "REPL_STATE_RECEIVE_IP_REPLY", "REPL_STATE_RECEIVE_CAPA_REPLY",
	"REPL_STATE_SEND_PSYNC", "REPL_STATE_RECEIVE_PSYNC_REPLY", "REPL_STATE_TRANSFER", "REPL_STATE_CONNECTED"}

func (s ReplState) String() string {
	if s < 0 || int(s) >= len(replStateNames) {
		return "REPL_STATE_UNKNOWN"
	}
	return replStateNames[s]
}

// InHandshake is slaveIsInHandshakeState: RECEIVE_PING_REPLY through
// RECEIVE_PSYNC_REPLY.
func (s ReplState) InHandshake() bool {
	return s >= StateReceivePingReply && s <= StateReceivePsyncReply
}

// RoleState is the state ROLE reports for a replica (roleCommand): none,
// connect, connecting, handshake, sync or connected.
func (s ReplState) RoleState() string {
	switch {
	case s.InHandshake():
		return "handshake"
	case s == StateNone:
		return "none"
	case s == StateConnect:
		return "connect"
	case s == StateConnecting:
		return "connecting"
	case s == StateTransfer:
		return "sync"
	case s == StateConnected:
		return "connected"
	}
	return "unknown"
}

// HandshakeConfig is what the replica announces and how it authenticates.
type HandshakeConfig struct {
	// MasterUser and MasterAuth: AUTH [<masteruser>] <masterauth> is sent
	// only when MasterAuth is set.
	MasterUser, MasterAuth string
	// ListeningPort is already resolved as Redis does: replica-announce-port,
	// else tls-port when tls-replication, else port.
	ListeningPort int
	// AnnounceIP is replica-announce-ip: REPLCONF ip-address only when set.
	AnnounceIP string
	// Failover: this node runs FAILOVER and is in FAILOVER_IN_PROGRESS; PSYNC
	// carries a 4th argument FAILOVER.
	Failover bool
}

// CachedMaster is what a replica knows of the history it has (Redis's
// cached_master): the master's replid and the offset it applied. PSYNC
// asks for the byte after it.
type CachedMaster struct {
	ReplID string
	Offset int64
}

// Handshake is the replica side of syncWithMaster, slaveTryPartialResynchronization
// and the header part of readSyncBulkPayload as a pure state machine: the
// shell feeds it events (the socket connected, a reply line arrived, the
// payload was loaded, the link failed) and executes the actions it returns.
// It never touches a socket or a clock.
type Handshake struct {
	State ReplState
	cfg   HandshakeConfig
	// cached is the cached master, if any (nil: PSYNC ? -1).
	cached *CachedMaster
	// masterReplID and initialOffset are server.master_replid and
	// server.master_initial_offset, set by +FULLRESYNC.
	masterReplID  string
	initialOffset int64
	// payload framing, once the $ line is read.
	headerRead bool
	eofMark    string
}

// NewHandshake is replicationSetMaster's starting point: state CONNECT, the
// next cron connects. cached may be nil.
func NewHandshake(cfg HandshakeConfig, cached *CachedMaster) *Handshake {
	h := &Handshake{State: StateConnect, cfg: cfg, initialOffset: -1}
	h.SetCached(cached)
	return h
}

// SetAuth sets the credentials the next handshake sends: syncWithMaster
// reads masteruser and masterauth each time it connects, so a CONFIG SET
// of them applies from the next attempt on.
func (h *Handshake) SetAuth(user, pass string) {
	h.cfg.MasterUser, h.cfg.MasterAuth = user, pass
}

// SetCached replaces the cached master (the shell caches the master when a
// connected link drops, and discards it on a full resync).
func (h *Handshake) SetCached(c *CachedMaster) {
	if c == nil {
		h.cached = nil
		return
	}
	cp := *c
	h.cached = &cp
}

// Cached returns the cached master the next PSYNC will use, if any.
func (h *Handshake) Cached() (CachedMaster, bool) {
	if h.cached == nil {
		return CachedMaster{}, false
	}
	return *h.cached, true
}

// Event is something that happened to the link.
type Event interface{ isEvent() }

// Connect: replicationCron found the state CONNECT (connectWithMaster).
type Connect struct{}

// Connected: the non-blocking connect completed.
type Connected struct{}

// Reply: one line from the master, without its CRLF (a bare "\n" keepalive
// is the empty line).
type Reply struct{ Line string }

// PayloadLoaded: the shell read the payload announced by ExpectPayload and
// loaded it successfully.
type PayloadLoaded struct{}

// LinkFailed: connect failed, an I/O error, a timeout decided by the cron
// (ReplicaTimedOut), or a failed load.
type LinkFailed struct {
	Reason string
	// ProtocolError: the master sent a malformed stream. As freeClient
	// with CLIENT_PROTOCOL_ERROR, the master is not cached: the next sync
	// is a full one (the applied offset can no longer be trusted).
	ProtocolError bool
}

// Stop: REPLICAOF NO ONE (or a new REPLICAOF): the handshake is abandoned.
type Stop struct{}

func (Connect) isEvent()       {}
func (Connected) isEvent()     {}
func (Reply) isEvent()         {}
func (PayloadLoaded) isEvent() {}
func (LinkFailed) isEvent()    {}
func (Stop) isEvent()          {}

// Action is something the shell must do.
type Action interface{ isAction() }

// Dial: connect to the master (non-blocking; report Connected or LinkFailed).
type Dial struct{}

// Send: write Data to the master.
type Send struct{ Data []byte }

// Close: close the link. The state is CONNECT again and the next cron
// reconnects. CacheMaster is set when the link was CONNECTED: the shell
// caches the master client for the next PSYNC (replicationCacheMaster) by
// calling SetCached with the master's replid and its applied offset.
type Close struct {
	Reason      string
	CacheMaster bool
}

// Log: a line for the log, in Redis's words.
type Log struct {
	Warning bool
	Msg     string
}

// FullResync: the master answered +FULLRESYNC. ReplID and Offset become the
// node's after the load (ReplID is empty and Offset -1 if the line was
// malformed, as Redis blanks master_replid). The cached master is kept
// until the payload is loaded (7.0's replicationAttachToNewMaster), so a
// failed transfer still retries with PSYNC <cached id>.
type FullResync struct {
	ReplID string
	Offset int64
}

// PartialResync: +CONTINUE: resurrect the cached master on this link and
// create the backlog if there is none. When NewID is set the master's ID
// changed: IDs.AdoptContinue(NewID, OldID, master_repl_offset), and
// disconnect the sub-replicas.
type PartialResync struct {
	NewID, OldID string
}

// ExpectPayload: the $ line was read: read the RDB with NewPayloadReader
// (Size bytes, or up to EOFMark when EOFMark is set), load it, then report
// PayloadLoaded or LinkFailed.
type ExpectPayload struct {
	Size    int64
	EOFMark string
}

// KeepAlive: a newline from the master while it prepares the payload:
// refresh repl_transfer_lastio.
type KeepAlive struct{}

// Synced: the payload is loaded: the node's ID becomes ReplID (ID2
// cleared), master_repl_offset and the master client's offset become
// Offset, the backlog is created if missing. PrePsync (Offset -1: the
// master answered the SYNC fallback) flags the master client
// CLIENT_PRE_PSYNC: no ACKs. SendAck: the payload was EOF-framed, so send
// REPLCONF ACK at once (the master starts the stream on that first ACK).
type Synced struct {
	ReplID   string
	Offset   int64
	PrePsync bool
	SendAck  bool
}

// FailoverReply: the answer to PSYNC ... FAILOVER (HandshakeConfig.Failover)
// arrived. Accepted (+CONTINUE or +FULLRESYNC): the shell clears its
// failover state and the actions of the answer follow. Otherwise the
// handshake is over (state NONE, a Close follows) and the shell aborts the
// failover ("Failover target rejected psync request").
type FailoverReply struct {
	Accepted bool
	Reply    string
}

// FailingOver reports whether the next PSYNC carries FAILOVER.
func (h *Handshake) FailingOver() bool { return h.cfg.Failover }

func (Dial) isAction()          {}
func (FailoverReply) isAction() {}
func (Send) isAction()          {}
func (Close) isAction()         {}
func (Log) isAction()           {}
func (FullResync) isAction()    {}
func (PartialResync) isAction() {}
func (ExpectPayload) isAction() {}
func (KeepAlive) isAction()     {}
func (Synced) isAction()        {}

func notice(msg string) Action  { return Log{Msg: msg} }
func warning(msg string) Action { return Log{Warning: true, Msg: msg} }

// fail is syncWithMaster's "goto error": close and go back to CONNECT.
func (h *Handshake) fail(acts []Action, reason string) []Action {
	h.State = StateConnect
	h.headerRead = false
	return append(acts, Close{Reason: reason})
}

// Step applies one event and returns the actions, in order.
func (h *Handshake) Step(ev Event) []Action {
	switch ev := ev.(type) {
	case Stop:
		was := h.State
		h.State = StateNone
		if was == StateNone || was == StateConnect {
			return nil
		}
		return []Action{Close{Reason: "replication stopped", CacheMaster: was == StateConnected}}
	case LinkFailed:
		switch h.State {
		case StateNone, StateConnect:
			return nil
		case StateConnected:
			h.State = StateConnect
			if ev.ProtocolError {
				// The master client is freed, not cached: no cached
				// master is left, so the next PSYNC is "? -1".
				h.cached = nil
			}
			return []Action{warning("Connection with master lost."), Close{Reason: ev.Reason, CacheMaster: !ev.ProtocolError}}
		}
		return h.fail([]Action{warning(ev.Reason)}, ev.Reason)
	case Connect:
		if h.State != StateConnect {
			return nil
		}
		h.State = StateConnecting
		return []Action{Dial{}}
	case Connected:
		if h.State != StateConnecting {
			return nil
		}
		// "Send a PING to check the master is able to reply without errors."
		h.State = StateReceivePingReply
		return []Action{notice("Non blocking connect for SYNC fired the event."),
			Send{Data: resp.AppendCommandStrings(nil, "PING")}}
	case PayloadLoaded:
		if h.State != StateTransfer || !h.headerRead {
			return h.fail([]Action{warning("syncWithMaster(): payload loaded outside a transfer")}, "state machine error")
		}
		h.State = StateConnected
		h.headerRead = false
		h.cached = nil // replicationAttachToNewMaster: replicationDiscardCachedMaster
		s := Synced{ReplID: h.masterReplID, Offset: h.initialOffset, PrePsync: h.initialOffset == -1, SendAck: h.eofMark != ""}
		return []Action{notice("MASTER <-> REPLICA sync: Finished with success"), s}
	case Reply:
		return h.reply(ev.Line)
	}
	return nil
}

func (h *Handshake) reply(line string) []Action {
	switch h.State {
	case StateReceivePingReply:
		// "We accept only two replies as valid, a positive +PONG reply (we
		// just check for "+") or an authentication error."
		if !strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "-NOAUTH") &&
			!strings.HasPrefix(line, "-NOPERM") && !strings.HasPrefix(line, "-ERR operation not permitted") {
			return h.fail([]Action{warning("Error reply to PING from master: '" + line + "'")}, "bad PING reply")
		}
		acts := []Action{notice("Master replied to PING, replication can continue...")}
		h.State = StateSendHandshake
		return append(acts, h.sendHandshake()...)
	case StateReceiveAuthReply:
		if strings.HasPrefix(line, "-") {
			return h.fail([]Action{warning("Unable to AUTH to MASTER: " + line)}, "AUTH refused")
		}
		h.State = StateReceivePortReply
		return nil
	case StateReceivePortReply:
		// "Ignore the error if any, not all the Redis versions support
		// REPLCONF listening-port."
		var acts []Action
		if strings.HasPrefix(line, "-") {
			acts = append(acts, notice("(Non critical) Master does not understand REPLCONF listening-port: "+line))
		}
		h.State = StateReceiveIPReply
		if h.cfg.AnnounceIP == "" {
			h.State = StateReceiveCapaReply
		}
		return acts
	case StateReceiveIPReply:
		var acts []Action
		if strings.HasPrefix(line, "-") {
			acts = append(acts, notice("(Non critical) Master does not understand REPLCONF ip-address: "+line))
		}
		h.State = StateReceiveCapaReply
		return acts
	case StateReceiveCapaReply:
		var acts []Action
		if strings.HasPrefix(line, "-") {
			acts = append(acts, notice("(Non critical) Master does not understand REPLCONF capa: "+line))
		}
		h.State = StateSendPsync
		return append(acts, h.sendPsync()...)
	case StateReceivePsyncReply:
		return h.psyncReply(line)
	case StateTransfer:
		if h.headerRead {
			return h.fail([]Action{warning("Unexpected line from MASTER during the transfer")}, "state machine error")
		}
		return h.payloadHeader(line)
	case StateConnected:
		// The stream is the command reader's business, not the handshake's.
		return nil
	}
	return h.fail([]Action{warning("syncWithMaster(): state machine error, reply in state " + h.State.String())}, "state machine error")
}

// sendHandshake is REPL_STATE_SEND_HANDSHAKE: AUTH, REPLCONF listening-port,
// REPLCONF ip-address and REPLCONF capa in one write.
func (h *Handshake) sendHandshake() []Action {
	var b []byte
	if h.cfg.MasterAuth != "" {
		if h.cfg.MasterUser != "" {
			b = resp.AppendCommandStrings(b, "AUTH", h.cfg.MasterUser, h.cfg.MasterAuth)
		} else {
			b = resp.AppendCommandStrings(b, "AUTH", h.cfg.MasterAuth)
		}
	}
	b = resp.AppendCommandStrings(b, "REPLCONF", "listening-port", strconv.Itoa(h.cfg.ListeningPort))
	if h.cfg.AnnounceIP != "" {
		b = resp.AppendCommandStrings(b, "REPLCONF", "ip-address", h.cfg.AnnounceIP)
	}
	b = resp.AppendCommandStrings(b, "REPLCONF", "capa", "eof", "capa", "psync2")
	// "if (server.repl_state == REPL_STATE_RECEIVE_AUTH_REPLY && !server.masterauth)
	//      server.repl_state = REPL_STATE_RECEIVE_PORT_REPLY;"
	h.State = StateReceiveAuthReply
	if h.cfg.MasterAuth == "" {
		h.State = StateReceivePortReply
	}
	return []Action{Send{Data: b}}
}

// sendPsync is slaveTryPartialResynchronization's write half.
func (h *Handshake) sendPsync() []Action {
	h.initialOffset = -1
	id, off := "?", "-1"
	var log Action
	if h.cached != nil {
		id, off = h.cached.ReplID, strconv.FormatInt(h.cached.Offset+1, 10)
		log = notice("Trying a partial resynchronization (request " + id + ":" + off + ").")
	} else {
		log = notice("Partial resynchronization not possible (no cached master)")
	}
	argv := []string{"PSYNC", id, off}
	if h.cfg.Failover {
		argv = append(argv, "FAILOVER")
	}
	h.State = StateReceivePsyncReply
	return []Action{log, Send{Data: resp.AppendCommandStrings(nil, argv...)}}
}

// psyncReply is slaveTryPartialResynchronization's read half and what
// syncWithMaster does with its result.
func (h *Handshake) psyncReply(line string) []Action {
	if line == "" {
		// "The master may send empty newlines after it receives PSYNC and
		// before to reply, just to keep the connection alive."
		return nil // PSYNC_WAIT_REPLY
	}
	if h.cfg.Failover {
		// syncWithMaster in FAILOVER_IN_PROGRESS: +CONTINUE or +FULLRESYNC
		// completes the failover (clearFailoverState), anything else aborts
		// it (abortFailover: the shell turns the node back into a master,
		// which stops this handshake). Later PSYNCs carry no FAILOVER.
		h.cfg.Failover = false
		if !strings.HasPrefix(line, "+FULLRESYNC") && !strings.HasPrefix(line, "+CONTINUE") {
			h.State = StateNone
			return []Action{FailoverReply{Reply: line}, Close{Reason: "Failover target rejected psync request"}}
		}
		return append([]Action{FailoverReply{Accepted: true, Reply: line}}, h.psyncReply(line)...)
	}
	if strings.HasPrefix(line, "+FULLRESYNC") {
		var acts []Action
		id, off, ok := parseFullResync(line)
		if !ok {
			// "To stay safe we blank the master replid to make sure next
			// PSYNCs will fail."
			acts = append(acts, warning("Master replied with wrong +FULLRESYNC syntax."))
			h.masterReplID = ""
		} else {
			h.masterReplID, h.initialOffset = id, off
			acts = append(acts, notice("Full resync from master: "+id+":"+strconv.FormatInt(off, 10)))
		}
		// Redis 7.0 keeps the cached master until the payload is applied
		// (replicationAttachToNewMaster discards it), so a transfer that
		// fails still leaves it for the next PSYNC.
		h.State = StateTransfer
		h.headerRead = false
		return append(acts, FullResync{ReplID: h.masterReplID, Offset: h.initialOffset})
	}
	if strings.HasPrefix(line, "+CONTINUE") {
		if h.cached == nil {
			// Redis would dereference a NULL cached_master here; a hostile
			// master gets the link closed instead.
			return h.fail([]Action{warning("Unexpected reply to PSYNC from master: " + line)}, "+CONTINUE without a cached master")
		}
		acts := []Action{notice("Successful partial resynchronization with master.")}
		pr := PartialResync{}
		// start = reply+10; the new ID counts only if it is exactly
		// CONFIG_RUN_ID_SIZE chars up to the end of the line.
		if len(line) == 10+IDLen {
			if id := line[10:]; id != h.cached.ReplID {
				acts = append(acts, notice("Master replication ID changed to "+id))
				pr = PartialResync{NewID: id, OldID: h.cached.ReplID}
				h.cached.ReplID = id
			}
		}
		h.State = StateConnected
		acts = append(acts, pr, notice("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization."))
		return acts
	}
	if strings.HasPrefix(line, "-NOMASTERLINK") || strings.HasPrefix(line, "-LOADING") {
		// PSYNC_TRY_LATER
		return h.fail([]Action{notice("Master is currently unable to PSYNC but should be in the future: " + line)}, "PSYNC: try later")
	}
	// PSYNC_NOT_SUPPORTED: fall back to SYNC.
	var acts []Action
	if !strings.HasPrefix(line, "-ERR") {
		acts = append(acts, warning("Unexpected reply to PSYNC from master: "+line))
	} else {
		acts = append(acts, notice("Master does not support PSYNC or is in error state (reply: "+line+")"))
	}
	acts = append(acts, notice("Retrying with SYNC..."), Send{Data: []byte("SYNC\r\n")})
	h.State = StateTransfer
	h.headerRead = false
	return acts
}

// parseFullResync parses "+FULLRESYNC <replid> <offset>" as Redis does: the
// ID is what lies between the first and the second space and must be 40
// chars; the offset is read like strtoll (leading digits, 0 if none).
func parseFullResync(line string) (id string, off int64, ok bool) {
	sp := strings.IndexByte(line, ' ')
	if sp < 0 {
		return "", 0, false
	}
	rest := line[sp+1:]
	sp = strings.IndexByte(rest, ' ')
	if sp != IDLen {
		return "", 0, false
	}
	return rest[:IDLen], strtoll(rest[IDLen+1:]), true
}

// strtoll is C's strtoll(s, NULL, 10): optional spaces and sign, then the
// leading digits; 0 when there are none, clamped on overflow.
func strtoll(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n uint64 // at most 1<<63
	over := false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if over || n > (1<<63-d)/10 {
			over = true
			continue
		}
		n = n*10 + d
	}
	switch {
	case over && neg:
		return -1 << 63
	case neg:
		return -int64(n)
	case over || n > 1<<63-1:
		return 1<<63 - 1
	}
	return int64(n)
}

// payloadHeader is readSyncBulkPayload's first part: newlines are
// keepalives, a '-' line means the master aborted, then $<len> or
// $EOF:<mark>.
func (h *Handshake) payloadHeader(line string) []Action {
	ph, err := ParsePayloadHeader(line)
	if err != nil {
		return h.fail([]Action{warning(err.Error())}, err.Error())
	}
	switch ph.Kind {
	case HeaderKeepAlive:
		// "At this stage just a newline works as a PING in order to take
		// the connection live."
		return []Action{KeepAlive{}}
	case HeaderEOF:
		h.headerRead, h.eofMark = true, ph.EOFMark
		return []Action{notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF"), ExpectPayload{EOFMark: ph.EOFMark}}
	default:
		h.headerRead, h.eofMark = true, ""
		return []Action{notice("MASTER <-> REPLICA sync: receiving " + strconv.FormatInt(ph.Size, 10) + " bytes from master"), ExpectPayload{Size: ph.Size}}
	}
}
