package netshell

import (
	"net"
	"strconv"
	"syscall"

	"github.com/vigil-kv/vigil/internal/redistext"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// AUTH and CLIENT as networking.c's clientCommand and authCommand of Redis
// 7.0.15, for both binaries (redis-sentinel runs the same code). What
// differs per binary (what a client line shows, what a kill or a pause
// does) stays there; the argument parsing, the errors and the replies are
// here, written once.

// Session is the per-binary client state the shared handlers read and
// change: its reply writer, id, name and CLIENT REPLY flags.
type Session interface {
	Writer() *resp.Writer
	ClientID() int64
	ClientName() string
	SetClientName(name string)
	SetProto(proto int) // HELLO's protover: the writer's protocol
	ReplyFlags() ReplyFlags
	// SetReplyFlags changes the flags in the middle of a command (CLIENT
	// REPLY, RESET): the reply written under the old flags is settled
	// first (dropped when they suppressed it).
	SetReplyFlags(f ReplyFlags)
}

// ReplyFlags are CLIENT REPLY's flags. Replies written while Off or Skip
// is set are dropped; after each top-level command Skip clears and
// SkipNext becomes Skip (resetClient), so a command refused before it runs
// counts as the skipped one.
type ReplyFlags uint8

const (
	ReplyOff      ReplyFlags = 1 << iota // CLIENT_REPLY_OFF: no replies
	ReplySkip                            // CLIENT_REPLY_SKIP: no reply for the command being run
	ReplySkipNext                        // CLIENT_REPLY_SKIP_NEXT: SKIP was issued, skip the next command
)

// Suppressing reports whether replies are dropped now.
func (f ReplyFlags) Suppressing() bool { return f&(ReplyOff|ReplySkip) != 0 }

// Next is the flags after a top-level command (resetClient).
func (f ReplyFlags) Next() ReplyFlags {
	f &^= ReplySkip
	if f&ReplySkipNext != 0 {
		f = f&^ReplySkipNext | ReplySkip
	}
	return f
}

// ClientType is getClientTypeByName's class of a client, numbered as the
// server's client kinds.
type ClientType int

const (
	ClientNormal ClientType = iota
	ClientReplica
	ClientMaster
	ClientPubSub
)

// ParseClientType is getClientTypeByName ("slave" and "replica" are one).
func ParseClientType(b []byte) (ClientType, bool) {
	switch {
	case keyword(b, "normal"):
		return ClientNormal, true
	case keyword(b, "slave"), keyword(b, "replica"):
		return ClientReplica, true
	case keyword(b, "pubsub"):
		return ClientPubSub, true
	case keyword(b, "master"):
		return ClientMaster, true
	}
	return 0, false
}

func errUnknownClientType(t []byte) string { return "ERR Unknown client type '" + string(t) + "'" }

// ErrSubcommandSyntax is addReplySubcommandSyntaxError.
func ErrSubcommandSyntax(sub []byte, cmd string) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + redistext.Trunc(string(sub), 128) + "'. Try " + cmd + " HELP."
}

// Auth is authCommand: AUTH [username] password. authenticate is
// ACLAuthenticateUser (it logs a failure); noPassFlag tells whether the
// default user has nopass, which makes the one-argument form an error. It
// reports whether the arguments held credentials (the server then redacts
// them from SLOWLOG and MONITOR).
func Auth(w *resp.Writer, argv [][]byte, noPassFlag bool, authenticate func(user, pass string) bool) (credentials bool) {
	if len(argv) > 3 {
		w.Error(redistext.ErrSyntax)
		return false
	}
	user, pass := "default", string(argv[1])
	if len(argv) == 3 {
		user, pass = string(argv[1]), string(argv[2])
	} else if noPassFlag {
		w.Error(redistext.ErrAuthNotSet)
		return true
	}
	if !authenticate(user, pass) {
		w.Error(redistext.ErrWrongPass)
		return true
	}
	w.OK()
	return true
}

