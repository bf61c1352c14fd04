package server

import (
	"github.com/vigil-kv/vigil/internal/netshell"

	"sort"
	"time"
)

// CLIENT, as networking.c clientCommand of Redis 7.0.15. There is no CLIENT
// SETINFO (Redis 7.2): go-redis v9 sends it on every connection and ignores
// the "unknown subcommand" error 7.0 answers, as it does with Vigil.

func init() {
	register(&Command{Name: "client", Arity: -2, ACL: []string{"slow"}, Subs: netshell.ClientSubcommands(map[string]Handler{
		"caching":      cmdClientCaching, // tracking.go
		"getredir":     cmdClientGetRedir,
		"tracking":     cmdClientTracking,
		"trackinginfo": cmdClientTrackingInfo,
		"info":         cmdClientInfo,
		"kill":         cmdClientKill,
		"list":         cmdClientList,
		"no-evict":     cmdClientNoEvict,
		"pause":        cmdClientPause,
		"unblock":      cmdClientUnblock,
		"unpause":      cmdClientUnpause,
	})})
}

// clientUnblockCmd is CLIENT UNBLOCK's table entry (its commandstats).
func clientUnblockCmd() *Command { return indexedTable.Get("client").SubNamed("unblock") }

// clientView is what CLIENT LIST and KILL filter cl on.
func clientView(cl *Client) netshell.ClientView {
	return netshell.ClientView{ID: cl.id, Addr: cl.addr, LAddr: cl.laddr, User: cl.user, Type: netshell.ClientType(cl.kind())}
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
	b = cl.srv.trackingFlags(b, cl)
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

// multiMem is multi-mem: mstate.argv_len_sums.
func multiMem(cl *Client) int64 {
	if cl.multi == nil {
		return 0
	}
	return cl.multi.mem
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
	var flags [12]byte
	l := netshell.ClientLine{
		ID: cl.id, Addr: cl.addr, LAddr: cl.laddr, FD: netshell.ConnFD(cl.conn), Name: cl.name,
		Age:   max(0, nowMs/1000-cl.created.Unix()),
		Flags: clientFlags(flags[:0], cl), DB: int64(cl.db),
		Sub: int64(len(cl.subs)), PSub: int64(len(cl.psubs)), SSub: int64(len(cl.ssubs)), Multi: -1,
		Events: "r", Cmd: "NULL", User: cl.user, Resp: int64(cl.w.Proto),
	}
	if tc := s.tracking.byClient[cl]; tc != nil { // tracking.go
		l.Tracking, l.Redir = true, tc.Redir
	}
	if !isSelf {
		last := cl.lastInteraction.Load()
		if last == 0 {
			last = cl.created.UnixMilli()
		}
		l.Idle = max(0, nowMs/1000-last/1000) // whole seconds, as Redis's lastinteraction
	}
	if cl.multi != nil {
		l.Multi = int64(len(cl.multi.cmds))
	}
	var batch int64
	argv := int64(-1) // another client: its partial command's (clientevict.go)
	if isSelf {
		for _, a := range args {
			l.ArgvMem += int64(len(a))
		}
		argv = argvMem(args)
		l.Rbs = int64(cap(cl.w.B))
		batch = int64(len(cl.w.B))
	}
	l.Rbp = l.Rbs
	if m := &cl.bm; m.on { // Redis's buffers, modeled (bufmodel.go)
		l.Qbuf, l.QbufFree = m.qbLen, max(m.qbAlloc-m.qbLen, 0)
		l.Rbs, l.Rbp = m.rbs, m.rbPeak
		if !isSelf {
			l.ArgvMem = m.pendArgvLen
		}
	}
	l.MultiMem = multiMem(cl)
	l.Obl, l.Oll, l.Omem = s.obufSplit(cl, int(batch)) // obuf.go
	l.TotMem, _ = s.clientMemUsage(cl, batch, argv)    // clientevict.go
	if l.Omem > 0 || l.Obl > 0 {
		l.Events = "rw"
	}
	switch {
	case isSelf && cmdName != "":
		l.Cmd = cmdName
	case cl.postponed != nil: // Redis set lastcmd before postponing it
		l.Cmd = cl.postponed.FullName()
	case cl.lastCmd != "":
		l.Cmd = cl.lastCmd
	}
	return l.Append(b)
}

func cmdClientInfo(c *Client, args [][]byte) {
	b := c.srv.appendClientInfo(nil, c, c, args, "client|info")
	b = append(b, '\n')
	c.w.Verbatim("txt", string(b))
}

func cmdClientList(c *Client, args [][]byte) {
	s := c.srv
	f, ok := netshell.ParseList(&c.w, args)
	if !ok {
		return
	}
	var b []byte
	if f.IDs != nil {
		for _, id := range f.IDs {
			if cl := s.clientByID(id); cl != nil {
				b = s.appendClientInfo(b, cl, c, args, "client|list")
				b = append(b, '\n')
			}
		}
	} else {
		for _, cl := range s.clientsByID() {
			if f.HasType && netshell.ClientType(cl.kind()) != f.Type {
				continue
			}
			b = s.appendClientInfo(b, cl, c, args, "client|list")
			b = append(b, '\n')
		}
	}
	c.w.Verbatim("txt", string(b))
}

// cmdClientKill is CLIENT KILL in both forms (netshell.ParseKill). Other
// clients are closed at once (their loops stop before running anything
// more); the caller, when it matches with SKIPME no or the old form, gets
// its reply and is then closed.
func cmdClientKill(c *Client, args [][]byte) {
	s := c.srv
	f, ok := netshell.ParseKill(&c.w, args, s.userExists)
	if !ok {
		return
	}
	killed := 0
	for _, cl := range s.clientsByID() {
		if !f.Match(clientView(cl), cl == c) {
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
	f.Reply(&c.w, killed)
}

// cmdClientPause is CLIENT PAUSE timeout [WRITE|ALL]: later commands (all,
// or those that may write) from every client wait, outside the execution
// lock, until the deadline or CLIENT UNPAUSE (commands.go call ->
// pauseState.wait).
func cmdClientPause(c *Client, args [][]byte) {
	ms, all, ok := netshell.ParsePause(&c.w, args)
	if !ok {
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

func cmdClientNoEvict(c *Client, args [][]byte) {
	if on, ok := netshell.ParseOnOff(&c.w, args[2]); ok {
		c.noEvict = on
		s := c.srv
		if on { // clientevict.go
			s.removeClientMemBucket(c, false)
		} else {
			s.updateClientMemBucket(c, int64(len(c.w.B)), argvMem(args))
		}
		c.w.OK()
	}
}

// cmdClientUnblock is CLIENT UNBLOCK id [TIMEOUT|ERROR]: a client blocked
// by a blocking command (blocking.go) gets its timed-out reply, or the
// UNBLOCKED error, and goes on; 1 if it was blocked, else 0.
func cmdClientUnblock(c *Client, args [][]byte) {
	id, withError, ok := netshell.ParseUnblock(&c.w, args)
	if !ok {
		return
	}
	s := c.srv
	if target := s.clientByID(id); target != nil && s.unblockByCommand(target, withError) {
		if withError {
			// 7.0.15's call() charges any error reply made during a
			// command to it: the one sent to the target too.
			s.cmdStats(clientUnblockCmd()).failed++
		}
		c.w.Int(1)
		return
	}
	c.w.Int(0)
}
