package sentinel

// Event is a past-tense fact the shell delivers to Core.Step.
//
// Contract with the shell:
//   - Every request action (SendPing, SendInfo, PublishHello, AskMasterDown,
//     SendReplicaOf, SendScriptKill) is answered by exactly one reply event on
//     the same connection, unless the connection closes first.
//   - After the core emits Disconnect for a connection, or the shell reports
//     LinkDisconnected for it, no reply, message or LinkConnected from that
//     connection (or from a dial still in progress) may be delivered.
//   - A Connect is answered by LinkConnected or LinkDisconnected for each
//     connection it asked for; dials must time out.
type Event interface{ isEvent() }

// Ticked is the periodic timer (sentinelTimer). Deliver it every
// Core.TickDelay() milliseconds (about 100 ms).
type Ticked struct{}

// LinkConnected reports that a connection asked for by Connect is established.
// For ConnCmd, LocalIP is the local address of the socket (getsockname), used
// as the hello's sentinel-ip when announce-ip is not set.
//
// As hiredis does, the shell queues what is sent on a connection still being
// opened: first AUTH (when Core.Auth gives a password, or for a sentinel
// link this sentinel's requirepass, Options.RequirePass) and CLIENT SETNAME,
// then SUBSCRIBE on ConnPubSub, then the commands the core sends meanwhile
// (the core treats a connection being opened as present, as sentinel.c
// clears link->disconnected as soon as the contexts exist). Each AUTH and
// SETNAME reply is reported as PreludeReplied.
type LinkConnected struct {
	Instance Ref
	Conn     Conn
	LocalIP  string
}

// LinkLocalIP reports, as soon as the shell knows it, the local address the
// command connection being opened uses (Redis reads it with getsockname on
// the connecting socket): hellos can then go out on the connection before
// it is established, as sentinelSendHello does. LinkConnected's LocalIP
// supersedes it.
type LinkLocalIP struct {
	Instance Ref
	LocalIP  string
}

// LinkDisconnected reports that a connection failed to connect or was closed
// by the peer or the network.
type LinkDisconnected struct {
	Instance Ref
	Conn     Conn
}

// PingReplied is the reply to SendPing. Reply is the text of a status or error
// reply without its leading '+' or '-' (e.g. "PONG", "LOADING Redis is
// loading...", "BUSY ..."); for any other reply type (a bulk "PONG", an array)
// it is "". The core applies sentinelPingReplyCallback's rule: PONG, LOADING
// and MASTERDOWN prefixes count as available.
type PingReplied struct {
	Instance Ref
	Reply    string
}

// InfoReceived is the reply to SendInfo: the raw INFO text. Failed is set when
// the reply was an error or not a string; the core then ignores it.
type InfoReceived struct {
	Instance Ref
	Info     string
	Failed   bool
}

// HelloReceived is a message on __sentinel__:hello. Instance is the master or
// replica whose pub/sub connection delivered it (the shell must deliver only
// 3-element "message" arrays, including this sentinel's own hellos, which the
// core filters and counts as link activity). A zero Instance means the payload
// came to this sentinel as `PUBLISH __sentinel__:hello <payload>`; the shell
// replies :1 itself.
type HelloReceived struct {
	Instance Ref
	Payload  string
}

// PublishReplied is the reply to PublishHello. OK is false for an error reply.
type PublishReplied struct {
	Instance Ref
	OK       bool
}

// IsMasterDownReplied is the reply to AskMasterDown. Invalid is set unless the
// reply was exactly *3 [integer, bulk, integer]; Down is (integer == 1).
type IsMasterDownReplied struct {
	Sentinel    Ref
	Invalid     bool
	Down        bool
	Leader      string
	LeaderEpoch uint64
}

// PreludeReplied is the (ignored) reply to the AUTH or CLIENT SETNAME the
// shell sent first on a connection (sentinelDiscardReplyCallback): it settles
// one of the pending commands counted for them.
type PreludeReplied struct {
	Instance Ref
	Conn     Conn
}

// CommandReplied is the (ignored) reply to SendReplicaOf (the EXEC of the
// transaction) or SendScriptKill; it only settles the pending count.
type CommandReplied struct {
	Instance Ref
}

// IsMasterDownAsked is `SENTINEL IS-MASTER-DOWN-BY-ADDR ip port epoch runid`
// from another sentinel. Step answers with one MasterDownReply action.
type IsMasterDownAsked struct {
	IP    string
	Port  int
	Epoch uint64
	RunID string
}

