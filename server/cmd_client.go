package server

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"sort"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// CLIENT, as networking.c clientCommand of Redis 7.0.15. There is no CLIENT
// SETINFO (Redis 7.2): go-redis v9 sends it on every connection and ignores
// the "unknown subcommand" error 7.0 answers, as it does with Vigil.

func init() {
	ls := FlagNoScript | FlagLoading | FlagStale
	adm := FlagAdmin | ls
	conn := []string{"slow", "connection"}
	admConn := []string{"admin", "slow", "dangerous", "connection"}
	clientUnblockCmd = &Command{Name: "unblock", Arity: -3, Flags: adm, ACL: admConn, Handler: cmdClientUnblock}
	register(&Command{Name: "client", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
		{Name: "caching", Arity: 3, Flags: ls, ACL: conn, Handler: cmdClientCaching},
		{Name: "getname", Arity: 2, Flags: ls, ACL: conn, Handler: cmdClientGetName},
		{Name: "getredir", Arity: 2, Flags: ls, ACL: conn, Handler: cmdClientGetRedir},
		{Name: "help", Arity: 2, Flags: FlagLoading | FlagStale, ACL: conn, Handler: helpHandler("CLIENT", clientHelp)},
		{Name: "id", Arity: 2, Flags: ls, ACL: conn, Handler: cmdClientID},
		{Name: "info", Arity: 2, Flags: ls, ACL: conn, Handler: cmdClientInfo},
		{Name: "kill", Arity: -3, Flags: adm, ACL: admConn, Handler: cmdClientKill},
		{Name: "list", Arity: -2, Flags: adm, ACL: admConn, Handler: cmdClientList},
		{Name: "no-evict", Arity: 3, Flags: adm, ACL: admConn, Handler: cmdClientNoEvict},
		{Name: "pause", Arity: -3, Flags: adm, ACL: admConn, Handler: cmdClientPause},
		{Name: "reply", Arity: 3, Flags: ls, ACL: conn, Handler: cmdClientReply},
		{Name: "setname", Arity: 3, Flags: ls, ACL: conn, Handler: cmdClientSetName},
		{Name: "tracking", Arity: -3, Flags: ls, ACL: conn, Handler: cmdClientTracking},
		{Name: "trackinginfo", Arity: 2, Flags: ls, ACL: conn, Handler: cmdClientTrackingInfo},
		clientUnblockCmd,
		{Name: "unpause", Arity: 2, Flags: adm, ACL: admConn, Handler: cmdClientUnpause},
	}})
}

// clientUnblockCmd is CLIENT UNBLOCK's table entry (its commandstats).
var clientUnblockCmd *Command

// clientHelp is Redis 7.0's CLIENT HELP text.
var clientHelp = redistext.ClientHelp

// parseClientType is getClientTypeByName.
func parseClientType(b []byte) (int, bool) {
	switch {
	case eqFold(b, "normal"):
		return kindNormal, true
	case eqFold(b, "slave"), eqFold(b, "replica"):
		return kindReplica, true
	case eqFold(b, "pubsub"):
		return kindPubSub, true
	case eqFold(b, "master"):
		return kindMaster, true
	}
	return 0, false
}

// clientsByID returns the registered clients ordered by id (Redis's
// server.clients list is in connection order, which ids follow), without
// the killed ones still unlinking (Redis frees them at once).
func (s *Server) clientsByID() []*Client {
	s.clientsMu.Lock()
	out := make([]*Client, 0, len(s.clients))
	for _, cl := range s.clients {
		if !cl.killed.Load() {
			out = append(out, cl)
		}
	}
	s.clientsMu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}

// clientByID looks a client up in the registry.
func (s *Server) clientByID(id int64) *Client {
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	if cl := s.clients[id]; cl != nil && !cl.killed.Load() {
		return cl
	}
	return nil
}