// clientRows are CLIENT's subcommands (Redis 7.0's commands.def); a
// binary serves those it has handlers for.
func clientRows[H any]() []Command[H] {
	conn := []string{"slow", "connection"}
	admConn := []string{"admin", "slow", "dangerous", "connection"}
	return []Command[H]{
		{Name: "caching", Arity: 3, Flags: lsFlags, ACL: conn},
		{Name: "getname", Arity: 2, Flags: lsFlags, ACL: conn},
		{Name: "getredir", Arity: 2, Flags: lsFlags, ACL: conn},
		{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: conn},
		{Name: "id", Arity: 2, Flags: lsFlags, ACL: conn},
		{Name: "info", Arity: 2, Flags: lsFlags, ACL: conn},
		{Name: "kill", Arity: -3, Flags: admFlags, ACL: admConn},
		{Name: "list", Arity: -2, Flags: admFlags, ACL: admConn},
		{Name: "no-evict", Arity: 3, Flags: admFlags, ACL: admConn},
		{Name: "pause", Arity: -3, Flags: admFlags, ACL: admConn},
		{Name: "reply", Arity: 3, Flags: lsFlags, ACL: conn},
		{Name: "setname", Arity: 3, Flags: lsFlags, ACL: conn},
		{Name: "tracking", Arity: -3, Flags: lsFlags, ACL: conn},
		{Name: "trackinginfo", Arity: 2, Flags: lsFlags, ACL: conn},
		{Name: "unblock", Arity: -3, Flags: admFlags, ACL: admConn},
		{Name: "unpause", Arity: 2, Flags: admFlags, ACL: admConn},
	}
}

// ClientSubcommands is CLIENT's subcommand table for a binary whose
// handlers take a C: GETNAME, SETNAME, ID, HELP and REPLY are the shared
// handlers below, the others the binary's (handlers; an entry there
// overrides a shared one; CACHING, GETREDIR, TRACKING and TRACKINGINFO
// are built on tracking.go's parser and replies). Rows without a handler are not served.
func ClientSubcommands[C Session, H ~func(C, [][]byte)](handlers map[string]H) []*Command[H] {
	shared := map[string]func(Session, [][]byte){
		"getname": ClientGetName,
		"help":    func(c Session, _ [][]byte) { redistext.Help(c.Writer(), "CLIENT", redistext.ClientHelp) },
		"id":      func(c Session, _ [][]byte) { c.Writer().Int(c.ClientID()) },
		"reply":   ClientReply,
		"setname": ClientSetName,
	}
	all := map[string]H{}
	var rows []Command[H]
	for _, r := range clientRows[H]() {
		if h, ok := handlers[r.Name]; ok {
			all[r.Name] = h
		} else if f := shared[r.Name]; f != nil {
			all[r.Name] = H(func(c C, argv [][]byte) { f(c, argv) })
		} else {
			continue
		}
		rows = append(rows, r)
	}
	return Subcommands(rows, all)
}

// ClientGetName is CLIENT GETNAME.
func ClientGetName(c Session, _ [][]byte) {
	if n := c.ClientName(); n != "" {
		c.Writer().BulkString(n)
		return
	}
	c.Writer().Null()
}

// ClientSetName is CLIENT SETNAME.
func ClientSetName(c Session, argv [][]byte) {
	if !redistext.ValidClientName(argv[2]) {
		c.Writer().Error(redistext.ErrClientName)
		return
	}
	c.SetClientName(string(argv[2]))
	c.Writer().OK()
}

// ClientReply is CLIENT REPLY ON|OFF|SKIP: ON clears OFF and SKIP (not a
// pending SKIP_NEXT) and answers; OFF and SKIP get no reply; SKIP while
// OFF changes nothing.
func ClientReply(c Session, argv [][]byte) {
	f := c.ReplyFlags()
	switch arg := argv[2]; {
	case keyword(arg, "on"):
		c.SetReplyFlags(f &^ (ReplyOff | ReplySkip))
		c.Writer().OK()
	case keyword(arg, "off"):
		c.SetReplyFlags(f | ReplyOff)
	case keyword(arg, "skip"):
		if f&ReplyOff == 0 {
			c.SetReplyFlags(f | ReplySkipNext)
		}
	default:
		c.Writer().Error(redistext.ErrSyntax)
	}
}

// ParseOnOff is the ON|OFF argument of CLIENT NO-EVICT (a syntax error
// otherwise, replied when ok is false).
func ParseOnOff(w *resp.Writer, arg []byte) (on, ok bool) {
	switch {
	case keyword(arg, "on"):
		return true, true
	case keyword(arg, "off"):
		return false, true
	}
	w.Error(redistext.ErrSyntax)
	return false, false
}

