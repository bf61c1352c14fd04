package daemon

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"strings"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/sentinel"
)

// Redis 7.0 error texts used by the sentinel's commands.
const (
	errNoAuth         = redistext.ErrNoAuth
	errSyntax         = redistext.ErrSyntax
	errNotInteger     = redistext.ErrNotInteger
	errNoSuchMaster   = "ERR No such master with that name"
	errOnlyHello      = "ERR Only HELLO messages are accepted by Sentinel instances."
	errConfigUsage    = "ERR Only SENTINEL CONFIG GET <option> / SET <option> <value> are supported."
	errUnknownSimFail = "ERR Unknown failure simulation specified"
)

// errUnknownCommand is the shared format (redistext).
var errUnknownCommand = redistext.UnknownCommand[[]byte]

// handler runs one command for c with its arguments as read (argv, valid
// until the next read) and writes its reply into c.w.
type handler func(c *client, argv [][]byte)

// command is one entry of the sentinel's command table (sentinelcmds): the
// table type both binaries share (netshell.Command).
type command = netshell.Command[handler]

// table is sentinel mode's command table. Its flags and categories are
// Redis's; COMMAND answers from the recorded replies (command_cmd.go).
var table *netshell.Table[handler]

func init() {
	ls := netshell.FlagNoScript | netshell.FlagLoading | netshell.FlagStale
	adm := netshell.FlagAdmin | ls
	noAuth := ls | netshell.FlagFast | netshell.FlagNoAuth | netshell.FlagAllowBusy
	pubsub := netshell.FlagPubSub | ls
	conn := []string{"slow", "connection"}
	admACL := []string{"admin", "slow", "dangerous"}
	table = netshell.NewTable([]*command{
		{Name: "acl", Arity: -2, ACL: []string{"slow"}, Subs: aclSubcommands()},
		{Name: "auth", Arity: -2, Flags: noAuth, ACL: []string{"fast", "connection"}, Handler: cmdAuth},
		{Name: "client", Arity: -2, ACL: []string{"slow"}, Subs: netshell.ClientSubcommands(map[string]handler{
			"info": func(c *client, _ [][]byte) {
				c.w.Verbatim("txt", c.d.clientInfo(c, c, "client|info")+"\n")
			},
			"list":     cmdClientList,
			"kill":     cmdClientKill,
			"no-evict": func(c *client, argv [][]byte) { _, ok := netshell.ParseOnOff(&c.w, argv[2]); okIf(c, ok) },
			"pause":    func(c *client, argv [][]byte) { _, _, ok := netshell.ParsePause(&c.w, argv); okIf(c, ok) },
			"unpause":  func(c *client, _ [][]byte) { c.w.OK() },
			"unblock":  cmdClientUnblock,
			// tracking.go
			"caching":      cmdClientCaching,
			"getredir":     func(c *client, _ [][]byte) { netshell.GetRedir(&c.w, c.tracking()) },
			"tracking":     cmdClientTracking,
			"trackinginfo": func(c *client, _ [][]byte) { netshell.TrackingInfo(&c.w, c.tracking()) },
		})},
		{Name: "command", Arity: -1, Flags: netshell.FlagLoading | netshell.FlagStale, ACL: conn, Handler: cmdCommand, Subs: commandSubcommands()},
		{Name: "hello", Arity: -1, Flags: noAuth, ACL: []string{"fast", "connection"}, Handler: cmdHello},
		{Name: "info", Arity: -1, Flags: netshell.FlagLoading | netshell.FlagStale, ACL: []string{"slow", "dangerous"}, Handler: cmdInfo},
		{Name: "ping", Arity: -1, Flags: netshell.FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdPing},
		{Name: "psubscribe", Arity: -2, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: subscribe(true)},
		{Name: "publish", Arity: 3, Flags: netshell.FlagPubSub | netshell.FlagLoading | netshell.FlagStale | netshell.FlagFast, ACL: []string{"pubsub", "fast"}, Handler: cmdPublish},
		{Name: "punsubscribe", Arity: -1, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: unsubscribe(true)},
		{Name: "role", Arity: 1, Flags: ls | netshell.FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Handler: cmdRole},
		{Name: "sentinel", Arity: -2, Flags: netshell.FlagAdmin, ACL: admACL, Subs: sentinelSubcommands()},
		{Name: "shutdown", Arity: -1, Flags: adm | netshell.FlagNoMulti | netshell.FlagAllowBusy, ACL: admACL, Handler: cmdShutdown},
		{Name: "subscribe", Arity: -2, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: subscribe(false)},
		{Name: "unsubscribe", Arity: -1, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: unsubscribe(false)},
	})
}

// knownCommand tells configs.Load which names rename-command may rename.
func knownCommand(name string) bool { return table.Get(strings.ToLower(name)) != nil }