// connFD returns the socket's file descriptor, -1 when it has none.
func connFD(cl *Client) int64 {
	sc, ok := cl.conn.(syscall.Conn)
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

// clientFlags is the flags= field of catClientInfoString.
func clientFlags(b []byte, cl *Client) []byte {
	start := len(b)
	switch {
	case cl.monitor:
		b = append(b, 'O')
	case cl.kind() == kindReplica:
		b = append(b, 'S')
	}
	if cl.kind() == kindMaster {
		b = append(b, 'M')
	}
	if len(cl.subs)+len(cl.psubs)+len(cl.ssubs) > 0 {
		b = append(b, 'P')
	}
	if cl.multi != nil {
		b = append(b, 'x')
	}
	if cl.blockedFlag() {
		b = append(b, 'b')
	}
	if cl.closeAfterReply {
		b = append(b, 'c')
	}
	if cl.killed.Load() {
		b = append(b, 'A')
	}
	if cl.unix {
		b = append(b, 'U')
	}
	if cl.noEvict {
		b = append(b, 'e')
	}
	if len(b) == start {
		b = append(b, 'N')
	}
	return b
}

// multiMem approximates multi-mem: the queued commands' argument bytes.
func multiMem(cl *Client) int64 {
	if cl.multi == nil {
		return 0
	}
	var n int64
	for _, q := range cl.multi.cmds {
		for _, a := range q.args {
			n += int64(len(a))
		}
	}
	return n
}

// appendClientInfo is catClientInfoString (Redis 7.0 field list). self is
// the client running the command, with its current argv and command name:
// its query-time fields (idle, argv-mem, cmd) describe the running command,
// as in Redis. Fields of other clients that only their own goroutine may
// read (query and reply buffers) are reported as 0.
func (s *Server) appendClientInfo(b []byte, cl, self *Client, args [][]byte, cmdName string) []byte {
	nowMs := s.nowMs
	isSelf := cl == self
	if isSelf && cl.multi != nil && cl.multi.executing {
		// Inside EXEC Redis reports the EXEC command itself.
		args, cmdName = [][]byte{[]byte("EXEC")}, "exec"
	}
	b = append(b, "id="...)
	b = strconv.AppendInt(b, cl.id, 10)
	b = append(b, " addr="...)
	b = append(b, cl.addr...)
	b = append(b, " laddr="...)
	b = append(b, cl.laddr...)
	b = append(b, " fd="...)
	b = strconv.AppendInt(b, connFD(cl), 10)
	b = append(b, " name="...)
	b = append(b, cl.name...)
	b = append(b, " age="...)
	b = strconv.AppendInt(b, max(0, nowMs/1000-cl.created.Unix()), 10)
	b = append(b, " idle="...)
	idle := int64(0)
	if !isSelf {
		last := cl.lastInteraction.Load()
		if last == 0 {
			last = cl.created.UnixMilli()
		}
		idle = max(0, (nowMs-last)/1000)
	}
	b = strconv.AppendInt(b, idle, 10)
	b = append(b, " flags="...)
	b = clientFlags(b, cl)
	b = append(b, " db="...)
	b = strconv.AppendInt(b, int64(cl.db), 10)
	b = append(b, " sub="...)
	b = strconv.AppendInt(b, int64(len(cl.subs)), 10)
	b = append(b, " psub="...)
	b = strconv.AppendInt(b, int64(len(cl.psubs)), 10)
	b = append(b, " ssub="...)
	b = strconv.AppendInt(b, int64(len(cl.ssubs)), 10)
	b = append(b, " multi="...)
	if cl.multi != nil {
		b = strconv.AppendInt(b, int64(len(cl.multi.cmds)), 10)
	} else {
		b = append(b, "-1"...)
	}
	var argvMem, rbs, batch int64
	if isSelf {
		for _, a := range args {
			argvMem += int64(len(a))
		}
		rbs = int64(cap(cl.w.B))
		batch = int64(len(cl.w.B))
	}
	mm := multiMem(cl)
	obl, oll, omem := s.obufSplit(cl, int(batch)) // obuf.go
	b = append(b, " qbuf=0 qbuf-free=0 argv-mem="...)
	b = strconv.AppendInt(b, argvMem, 10)
	b = append(b, " multi-mem="...)
	b = strconv.AppendInt(b, mm, 10)
	b = append(b, " rbs="...)
	b = strconv.AppendInt(b, rbs, 10)
	b = append(b, " rbp="...)
	b = strconv.AppendInt(b, rbs, 10)
	b = append(b, " obl="...)
	b = strconv.AppendInt(b, obl, 10)
	b = append(b, " oll="...)
	b = strconv.AppendInt(b, oll, 10)
	b = append(b, " omem="...)
	b = strconv.AppendInt(b, omem, 10)
	b = append(b, " tot-mem="...)
	// The batch's replies are in rbs already: the rest of the output on top.
	b = strconv.AppendInt(b, int64(unsafe.Sizeof(Client{}))+argvMem+mm+rbs+obl+omem-batch, 10)
	b = append(b, " events="...)
	if omem > 0 || obl > 0 {
		b = append(b, "rw"...)
	} else {
		b = append(b, 'r')
	}
	b = append(b, " cmd="...)
	switch {
	case isSelf && cmdName != "":
		b = append(b, cmdName...)
	case cl.postponed != nil: // Redis set lastcmd before postponing it
		b = append(b, cl.postponed.FullName()...)
	case cl.lastCmd != "":
		b = append(b, cl.lastCmd...)
	default:
		b = append(b, "NULL"...)
	}
	b = append(b, " user="...)
	b = append(b, cl.user...)
	b = append(b, " redir=-1 resp="...)
	b = strconv.AppendInt(b, int64(cl.w.Proto), 10)
	return b
}

func cmdClientID(c *Client, args [][]byte) { c.w.Int(c.id) }

func cmdClientInfo(c *Client, args [][]byte) {
	b := c.srv.appendClientInfo(nil, c, c, args, "client|info")
	b = append(b, '\n')
	c.w.Verbatim("txt", string(b))
}

func cmdClientList(c *Client, args [][]byte) {
	s := c.srv
	var b []byte
	switch {
	case len(args) == 4 && eqFold(args[2], "type"):
		kind, ok := parseClientType(args[3])
		if !ok {
			c.w.Error(errUnknownClientType(args[3]))
			return
		}
		for _, cl := range s.clientsByID() {
			if cl.kind() != kind {
				continue
			}
			b = s.appendClientInfo(b, cl, c, args, "client|list")
			b = append(b, '\n')
		}
	case len(args) > 3 && eqFold(args[2], "id"):
		ids := make([]int64, 0, len(args)-3)
		for _, a := range args[3:] {
			id, ok := parseInt(a)
			if !ok {
				c.w.Error(ErrInvalidClientID)
				return
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			if cl := s.clientByID(id); cl != nil {
				b = s.appendClientInfo(b, cl, c, args, "client|list")
				b = append(b, '\n')
			}
		}
	case len(args) != 2:
		c.w.Error(ErrSyntax)
		return
	default:
		for _, cl := range s.clientsByID() {
			b = s.appendClientInfo(b, cl, c, args, "client|list")
			b = append(b, '\n')
		}
	}
	c.w.Verbatim("txt", string(b))
}

func cmdClientSetName(c *Client, args [][]byte) {
	if !validClientName(args[2]) {
		c.w.Error(ErrClientNameSpace)
		return
	}
	c.name = string(args[2])
	c.w.OK()
}

func cmdClientGetName(c *Client, args [][]byte) {
	if c.name == "" {
		c.w.Null()
		return
	}
	c.w.BulkString(c.name)
}

// killFilter is the parsed CLIENT KILL arguments.
type killFilter struct {
	addr, laddr, user []byte
	hasAddr, hasLaddr bool
	hasUser           bool
	kind              int // -1: any
	id                int64
	skipMe            bool
}

func (f *killFilter) match(cl, self *Client) bool {
	switch {
	case f.hasAddr && cl.addr != string(f.addr),
		f.hasLaddr && cl.laddr != string(f.laddr),
		f.kind >= 0 && cl.kind() != f.kind,
		f.id != 0 && cl.id != f.id,
		f.hasUser && cl.user != string(f.user),
		cl == self && f.skipMe:
		return false
	}
	return true
}

// cmdClientKill is CLIENT KILL in both forms. Other clients are closed at
// once (their loops stop before running anything more); the caller, when it
// matches with SKIPME no or the old form, gets its reply and is then closed.
func cmdClientKill(c *Client, args [][]byte) {
	s := c.srv
	f := killFilter{kind: -1, skipMe: true}
	oldForm := len(args) == 3
	if oldForm {
		f.addr, f.hasAddr, f.skipMe = args[2], true, false
	} else {
		for i := 2; i < len(args); i += 2 {
			if i+1 >= len(args) {
				c.w.Error(ErrSyntax)
				return
			}
			opt, val := args[i], args[i+1]
			switch {
			case eqFold(opt, "id"):
				id, ok := parseInt(val)
				if !ok || id < 1 {
					c.w.Error(ErrClientIDPositive)
					return
				}
				f.id = id
			case eqFold(opt, "type"):
				k, ok := parseClientType(val)
				if !ok {
					c.w.Error(errUnknownClientType(val))
					return
				}
				f.kind = k
			case eqFold(opt, "addr"):
				f.addr, f.hasAddr = val, true
			case eqFold(opt, "laddr"):
				f.laddr, f.hasLaddr = val, true
			case eqFold(opt, "user"):
				if !s.userExists(string(val)) {
					c.w.Error(errNoSuchUser(val))
					return
				}
				f.user, f.hasUser = val, true
			case eqFold(opt, "skipme"):
				switch {
				case eqFold(val, "yes"):
					f.skipMe = true
				case eqFold(val, "no"):
					f.skipMe = false
				default:
					c.w.Error(ErrSyntax)
					return
				}
			default:
				c.w.Error(ErrSyntax)
				return
			}
		}
	}
	killed := int64(0)
	for _, cl := range s.clientsByID() {
		if !f.match(cl, c) {
			continue
		}
		if cl == c {
			c.closeAfterReply = true
		} else {
			s.log.Debug().Int64("id", cl.id).Str("addr", cl.addr).Msg("Client killed by CLIENT KILL")
			cl.kill()
			// Redis frees the client at once: its subscriptions and
			// MONITOR stop now, not when its connection loop unlinks it
			// (a PUBLISH right after must not count it).
			s.pubsub.unsubscribeAll(cl)
			s.unwatchAll(cl, true)
			delete(s.monitors, cl)
			s.unblockGone(cl) // a blocked client is woken to close
		}
		killed++
	}
	if oldForm {
		if killed == 0 {
			c.w.Error(ErrNoSuchClient)
		} else {
			c.w.OK()
		}
		return
	}
	c.w.Int(killed)
}

// cmdClientPause is CLIENT PAUSE timeout [WRITE|ALL]: later commands (all,
// or those that may write) from every client wait, outside the execution
// lock, until the deadline or CLIENT UNPAUSE (commands.go call ->
// pauseState.wait).
func cmdClientPause(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.w.Error(errSubcommandSyntax(args[1], "CLIENT"))
		return
	}
	all := true
	if len(args) == 4 {
		switch {
		case eqFold(args[3], "write"):
			all = false
		case eqFold(args[3], "all"):
		default:
			c.w.Error(ErrPauseMode)
			return
		}
	}
	ms, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrTimeout)
		return
	}
	if ms < 0 {
		c.w.Error(ErrTimeoutNegative)
		return
	}
	until := time.Time{}
	if ms > 0 {
		until = c.srv.now.Add(time.Duration(ms) * time.Millisecond)
	}
	c.srv.pause.start(until, all)
	c.w.OK()
}

