package daemon

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/sentinel"
)

// Redis 7.0 error texts used by the sentinel's commands.
const (
	errNoAuth         = redistext.ErrNoAuth
	errWrongPass      = redistext.ErrWrongPass
	errAuthNotSet     = redistext.ErrAuthNotSet
	errSyntax         = redistext.ErrSyntax
	errNotInteger     = redistext.ErrNotInteger
	errNoSuchMaster   = "ERR No such master with that name"
	errNoSuchClient   = redistext.ErrNoSuchClient
	errClientName     = redistext.ErrClientName
	errNoProto        = redistext.ErrNoProto
	errOnlyHello      = "ERR Only HELLO messages are accepted by Sentinel instances."
	errConfigUsage    = "ERR Only SENTINEL CONFIG GET <option> / SET <option> <value> are supported."
	errUnknownSimFail = "ERR Unknown failure simulation specified"
	errHelloNoAuth    = redistext.ErrHelloNoAuth
)

// The shared formats (redistext).
var (
	errWrongArgs         = redistext.WrongArgs
	errUnknownSubcommand = redistext.UnknownSubcommand
	errUnknownCommand    = redistext.UnknownCommand[[]byte]
	trunc                = redistext.Trunc
	validClientName      = redistext.ValidClientName[string]
)

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
	admConn := []string{"admin", "slow", "dangerous", "connection"}
	admACL := []string{"admin", "slow", "dangerous"}
	table = netshell.NewTable([]*command{
		{Name: "acl", Arity: -2, ACL: []string{"slow"}, Subs: aclSubcommands()},
		{Name: "auth", Arity: -2, Flags: noAuth, ACL: []string{"fast", "connection"}, Handler: cmdAuth},
		{Name: "client", Arity: -2, ACL: []string{"slow"}, Subs: []*command{
			{Name: "help", Arity: 2, Flags: netshell.FlagLoading | netshell.FlagStale, ACL: conn, Handler: func(c *client, _ [][]byte) { c.help("CLIENT", clientHelp) }},
			{Name: "id", Arity: 2, Flags: ls, ACL: conn, Handler: func(c *client, _ [][]byte) { c.w.Int(c.id) }},
			{Name: "getname", Arity: 2, Flags: ls, ACL: conn, Handler: cmdClientGetName},
			{Name: "setname", Arity: 3, Flags: ls, ACL: conn, Handler: cmdClientSetName},
			{Name: "info", Arity: 2, Flags: ls, ACL: conn, Handler: func(c *client, _ [][]byte) {
				c.w.Verbatim("txt", c.d.clientInfo(c, c, "client|info")+"\n")
			}},
			{Name: "list", Arity: -2, Flags: adm, ACL: admConn, Handler: cmdClientList},
			{Name: "kill", Arity: -3, Flags: adm, ACL: admConn, Handler: cmdClientKill},
			{Name: "getredir", Arity: 2, Flags: ls, ACL: conn, Handler: func(c *client, _ [][]byte) { c.w.Int(-1) }},
			{Name: "no-evict", Arity: 3, Flags: adm, ACL: admConn, Handler: cmdClientOnOff},
			{Name: "pause", Arity: -3, Flags: adm, ACL: admConn, Handler: cmdClientPause},
			{Name: "unpause", Arity: 2, Flags: adm, ACL: admConn, Handler: func(c *client, _ [][]byte) { c.w.OK() }},
			{Name: "unblock", Arity: -3, Flags: adm, ACL: admConn, Handler: cmdClientUnblock},
			{Name: "reply", Arity: 3, Flags: ls, ACL: conn, Handler: cmdClientReply},
		}},
		{Name: "command", Arity: -1, Flags: netshell.FlagLoading | netshell.FlagStale, ACL: conn, Handler: cmdCommand},
		{Name: "hello", Arity: -1, Flags: noAuth, ACL: []string{"fast", "connection"}, Handler: cmdHello},
		{Name: "info", Arity: -1, Flags: netshell.FlagLoading | netshell.FlagStale, ACL: []string{"slow", "dangerous"}, Handler: cmdInfo},
		{Name: "ping", Arity: -1, Flags: netshell.FlagFast, ACL: []string{"fast", "connection"}, Handler: cmdPing},
		{Name: "psubscribe", Arity: -2, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: cmdSubscribe},
		{Name: "publish", Arity: 3, Flags: netshell.FlagPubSub | netshell.FlagLoading | netshell.FlagStale | netshell.FlagFast, ACL: []string{"pubsub", "fast"}, Handler: cmdPublish},
		{Name: "punsubscribe", Arity: -1, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: cmdUnsubscribe},
		{Name: "role", Arity: 1, Flags: ls | netshell.FlagFast, ACL: []string{"admin", "fast", "dangerous"}, Handler: cmdRole},
		{Name: "sentinel", Arity: -2, Flags: netshell.FlagAdmin, ACL: admACL, Subs: sentinelSubcommands()},
		{Name: "shutdown", Arity: -1, Flags: adm | netshell.FlagNoMulti | netshell.FlagAllowBusy, ACL: admACL, Handler: cmdShutdown},
		{Name: "subscribe", Arity: -2, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: cmdSubscribe},
		{Name: "unsubscribe", Arity: -1, Flags: pubsub, ACL: []string{"pubsub", "slow"}, Handler: cmdUnsubscribe},
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

// Reply modes of CLIENT REPLY.
const (
	replyOn = iota
	replyOff
	replySkipNext // set by SKIP, becomes replySkip for the next command
	replySkip
)

// dispatch runs one command as read (argv, valid until the next read),
// honouring CLIENT REPLY OFF/SKIP.
func (c *client) dispatch(argv [][]byte) {
	mark := len(c.w.B)
	mode := c.replyMode
	c.exec(argv)
	if len(c.w.B) > mark && c.w.B[mark] == '-' {
		c.d.stats.errors.Add(1) // afterErrorReply, even when CLIENT REPLY drops it
	}
	if (mode == replyOff && c.replyMode != replyOn) || mode == replySkip {
		c.w.B = c.w.B[:mark]
	}
	switch c.replyMode {
	case replySkip:
		c.replyMode = replyOn
	case replySkipNext:
		c.replyMode = replySkip
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
	args := strs(argv)
	if len(args) > 3 {
		c.w.Error(errSyntax)
		return
	}
	user, pass := "default", args[1]
	if len(args) == 3 {
		user, pass = args[1], args[2]
	} else if c.d.acl.defaultNoPassFlag() {
		c.w.Error(errAuthNotSet)
		return
	}
	if !c.authenticate(user, pass, args[0]) {
		c.w.Error(errWrongPass)
		return
	}
	c.w.OK()
}

// cmdHello is helloCommand (parsed by netshell.ParseHello); in sentinel
// mode the reply has no "role".
func cmdHello(c *client, argv [][]byte) {
	h, errText := netshell.ParseHello(argv, func(i int) bool {
		return c.authenticate(string(argv[i]), string(argv[i+1]), string(argv[0]))
	})
	if errText != "" {
		c.w.Error(errText)
		return
	}
	if !c.authed {
		c.w.Error(errHelloNoAuth)
		return
	}
	if h.HaveName {
		if !validClientName(string(h.Name)) {
			c.w.Error(errClientName)
			return
		}
		c.mu.Lock()
		c.name = string(h.Name)
		c.mu.Unlock()
	}
	if h.Proto != 0 {
		c.mu.Lock()
		c.w.Proto = h.Proto
		c.mu.Unlock()
	}
	redistext.Hello(&c.w, RedisVersion, c.id, "sentinel", "")
}

func cmdClientOnOff(c *client, argv [][]byte) {
	args := strs(argv)
	switch strings.ToLower(args[2]) {
	case "on", "off":
		c.w.OK()
	default:
		c.w.Error(errSyntax)
	}
}

// cmdClientPause validates like Redis; a sentinel has no writes to hold.
func cmdClientPause(c *client, argv [][]byte) {
	args := strs(argv)
	if n, ok := redisutil.String2ll(args[2]); !ok || n < 0 {
		c.w.Error("ERR timeout is not an integer or out of range")
		return
	}
	if len(args) == 4 && !strings.EqualFold(args[3], "write") && !strings.EqualFold(args[3], "all") {
		c.w.Error(errSyntax)
		return
	}
	if len(args) > 4 {
		c.w.Error(errSyntax)
		return
	}
	c.w.OK()
}

func cmdClientUnblock(c *client, argv [][]byte) {
	args := strs(argv)
	if _, ok := redisutil.String2ll(args[2]); !ok {
		c.w.Error(errNotInteger)
		return
	}
	if len(args) == 4 && !strings.EqualFold(args[3], "timeout") && !strings.EqualFold(args[3], "error") {
		c.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
		return
	}
	if len(args) > 4 {
		c.w.Error(errSyntax)
		return
	}
	c.w.Int(0) // nobody blocks in a sentinel
}

// cmdClientReply is CLIENT REPLY ON|OFF|SKIP.
func cmdClientReply(c *client, argv [][]byte) {
	args := strs(argv)
	switch strings.ToLower(args[2]) {
	case "on":
		c.replyMode = replyOn
		c.w.OK()
	case "off":
		c.replyMode = replyOff
	case "skip":
		if c.replyMode == replyOn {
			c.replyMode = replySkipNext
		}
	default:
		c.w.Error(errSyntax)
	}
}

func cmdClientGetName(c *client, _ [][]byte) {
	n := c.getName()
	if n == "" {
		c.w.Null()
		return
	}
	c.w.BulkString(n)
}

func cmdClientSetName(c *client, argv [][]byte) {
	args := strs(argv)
	if !validClientName(args[2]) {
		c.w.Error(errClientName)
		return
	}
	c.mu.Lock()
	c.name = args[2]
	c.mu.Unlock()
	c.w.OK()
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
	flags := "N"
	if sub+psub > 0 {
		flags = "P"
	}
	now := timeNow()
	idle := int64(0)
	last := cl.lastCmd
	if cl != self {
		idle = int64(now.Sub(cl.idleAt).Seconds())
	} else {
		last = cmdName
	}
	if last == "" {
		last = "NULL"
	}
	proto := cl.proto()
	var b strings.Builder
	b.WriteString("id=" + strconv.FormatInt(cl.id, 10))
	b.WriteString(" addr=" + cl.addr + " laddr=" + cl.laddr + " fd=" + strconv.FormatInt(connFD(cl), 10))
	b.WriteString(" name=" + cl.getName())
	b.WriteString(" age=" + strconv.FormatInt(int64(now.Sub(cl.created).Seconds()), 10))
	b.WriteString(" idle=" + strconv.FormatInt(idle, 10))
	b.WriteString(" flags=" + flags + " db=0 sub=" + strconv.Itoa(sub) + " psub=" + strconv.Itoa(psub))
	b.WriteString(" ssub=0 multi=-1 qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=1024 events=r")
	b.WriteString(" cmd=" + last + " user=" + cl.user + " redir=-1 resp=" + strconv.Itoa(proto))
	return b.String()
}

func cmdClientList(c *client, argv [][]byte) {
	args := strs(argv)
	typ := -1
	if len(args) == 4 && strings.EqualFold(args[2], "type") {
		switch strings.ToLower(args[3]) {
		case "normal":
			typ = 0
		case "pubsub":
			typ = 1
		case "master", "replica", "slave":
			typ = 2
		default:
			c.w.Error("ERR Unknown client type '" + args[3] + "'")
			return
		}
	} else if len(args) != 2 {
		c.w.Error(errSyntax)
		return
	}
	var b strings.Builder
	for _, cl := range c.d.clientsSorted() {
		if typ >= 0 && clientType(cl) != typ {
			continue
		}
		b.WriteString(c.d.clientInfo(cl, c, "client|list"))
		b.WriteByte('\n')
	}
	c.w.Verbatim("txt", b.String())
}

func clientType(cl *client) int {
	cl.d.hub.mu.Lock()
	defer cl.d.hub.mu.Unlock()
	if len(cl.subs)+len(cl.psubs) > 0 {
		return 1
	}
	return 0
}

// cmdClientKill is CLIENT KILL, old (ip:port) and new (filters) forms.
func cmdClientKill(c *client, argv [][]byte) {
	args := strs(argv)
	var id int64 = -1
	addr, laddr, user := "", "", ""
	typ := -1
	skipme := true
	if len(args) == 3 {
		addr = args[2]
		skipme = false
	} else if len(args)%2 != 0 {
		c.w.Error(errSyntax)
		return
	} else {
		for i := 2; i+1 < len(args); i += 2 {
			v := args[i+1]
			switch strings.ToLower(args[i]) {
			case "id":
				n, ok := redisutil.String2ll(v)
				if !ok || n <= 0 {
					c.w.Error("ERR client-id should be greater than 0")
					return
				}
				id = n
			case "type":
				switch strings.ToLower(v) {
				case "normal":
					typ = 0
				case "pubsub":
					typ = 1
				case "master", "replica", "slave":
					typ = 2
				default:
					c.w.Error("ERR Unknown client type '" + v + "'")
					return
				}
			case "addr":
				addr = v
			case "laddr":
				laddr = v
			case "user":
				c.d.acl.mu.Lock()
				known := c.d.acl.st.User(v) != nil
				c.d.acl.mu.Unlock()
				if !known {
					c.w.Error("ERR No such user '" + v + "'")
					return
				}
				user = v
			case "skipme":
				switch strings.ToLower(v) {
				case "yes":
					skipme = true
				case "no":
					skipme = false
				default:
					c.w.Error(errSyntax)
					return
				}
			default:
				c.w.Error(errSyntax)
				return
			}
		}
	}
	killed := 0
	for _, cl := range c.d.clientsSorted() {
		if (id >= 0 && cl.id != id) || (addr != "" && cl.addr != addr) || (laddr != "" && cl.laddr != laddr) ||
			(user != "" && cl.user != user) || (typ >= 0 && clientType(cl) != typ) {
			continue
		}
		if cl == c {
			if skipme {
				continue
			}
			c.close = true
		} else {
			cl.conn.Close()
		}
		killed++
	}
	if len(args) == 3 {
		if killed == 0 {
			c.w.Error(errNoSuchClient)
			return
		}
		c.w.OK()
		return
	}
	c.w.Int(int64(killed))
}

func cmdSubscribe(c *client, argv [][]byte) {
	args := strs(argv)
	pattern := strings.EqualFold(args[0], "psubscribe")
	kind := "subscribe"
	if pattern {
		kind = "psubscribe"
	}
	for _, name := range args[1:] {
		n := c.d.hub.subscribe(c, name, pattern)
		c.w.PushLen(3)
		c.w.BulkString(kind)
		c.w.BulkString(name)
		c.w.Int(int64(n))
	}
}

func cmdUnsubscribe(c *client, argv [][]byte) {
	args := strs(argv)
	pattern := strings.EqualFold(args[0], "punsubscribe")
	kind := "unsubscribe"
	if pattern {
		kind = "punsubscribe"
	}
	names := args[1:]
	if len(names) == 0 {
		names = c.d.hub.list(c, pattern)
		if len(names) == 0 {
			c.w.PushLen(3)
			c.w.BulkString(kind)
			c.w.Null()
			c.d.hub.mu.Lock()
			n := len(c.subs) + len(c.psubs)
			c.d.hub.mu.Unlock()
			c.w.Int(int64(n))
			return
		}
	}
	for _, name := range names {
		n := c.d.hub.unsubscribe(c, name, pattern)
		c.w.PushLen(3)
		c.w.BulkString(kind)
		c.w.BulkString(name)
		c.w.Int(int64(n))
	}
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