// strs converts arguments to strings where a handler keeps or compares
// them as such.
func strs(argv [][]byte) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = string(a)
	}
	return out
}

// dispatch runs one command as read (argv, valid until the next read),
// honouring CLIENT REPLY OFF/SKIP.
func (c *client) dispatch(argv [][]byte) {
	mark := len(c.w.B)
	c.rep.Start(&c.w)
	c.exec(argv)
	c.endCaching(argv)
	if len(c.w.B) > mark && c.w.B[mark] == '-' {
		c.d.stats.errors.Add(1) // afterErrorReply, even when CLIENT REPLY drops it
	}
	if c.rep.Flags != 0 {
		c.rep.End(&c.w)
	}
}

// exec is processCommand for the sentinel's table: lookup, subcommand and
// arity (netshell), authentication, ACL, the RESP2 pub/sub context.
func (c *client) exec(argv [][]byte) {
	cmd := netshell.Lookup(c.d.cmds, argv[0])
	if cmd == nil {
		c.w.Error(errUnknownCommand(argv))
		return
	}
	cmd, msg := cmd.Resolve(argv)
	if msg != "" {
		c.w.Error(msg)
		return
	}
	if !c.authed && !cmd.Has(netshell.FlagNoAuth) && !c.d.acl.defaultNoPass() {
		c.w.Error(errNoAuth)
		return
	}
	if !c.aclCheck(cmd, argv) {
		return
	}
	if c.w.Proto == 2 && !cmd.AllowedSubscribed() && c.subscribed() {
		c.w.Error("ERR Can't execute '" + cmd.FullName() + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		return
	}
	c.lastCmd = cmd.FullName()
	cmd.Handler(c, argv)
	c.d.totalCmds.Add(1) // call(): counted after the command, rejected ones never
}

// help is addReplyHelp.
func (c *client) help(cmd string, lines []string) {
	redistext.Help(&c.w, cmd, lines)
}

func cmdPing(c *client, argv [][]byte) {
	redistext.Ping(&c.w, c.w.Proto == 2 && c.subscribed(), argv)
}

func cmdAuth(c *client, argv [][]byte) {
	netshell.Auth(&c.w, argv, c.d.acl.defaultNoPassFlag(), func(user, pass string) bool {
		return c.authenticate(user, pass, string(argv[0]))
	})
}

// cmdHello is helloCommand (netshell); in sentinel mode the reply has no
// "role".
func cmdHello(c *client, argv [][]byte) {
	netshell.HelloCommand(c, argv, func(i int) bool {
		return c.authenticate(string(argv[i]), string(argv[i+1]), string(argv[0]))
	}, func() bool { return c.authed }, RedisVersion, "sentinel", "")
}

// okIf answers the CLIENT subcommands a sentinel validates but has
// nothing to do for (NO-EVICT, PAUSE: no evictions, no writes to hold);
// the parser replied to bad arguments.
func okIf(c *client, ok bool) {
	if ok {
		c.w.OK()
	}
}

// cmdClientUnblock: nobody blocks in a sentinel.
func cmdClientUnblock(c *client, argv [][]byte) {
	if _, _, ok := netshell.ParseUnblock(&c.w, argv); ok {
		c.w.Int(0)
	}
}

func (d *Daemon) clientsSorted() []*client {
	d.clientsMu.Lock()
	defer d.clientsMu.Unlock()
	out := make([]*client, 0, len(d.clients))
	for _, cl := range d.clients {
		out = append(out, cl)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].id < out[j-1].id; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// clientInfo is one CLIENT LIST line (without the newline).
func (d *Daemon) clientInfo(cl, self *client, cmdName string) string {
	d.hub.mu.Lock()
	sub, psub := len(cl.subs), len(cl.psubs)
	d.hub.mu.Unlock()
	now := timeNow()
	l := netshell.ClientLine{
		ID: cl.id, Addr: cl.addr, LAddr: cl.laddr, FD: netshell.ConnFD(cl.conn), Name: cl.getName(),
		Age: int64(now.Sub(cl.created).Seconds()), Sub: int64(sub), PSub: int64(psub),
		Multi: -1, Rbs: 1024, TotMem: 1024, Events: "r", Cmd: cl.lastCmd, User: cl.user, Resp: int64(cl.proto()),
	}
	if sub+psub > 0 {
		l.Flags = append(l.Flags, 'P')
	}
	if t := cl.tracking(); t != nil {
		l.Flags = netshell.TrackingFlags(l.Flags, t)
		l.Tracking, l.Redir = true, t.Redir
	}
	if len(l.Flags) == 0 {
		l.Flags = []byte("N")
	}
	if cl != self {
		l.Idle = int64(now.Sub(cl.idleAt).Seconds())
	} else {
		l.Cmd = cmdName
	}
	if l.Cmd == "" {
		l.Cmd = "NULL"
	}
	return string(l.Append(nil))
}

func cmdClientList(c *client, argv [][]byte) {
	f, ok := netshell.ParseList(&c.w, argv)
	if !ok {
		return
	}
	var b strings.Builder
	line := func(cl *client) {
		b.WriteString(c.d.clientInfo(cl, c, "client|list"))
		b.WriteByte('\n')
	}
	clients := c.d.clientsSorted()
	if f.IDs != nil {
		for _, id := range f.IDs {
			for _, cl := range clients {
				if cl.id == id {
					line(cl)
				}
			}
		}
	} else {
		for _, cl := range clients {
			if !f.HasType || clientType(cl) == f.Type {
				line(cl)
			}
		}
	}
	c.w.Verbatim("txt", b.String())
}

func clientType(cl *client) netshell.ClientType {
	cl.d.hub.mu.Lock()
	defer cl.d.hub.mu.Unlock()
	if len(cl.subs)+len(cl.psubs) > 0 {
		return netshell.ClientPubSub
	}
	return netshell.ClientNormal
}

// cmdClientKill is CLIENT KILL, old (ip:port) and new (filters) forms
// (netshell.ParseKill).
func cmdClientKill(c *client, argv [][]byte) {
	f, ok := netshell.ParseKill(&c.w, argv, func(name string) bool {
		c.d.acl.mu.Lock()
		defer c.d.acl.mu.Unlock()
		return c.d.acl.st.User(name) != nil
	})
	if !ok {
		return
	}
	killed := 0
	for _, cl := range c.d.clientsSorted() {
		v := netshell.ClientView{ID: cl.id, Addr: cl.addr, LAddr: cl.laddr, User: cl.user, Type: clientType(cl)}
		if !f.Match(v, cl == c) {
			continue
		}
		if cl == c {
			c.close = true
		} else {
			cl.conn.Close()
		}
		killed++
	}
	f.Reply(&c.w, killed)
}

// subscribe is SUBSCRIBE (PSUBSCRIBE with pattern); its confirmations
// are pushes, sent whatever CLIENT REPLY says (CLIENT_PUSHING).
func subscribe(pattern bool) handler {
	kind := "subscribe"
	if pattern {
		kind = "psubscribe"
	}
	return func(c *client, argv [][]byte) {
		for _, name := range argv[1:] {
			c.subReply(kind, name, c.d.hub.subscribe(c, string(name), pattern))
		}
	}
}

// unsubscribe is UNSUBSCRIBE (PUNSUBSCRIBE with pattern): without names,
// from every channel (pattern) the client has, in order.
func unsubscribe(pattern bool) handler {
	kind := "unsubscribe"
	if pattern {
		kind = "punsubscribe"
	}
	return func(c *client, argv [][]byte) {
		names := argv[1:]
		if len(names) == 0 {
			for _, n := range c.d.hub.list(c, pattern) {
				names = append(names, []byte(n))
			}
			if len(names) == 0 {
				c.d.hub.mu.Lock()
				n := len(c.subs) + len(c.psubs)
				c.d.hub.mu.Unlock()
				c.subReply(kind, nil, n)
				return
			}
		}
		for _, name := range names {
			c.subReply(kind, name, c.d.hub.unsubscribe(c, string(name), pattern))
		}
	}
}

// subReply is addReplyPubsubSubscribed and friends: a push kept when
// CLIENT REPLY drops the command's reply; a nil name is a null.
func (c *client) subReply(kind string, name []byte, count int) {
	start := len(c.w.B)
	c.w.PushLen(3)
	c.w.BulkString(kind)
	if name == nil {
		c.w.Null()
	} else {
		c.w.Bulk(name)
	}
	c.w.Int(int64(count))
	c.rep.Pushed(&c.w, start)
}

// cmdPublish is sentinelPublishCommand: only hellos are accepted.
func cmdPublish(c *client, argv [][]byte) {
	if string(argv[1]) != sentinel.HelloChannel {
		c.w.Error(errOnlyHello)
		return
	}
	payload := string(argv[2])
	c.d.call(func() { c.d.step(sentinel.HelloReceived{Payload: payload}) })
	c.w.Int(1)
}

func cmdRole(c *client, _ [][]byte) {
	var names []string
	c.d.call(func() { names = c.d.core.MasterNames() })
	c.w.ArrayLen(2)
	c.w.BulkString("sentinel")
	c.w.ArrayLen(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

func cmdShutdown(c *client, argv [][]byte) {
	for _, a := range argv[1:] {
		switch strings.ToLower(string(a)) {
		case "nosave", "save", "now", "force", "abort":
		default:
			c.w.Error(errSyntax)
			return
		}
	}
	c.d.log.Warn().Msg("User requested shutdown...")
	c.d.Shutdown(0)
	c.close = true
}