func cmdClientUnpause(c *Client, args [][]byte) {
	c.srv.pause.end()
	c.w.OK()
}

// cmdClientReply is CLIENT REPLY ON|OFF|SKIP (clientCommand): ON clears
// OFF and SKIP (not a pending SKIP_NEXT) and answers; OFF and SKIP get no
// reply; SKIP while OFF changes nothing. process applies the flags
// (client.go).
func cmdClientReply(c *Client, args [][]byte) {
	switch {
	case eqFold(args[2], "on"):
		c.setReplyFlags(c.replyFlags &^ (replyOff | replySkip))
		c.w.OK()
	case eqFold(args[2], "off"):
		c.setReplyFlags(c.replyFlags | replyOff)
	case eqFold(args[2], "skip"):
		if c.replyFlags&replyOff == 0 {
			c.setReplyFlags(c.replyFlags | replySkipNext)
		}
	default:
		c.w.Error(ErrSyntax)
	}
}

func cmdClientNoEvict(c *Client, args [][]byte) {
	switch {
	case eqFold(args[2], "on"):
		c.noEvict = true
	case eqFold(args[2], "off"):
		c.noEvict = false
	default:
		c.w.Error(ErrSyntax)
		return
	}
	c.w.OK()
}

// cmdClientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked
// by a blocking command (blocking.go) gets its timed-out reply, or the
// UNBLOCKED error, and goes on; 1 if it was blocked, else 0.
func cmdClientUnblock(c *Client, args [][]byte) {
	if len(args) > 4 {
		c.w.Error(errSubcommandSyntax(args[1], "CLIENT"))
		return
	}
	withError := false
	if len(args) == 4 {
		switch {
		case eqFold(args[3], "timeout"):
		case eqFold(args[3], "error"):
			withError = true
		default:
			c.w.Error(ErrUnblockReason)
			return
		}
	}
	id, ok := parseInt(args[2])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	s := c.srv
	if target := s.clientByID(id); target != nil && s.unblockByCommand(target, withError) {
		if withError {
			// 7.0.15's call() charges any error reply made during a
			// command to it: the one sent to the target too.
			s.cmdStats(clientUnblockCmd).failed++
		}
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}

// cmdClientTracking accepts OFF (tracking is never on) and refuses ON:
// client-side caching is not implemented.
func cmdClientTracking(c *Client, args [][]byte) {
	switch {
	case eqFold(args[2], "on"):
		c.w.Error(ErrTrackingUnsupported)
	case eqFold(args[2], "off"):
		c.w.OK()
	default:
		c.w.Error(ErrSyntax)
	}
}

func cmdClientCaching(c *Client, args [][]byte) { c.w.Error(ErrCachingNoTracking) }

func cmdClientGetRedir(c *Client, args [][]byte) { c.w.Int(-1) }

// cmdClientTrackingInfo is the reply of a client with tracking off.
func cmdClientTrackingInfo(c *Client, args [][]byte) {
	c.w.MapLen(3)
	c.w.BulkString("flags")
	c.w.SetLen(1)
	c.w.BulkString("off")
	c.w.BulkString("redirect")
	c.w.Int(-1)
	c.w.BulkString("prefixes")
	c.w.ArrayLen(0)
}