// ParsePause is CLIENT PAUSE timeout [WRITE|ALL]'s arguments: the timeout
// in milliseconds and whether all commands (not only writes) wait. On a
// bad argument the error is replied and ok is false.
func ParsePause(w *resp.Writer, argv [][]byte) (ms int64, all, ok bool) {
	if len(argv) > 4 {
		w.Error(ErrSubcommandSyntax(argv[1], "CLIENT"))
		return 0, false, false
	}
	all = true
	if len(argv) == 4 {
		switch {
		case keyword(argv[3], "write"):
			all = false
		case keyword(argv[3], "all"):
		default:
			w.Error("ERR CLIENT PAUSE mode must be WRITE or ALL")
			return 0, false, false
		}
	}
	ms, isInt := redisutil.String2ll(argv[2])
	if !isInt {
		w.Error("ERR timeout is not an integer or out of range")
		return 0, false, false
	}
	if ms < 0 {
		w.Error("ERR timeout is negative")
		return 0, false, false
	}
	return ms, all, true
}

// ParseUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]'s arguments. On a bad
// argument the error is replied and ok is false.
func ParseUnblock(w *resp.Writer, argv [][]byte) (id int64, withError, ok bool) {
	if len(argv) > 4 {
		w.Error(ErrSubcommandSyntax(argv[1], "CLIENT"))
		return 0, false, false
	}
	if len(argv) == 4 {
		switch {
		case keyword(argv[3], "timeout"):
		case keyword(argv[3], "error"):
			withError = true
		default:
			w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return 0, false, false
		}
	}
	id, isInt := redisutil.String2ll(argv[2])
	if !isInt {
		w.Error(redistext.ErrNotInteger)
		return 0, false, false
	}
	return id, withError, true
}

// ClientView is what CLIENT LIST and CLIENT KILL filter a client on.
type ClientView struct {
	ID          int64
	Addr, LAddr string
	User        string
	Type        ClientType
}

// ListFilter is CLIENT LIST's [TYPE type | ID id [id ...]].
type ListFilter struct {
	Type    ClientType
	HasType bool
	IDs     []int64 // non-nil: these clients, in this order
}

// ParseList parses CLIENT LIST's arguments. On a bad argument the error
// is replied and ok is false.
func ParseList(w *resp.Writer, argv [][]byte) (f ListFilter, ok bool) {
	switch {
	case len(argv) == 4 && keyword(argv[2], "type"):
		t, known := ParseClientType(argv[3])
		if !known {
			w.Error(errUnknownClientType(argv[3]))
			return f, false
		}
		f.Type, f.HasType = t, true
	case len(argv) > 3 && keyword(argv[2], "id"):
		f.IDs = make([]int64, 0, len(argv)-3)
		for _, a := range argv[3:] {
			id, isInt := redisutil.String2ll(a)
			if !isInt {
				w.Error("ERR Invalid client ID")
				return f, false
			}
			f.IDs = append(f.IDs, id)
		}
	case len(argv) != 2:
		w.Error(redistext.ErrSyntax)
		return f, false
	}
	return f, true
}

// KillFilter is CLIENT KILL's filters: the old form (addr only, the caller
// included) or the new one's ID, TYPE, ADDR, LADDR, USER and SKIPME.
type KillFilter struct {
	OldForm           bool
	addr, laddr, user string
	hasAddr, hasLaddr bool
	hasUser           bool
	hasType           bool
	typ               ClientType
	id                int64
	skipMe            bool
}

// ParseKill parses CLIENT KILL's arguments; userExists tells whether a
// USER filter names a user. On a bad argument the error is replied and ok
// is false.
func ParseKill(w *resp.Writer, argv [][]byte, userExists func(string) bool) (f KillFilter, ok bool) {
	f.skipMe = true
	if len(argv) == 3 {
		f.OldForm = true
		f.addr, f.hasAddr, f.skipMe = string(argv[2]), true, false
		return f, true
	}
	for i := 2; i < len(argv); i += 2 {
		if i+1 >= len(argv) {
			w.Error(redistext.ErrSyntax)
			return f, false
		}
		opt, val := argv[i], argv[i+1]
		switch {
		case keyword(opt, "id"):
			id, isInt := redisutil.String2ll(val)
			if !isInt || id < 1 {
				w.Error("ERR client-id should be greater than 0")
				return f, false
			}
			f.id = id
		case keyword(opt, "type"):
			t, known := ParseClientType(val)
			if !known {
				w.Error(errUnknownClientType(val))
				return f, false
			}
			f.typ, f.hasType = t, true
		case keyword(opt, "addr"):
			f.addr, f.hasAddr = string(val), true
		case keyword(opt, "laddr"):
			f.laddr, f.hasLaddr = string(val), true
		case keyword(opt, "user"):
			if !userExists(string(val)) {
				w.Error("ERR No such user '" + string(val) + "'")
				return f, false
			}
			f.user, f.hasUser = string(val), true
		case keyword(opt, "skipme"):
			switch {
			case keyword(val, "yes"):
				f.skipMe = true
			case keyword(val, "no"):
				f.skipMe = false
			default:
				w.Error(redistext.ErrSyntax)
				return f, false
			}
		default:
			w.Error(redistext.ErrSyntax)
			return f, false
		}
	}
	return f, true
}