// MonitorRequested is SENTINEL MONITOR name ip port quorum (the shell replies
// "Invalid port" / "Invalid quorum" itself when they are not integers).
type MonitorRequested struct {
	Name   string
	IP     string
	Port   int
	Quorum int
}

// RemoveRequested is SENTINEL REMOVE name.
type RemoveRequested struct{ Name string }

// SetRequested is SENTINEL SET name option value [option value ...]; Args are
// the raw arguments after the name. Script paths must have been checked for
// executability by the shell (access X_OK) before delivering the event.
type SetRequested struct {
	Name string
	Args []string
}

// ResetRequested is SENTINEL RESET pattern (a Redis glob).
type ResetRequested struct{ Pattern string }

// FailoverRequested is SENTINEL FAILOVER name [COORDINATED] (a forced
// failover). Coordinated (a Vigil extension) hands over through the master:
// the leader sends it FAILOVER TO <replica> TIMEOUT <ms> instead of SLAVEOF
// NO ONE to the replica, so no acknowledged write is lost.
type FailoverRequested struct {
	Name        string
	Coordinated bool
}

// FailoverReplied is the reply to SendFailover. Err is the error reply's
// text ("" for +OK; any other non-error reply counts as OK).
type FailoverReplied struct {
	Instance Ref
	Err      string
}

// ConfigSetRequested is SENTINEL CONFIG SET param value.
type ConfigSetRequested struct {
	Param string
	Value string
}

// DebugRequested is SENTINEL DEBUG param value [param value ...].
type DebugRequested struct{ Args []string }

// FlushConfigRequested is SENTINEL FLUSHCONFIG.
type FlushConfigRequested struct{}

// SimulateFailureRequested is SENTINEL SIMULATE-FAILURE: Flags are its
// arguments before the first HELP or unknown one, lowercased, in order
// (repeats kept). The core clears both crash flags, then sets and logs one
// line per flag, as sentinelCommand does even when the command then replies
// HELP or an error.
type SimulateFailureRequested struct {
	Flags []string
}

// Simulate-failure flag names (SimulateFailureRequested.Flags).
const (
	SimCrashAfterElection  = "crash-after-election"
	SimCrashAfterPromotion = "crash-after-promotion"
)

// ConfigLoaded delivers the parsed sentinel.conf once, at startup, before any
// other event. The core answers with a Reply (an error names the bad
// directive), a RewriteConfig if it generated myid, and +monitor per master.
type ConfigLoaded struct{ Config Config }

func (Ticked) isEvent()                   {}
func (LinkConnected) isEvent()            {}
func (LinkDisconnected) isEvent()         {}
func (PingReplied) isEvent()              {}
func (InfoReceived) isEvent()             {}
func (HelloReceived) isEvent()            {}
func (PublishReplied) isEvent()           {}
func (IsMasterDownReplied) isEvent()      {}
func (CommandReplied) isEvent()           {}
func (PreludeReplied) isEvent()           {}
func (LinkLocalIP) isEvent()              {}
func (IsMasterDownAsked) isEvent()        {}
func (MonitorRequested) isEvent()         {}
func (RemoveRequested) isEvent()          {}
func (SetRequested) isEvent()             {}
func (ResetRequested) isEvent()           {}
func (FailoverRequested) isEvent()        {}
func (FailoverReplied) isEvent()          {}
func (ConfigSetRequested) isEvent()       {}
func (DebugRequested) isEvent()           {}
func (FlushConfigRequested) isEvent()     {}
func (SimulateFailureRequested) isEvent() {}
func (ConfigLoaded) isEvent()             {}

// Action is an imperative the shell executes, in order.
type Action interface{ isAction() }

// Connect asks the shell to open the named connections of the instance's link
// (keyed by Instance.Link) to Instance.Addr.
type Connect struct {
	Instance Ref
	Cmd      bool
	PubSub   bool
}

// Disconnect asks the shell to close the named connections (and abandon dials
// in progress). Replies still in flight on them must be dropped.
type Disconnect struct {
	Instance Ref
	Cmd      bool
	PubSub   bool
}

// SendPing asks for PING on the command connection.
type SendPing struct{ Instance Ref }

// SendInfo asks for a bare INFO on the command connection.
type SendInfo struct{ Instance Ref }

// PublishHello asks for `PUBLISH __sentinel__:hello <Payload>` on the command
// connection (to masters, replicas and sentinels alike).
type PublishHello struct {
	Instance Ref
	Payload  string
}

