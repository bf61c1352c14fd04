package replication

import (
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Replconf is what replconfCommand does with one REPLCONF call. Options
// are applied in order, so when Reply is an error the options before the
// bad one are still set (as in Redis).
type Replconf struct {
	ListeningPort *int64  // listening-port
	IPAddress     *string // ip-address (slave_addr)
	CapaEOF       bool    // capa eof
	CapaPSYNC2    bool    // capa psync2
	RDBOnly       *bool   // rdb-only 0|1
	// RDBFilter is set by "rdb-filter-only <filters>": the client's
	// requirements (slave_req) become Req.Apply(old); it is set even when
	// the reply is an error about one of the filters, as Redis sets the
	// bits before it checks them.
	RDBFilter *Req
	// Ack is set for a valid "ack <offset>" from a replica client: apply it
	// with ReplicaAck.OnAck. It is never answered.
	Ack *int64
	// GetAck: "getack": a replica connected to its master answers with
	// StreamOffsets.GetAck; nobody answers otherwise.
	GetAck bool
	// SentinelSeen is set by "sentinel-seen <seq>" (Vigil, sync-ack mode,
	// AckGate): the sentinel SentinelID ("sentinel-id <runid>", the same
	// call) recorded every replica listed in the INFO numbered seq.
	SentinelSeen *uint64
	SentinelID   string
	// Reply is the line to write: "+OK\r\n", an error, or "" for ack/getack
	// (which reply nothing).
	Reply string
}

// The wire texts of the replies.
const (
	okReply     = "+OK\r\n"
	syntaxError = "-ERR syntax error\r\n"
	notInteger  = "-ERR value is not an integer or out of range\r\n"
)

// ParseReplconf is replconfCommand. argv includes the command name;
// isReplica says whether the client already is a replica (ACK is ignored
// otherwise).
func ParseReplconf(argv [][]byte, isReplica bool) Replconf {
	var r Replconf
	// "Number of arguments must be odd to make sure that every option has a
	// corresponding value."
	if len(argv)%2 == 0 {
		r.Reply = syntaxError
		return r
	}
	for j := 1; j < len(argv); j += 2 {
		opt, val := string(argv[j]), argv[j+1]
		switch strings.ToLower(opt) {
		case "listening-port":
			port, ok := redisutil.String2ll(val)
			if !ok {
				r.Reply = notInteger
				return r
			}
			r.ListeningPort = &port
		case "ip-address":
			// sdslen(addr) < NET_HOST_STR_LEN (256)
			if len(val) >= 256 {
				r.Reply = "-ERR REPLCONF ip-address provided by replica instance is too long: " + strconv.Itoa(len(val)) + " bytes\r\n"
				return r
			}
			s := string(val)
			r.IPAddress = &s
		case "capa":
			// "Ignore capabilities not understood by this master."
			switch strings.ToLower(string(val)) {
			case "eof":
				r.CapaEOF = true
			case "psync2":
				r.CapaPSYNC2 = true
			}
		case "ack":
			// "Note: this command does not reply anything!"
			r.Reply = ""
			if !isReplica {
				return r
			}
			if off, ok := redisutil.String2ll(val); ok {
				r.Ack = &off
			}
			return r
		case "getack":
			r.Reply = ""
			r.GetAck = true
			return r
		case "rdb-only":
			n, ok := redisutil.String2ll(val)
			if !ok {
				r.Reply = notInteger
				return r
			}
			if n < 0 || n > 1 {
				r.Reply = "-ERR value is out of range, value must between 0 and 1\r\n"
				return r
			}
			on := n == 1
			r.RDBOnly = &on
		case "rdb-filter-only":
			// "include" filters for the RDB (sdssplitargs); only "functions"
			// is known, and "" asks for an empty RDB. redis-cli sends
			// "functions" for --functions-rdb and "" for --replica.
			filters, err := redisutil.SplitArgs(string(val))
			if err != nil {
				r.Reply = "-ERR Missing rdb-filter-only values\r\n"
				return r
			}
			// "By default filter out all parts of the rdb"
			req := Req{Set: ReqExcludeData | ReqExcludeFunctions}
			r.RDBFilter = &req
			for _, f := range filters {
				if !strings.EqualFold(f, "functions") {
					r.Reply = "-ERR Unsupported rdb-filter-only option: " + sanitizeErr(f) + "\r\n"
					return r
				}
				req.Clear |= ReqExcludeFunctions
			}
		case "sentinel-seen":
			n, ok := redisutil.String2ll(val)
			if !ok || n < 0 {
				r.Reply = notInteger
				return r
			}
			seq := uint64(n)
			r.SentinelSeen = &seq
		case "sentinel-id":
			if len(val) == 0 || len(val) > 64 {
				r.Reply = syntaxError
				return r
			}
			r.SentinelID = string(val)
		default:
			r.Reply = "-ERR Unrecognized REPLCONF option: " + opt + "\r\n"
			return r
		}
	}
	r.Reply = okReply
	return r
}

// ReqFlags are a replica client's requirements (Redis's slave_req).
type ReqFlags uint8

const (
	ReqExcludeData      ReqFlags = 1 << iota // SLAVE_REQ_RDB_EXCLUDE_DATA: no keys in the RDB
	ReqExcludeFunctions                      // SLAVE_REQ_RDB_EXCLUDE_FUNCTIONS: no libraries
)

// ReqMask is SLAVE_REQ_RDB_MASK: any of them makes the RDB "filtered".
const ReqMask = ReqExcludeData | ReqExcludeFunctions

// Req is one rdb-filter-only option's change to slave_req: the bits Set
// are or-ed in, then the bits Clear are cleared (an exclusion once set
// for data stays, as in Redis, where nothing clears it).
type Req struct{ Set, Clear ReqFlags }

// Apply returns old changed by r.
func (r Req) Apply(old ReqFlags) ReqFlags { return (old | r.Set) &^ r.Clear }

// sanitizeErr is addReplyErrorFormat's replacement of newlines by spaces.
func sanitizeErr(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// ReplicaofState is what replicaofCommand consults.
type ReplicaofState struct {
	ClusterEnabled bool
	FailingOver    bool
	// ClientIsReplica: the caller is a replica client (CLIENT_SLAVE).
	ClientIsReplica bool
	// MasterHost/MasterPort: the current master, MasterHost "" on a master.
	MasterHost string
	MasterPort int
	// RefusingEmpty: the empty-restart guard is refusing the current
	// master's payload (INFO master_sync_refused_empty:1).
	RefusingEmpty bool
}

// ReplicaofAction is what the shell must do after replying.
type ReplicaofAction int

const (
	ReplicaofNothing ReplicaofAction = iota
	// ReplicaofPromote: replicationUnsetMaster (shift the IDs, disconnect
	// the replicas so they PSYNC again, forget the selected db).
	ReplicaofPromote
	// ReplicaofFollow: replicationSetMaster(Host, Port): drop the current
	// link, disconnect blocked clients, cache a master synthesized from
	// this node's own history when it was a master, connect at once.
	ReplicaofFollow
	// ReplicaofAcceptEmpty: the node already follows Host:Port and its
	// empty-restart guard is refusing that master's payload
	// (ReplicaofState.RefusingEmpty): the operator's REPLICAOF clears the
	// guard for the link, whose next full sync loads even an empty dataset
	// (emptysync.go). The reply stays Redis's "Already connected".
	ReplicaofAcceptEmpty
)

// ReplicaofDecision is the reply and the action.
type ReplicaofDecision struct {
	Reply  string
	Action ReplicaofAction
	Host   string
	Port   int
}

// DecideReplicaof is replicaofCommand: argv is REPLICAOF/SLAVEOF host port.
func DecideReplicaof(argv [][]byte, st ReplicaofState) ReplicaofDecision {
	if len(argv) != 3 {
		// The command table's arity check normally answers first.
		return ReplicaofDecision{Reply: "-ERR wrong number of arguments for 'replicaof' command\r\n"}
	}
	if st.ClusterEnabled {
		return ReplicaofDecision{Reply: "-ERR REPLICAOF not allowed in cluster mode.\r\n"}
	}
	if st.FailingOver {
		return ReplicaofDecision{Reply: "-ERR REPLICAOF not allowed while failing over.\r\n"}
	}
	host := string(argv[1])
	// "The special host/port combination "NO" "ONE" turns the instance
	// into a master."
	if strings.EqualFold(host, "no") && strings.EqualFold(string(argv[2]), "one") {
		if st.MasterHost != "" {
			return ReplicaofDecision{Reply: okReply, Action: ReplicaofPromote}
		}
		return ReplicaofDecision{Reply: okReply}
	}
	if st.ClientIsReplica {
		return ReplicaofDecision{Reply: "-ERR Command is not valid when client is a replica.\r\n"}
	}
	port, ok := redisutil.String2ll(argv[2])
	if !ok || port < 0 || port > 65535 {
		return ReplicaofDecision{Reply: "-ERR Invalid master port\r\n"}
	}
	// "Check if we are already attached to the specified master"
	if st.MasterHost != "" && strings.EqualFold(st.MasterHost, host) && st.MasterPort == int(port) {
		d := ReplicaofDecision{Reply: "+OK Already connected to specified master\r\n"}
		if st.RefusingEmpty {
			d.Action, d.Host, d.Port = ReplicaofAcceptEmpty, host, int(port)
		}
		return d
	}
	return ReplicaofDecision{Reply: okReply, Action: ReplicaofFollow, Host: host, Port: int(port)}
}