// Match reports whether the filter kills a client (self: the one running
// CLIENT KILL).
func (f *KillFilter) Match(v ClientView, self bool) bool {
	switch {
	case f.hasAddr && v.Addr != f.addr,
		f.hasLaddr && v.LAddr != f.laddr,
		f.hasType && v.Type != f.typ,
		f.id != 0 && v.ID != f.id,
		f.hasUser && v.User != f.user,
		self && f.skipMe:
		return false
	}
	return true
}

// Reply is CLIENT KILL's reply for killed clients: the old form's OK or
// "No such client", the new one's count.
func (f *KillFilter) Reply(w *resp.Writer, killed int) {
	switch {
	case !f.OldForm:
		w.Int(int64(killed))
	case killed == 0:
		w.Error(redistext.ErrNoSuchClient)
	default:
		w.OK()
	}
}

// ClientLine is one line of CLIENT LIST and CLIENT INFO
// (catClientInfoString's fields in Redis 7.0's order); each binary fills
// in what it knows of a client.
type ClientLine struct {
	ID                int64
	Addr, LAddr       string
	FD                int64
	Name              string
	Age, Idle         int64
	Flags             []byte // "N" when none
	DB                int64
	Sub, PSub, SSub   int64
	Multi             int64 // -1 outside MULTI
	Qbuf, QbufFree    int64
	ArgvMem, MultiMem int64
	Rbs, Rbp          int64
	Obl, Oll, Omem    int64
	TotMem            int64
	Events            string // "r" or "rw"
	Cmd, User         string // Cmd: "NULL" before the first command
	Resp              int64
	// Tracking: the client tracks keys (CLIENT TRACKING ON); Redir is then
	// its redirection (0: none). Without tracking redir= is -1.
	Tracking bool
	Redir    int64
}

// Append appends the line (without its newline) to b.
func (l *ClientLine) Append(b []byte) []byte {
	num := func(b []byte, key string, n int64) []byte {
		b = append(b, key...)
		return strconv.AppendInt(b, n, 10)
	}
	b = num(b, "id=", l.ID)
	b = append(append(append(append(b, " addr="...), l.Addr...), " laddr="...), l.LAddr...)
	b = num(b, " fd=", l.FD)
	b = append(append(b, " name="...), l.Name...)
	b = num(b, " age=", l.Age)
	b = num(b, " idle=", l.Idle)
	b = append(append(b, " flags="...), l.Flags...)
	b = num(b, " db=", l.DB)
	b = num(b, " sub=", l.Sub)
	b = num(b, " psub=", l.PSub)
	b = num(b, " ssub=", l.SSub)
	b = num(b, " multi=", l.Multi)
	b = num(b, " qbuf=", l.Qbuf)
	b = num(b, " qbuf-free=", l.QbufFree)
	b = num(b, " argv-mem=", l.ArgvMem)
	b = num(b, " multi-mem=", l.MultiMem)
	b = num(b, " rbs=", l.Rbs)
	b = num(b, " rbp=", l.Rbp)
	b = num(b, " obl=", l.Obl)
	b = num(b, " oll=", l.Oll)
	b = num(b, " omem=", l.Omem)
	b = num(b, " tot-mem=", l.TotMem)
	b = append(append(b, " events="...), l.Events...)
	b = append(append(b, " cmd="...), l.Cmd...)
	b = append(append(b, " user="...), l.User...)
	redir := int64(-1)
	if l.Tracking {
		redir = l.Redir
	}
	b = num(b, " redir=", redir)
	return num(b, " resp=", l.Resp)
}

// ConnFD is a connection's file descriptor (CLIENT LIST's fd), -1 when it
// has none.
func ConnFD(conn net.Conn) int64 {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return -1
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1
	}
	fd := int64(-1)
	_ = rc.Control(func(f uintptr) { fd = int64(f) })
	return fd
}