// AskMasterDown asks for `SENTINEL is-master-down-by-addr <MasterIP>
// <MasterPort> <Epoch> <RunID>` on the sentinel's command connection.
type AskMasterDown struct {
	Sentinel   Ref
	MasterIP   string
	MasterPort int
	Epoch      uint64
	RunID      string
}

// SendReplicaOf asks for the reconfiguration transaction (sentinelSendSlaveOf):
// MULTI, SLAVEOF Host Port (SLAVEOF NO ONE when Host is ""), CONFIG REWRITE,
// CLIENT KILL TYPE normal, CLIENT KILL TYPE pubsub, EXEC, each command name
// mapped through Core.MapCommand; answered by one CommandReplied.
type SendReplicaOf struct {
	Instance Ref
	Host     string
	Port     int
}

// SendFailover asks the master of a coordinated failover for `FAILOVER TO
// Host Port TIMEOUT TimeoutMs` (or `FAILOVER ABORT` when Abort is set), the
// command name mapped through Core.MapCommand; answered by one
// FailoverReplied.
type SendFailover struct {
	Instance  Ref
	Host      string
	Port      int
	TimeoutMs int64
	Abort     bool
}

// SendAckSeen (Vigil, sync-ack mode) confirms to a vigil-server master
// that this sentinel recorded, as ack members, every replica listed in its
// INFO numbered Seq (sync_ack_info_seq), and persisted them: `REPLCONF
// sentinel-seen <Seq> sentinel-id <RunID>`, REPLCONF mapped through
// Core.MapCommand; answered by one CommandReplied. It comes after the
// Step's RewriteConfig: a shell whose rewrite failed must not send it.
type SendAckSeen struct {
	Instance Ref
	Seq      uint64
	RunID    string
}

// SendScriptKill asks for SCRIPT KILL (sent once to a -BUSY SDOWN instance).
type SendScriptKill struct{ Instance Ref }

// RewriteConfig asks the shell to rewrite and fsync sentinel.conf from
// Core.Config() (sentinelFlushConfig). At most one per Step; it always comes
// before the Step's Reply, so a vote is on disk before it is sent.
type RewriteConfig struct{}

// Notify is a sentinelEvent: log it and publish Message on channel Type.
type Notify struct {
	Level   Level
	Type    string
	Message string
}

// Log asks the shell to log Message at Level without publishing it: a
// serverLog line of sentinel.c that is not a sentinelEvent ("Next failover
// delay: ...", "<runid> voted for <runid> <epoch>").
type Log struct {
	Level   Level
	Message string
}

// RunScript asks the shell to queue a user script (notification-script with
// args [type, message], or client-reconfig-script with args [master,
// leader|observer, start, from-ip, from-port, to-ip, to-port]).
type RunScript struct {
	Path string
	Args []string
}

// ReplyKind is the type of a Reply.
type ReplyKind uint8

// Reply kinds.
const (
	ReplyOK      ReplyKind = iota // +OK
	ReplyError                    // -Text
	ReplyInteger                  // :Int
)

// Reply answers a client request event (MonitorRequested, SetRequested, ...,
// ConfigLoaded). If the same Step emitted RewriteConfig and the rewrite
// fails, the shell replies "-ERR Failed to save config file. Check server
// logs." instead of an OK.
type Reply struct {
	Kind ReplyKind
	Text string // error text including its code, e.g. "ERR No such master with that name"
	Int  int64
}

// MasterDownReply answers IsMasterDownAsked: *3 [:Down, $Leader, :LeaderEpoch].
type MasterDownReply struct {
	Down        bool
	Leader      string
	LeaderEpoch uint64
}

// Crash asks the shell to exit with status 99 (SENTINEL SIMULATE-FAILURE).
type Crash struct{ Reason string }

func (Connect) isAction()         {}
func (Disconnect) isAction()      {}
func (SendPing) isAction()        {}
func (SendInfo) isAction()        {}
func (SendAckSeen) isAction()     {}
func (PublishHello) isAction()    {}
func (AskMasterDown) isAction()   {}
func (SendReplicaOf) isAction()   {}
func (SendScriptKill) isAction()  {}
func (SendFailover) isAction()    {}
func (RewriteConfig) isAction()   {}
func (Notify) isAction()          {}
func (Log) isAction()             {}
func (RunScript) isAction()       {}
func (Reply) isAction()           {}
func (MasterDownReply) isAction() {}
func (Crash) isAction()           {}
