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
	errUnknownCommand    = redistext.UnknownCommand[string]
	trunc                = redistext.Trunc
	validClientName      = redistext.ValidClientName[string]
)

// command is one entry of the sentinel's command table (sentinelcmds).
type command struct {
	name     string
	arity    int
	flags    []string
	acl      []string
	noAuth   bool
	pubsubOK bool // allowed in RESP2 pub/sub context
	handler  func(c *client, args []string)
	subs     []subcommand
}

type subcommand struct {
	name    string
	arity   int
	flags   []string
	acl     []string
	handler func(c *client, args []string)
}

var commandTable []*command
var commandIndex map[string]*command

func init() {
	ls := []string{"noscript", "loading", "stale"}
	adm := []string{"admin"}
	admACL := []string{"@admin", "@slow", "@dangerous"}
	commandTable = []*command{
		{name: "acl", arity: -2, acl: []string{"@slow"}, subs: aclSubcommands()},
		{name: "auth", arity: -2, flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, acl: []string{"@fast", "@connection"}, noAuth: true, handler: cmdAuth},
		{name: "client", arity: -2, acl: []string{"@slow"}, subs: []subcommand{
			{"help", 2, []string{"loading", "stale"}, []string{"@slow", "@connection"}, func(c *client, _ []string) { c.help("CLIENT", clientHelp) }},
			{"id", 2, ls, []string{"@slow", "@connection"}, func(c *client, _ []string) { c.w.Int(c.id) }},
			{"getname", 2, ls, []string{"@slow", "@connection"}, cmdClientGetName},
			{"setname", 3, ls, []string{"@slow", "@connection"}, cmdClientSetName},
			{"info", 2, ls, []string{"@slow", "@connection"}, func(c *client, _ []string) {
				c.w.Verbatim("txt", c.d.clientInfo(c, c, "client|info")+"\n")
			}},
			{"list", -2, append([]string{"admin"}, ls...), append(admACL, "@connection"), cmdClientList},
			{"kill", -3, append([]string{"admin"}, ls...), append(admACL, "@connection"), cmdClientKill},
			{"getredir", 2, ls, []string{"@slow", "@connection"}, func(c *client, _ []string) { c.w.Int(-1) }},
			{"no-evict", 3, append([]string{"admin"}, ls...), append(admACL, "@connection"), cmdClientOnOff},
			{"pause", -3, append([]string{"admin"}, ls...), append(admACL, "@connection"), cmdClientPause},
			{"unpause", 2, append([]string{"admin"}, ls...), append(admACL, "@connection"), func(c *client, _ []string) { c.w.OK() }},
			{"unblock", -3, append([]string{"admin"}, ls...), append(admACL, "@connection"), cmdClientUnblock},
			{"reply", 3, ls, []string{"@slow", "@connection"}, cmdClientReply},
		}},
		{name: "command", arity: -1, flags: []string{"loading", "stale"}, acl: []string{"@slow", "@connection"}, handler: cmdCommand},
		{name: "hello", arity: -1, flags: []string{"noscript", "loading", "stale", "fast", "no_auth", "allow_busy"}, acl: []string{"@fast", "@connection"}, noAuth: true, handler: cmdHello},
		{name: "info", arity: -1, flags: []string{"loading", "stale"}, acl: []string{"@slow", "@dangerous"}, handler: cmdInfo},
		{name: "ping", arity: -1, flags: []string{"fast"}, acl: []string{"@fast", "@connection"}, pubsubOK: true, handler: cmdPing},
		{name: "psubscribe", arity: -2, flags: []string{"pubsub", "noscript", "loading", "stale"}, acl: []string{"@pubsub", "@slow"}, pubsubOK: true, handler: cmdSubscribe},
		{name: "publish", arity: 3, flags: []string{"pubsub", "loading", "stale", "fast"}, acl: []string{"@pubsub", "@fast"}, handler: cmdPublish},
		{name: "punsubscribe", arity: -1, flags: []string{"pubsub", "noscript", "loading", "stale"}, acl: []string{"@pubsub", "@slow"}, pubsubOK: true, handler: cmdUnsubscribe},
		{name: "role", arity: 1, flags: []string{"noscript", "loading", "stale", "fast"}, acl: []string{"@admin", "@fast", "@dangerous"}, handler: cmdRole},
		{name: "sentinel", arity: -2, flags: adm, acl: admACL, subs: sentinelSubcommands()},
		{name: "shutdown", arity: -1, flags: []string{"admin", "noscript", "loading", "stale", "no_multi", "allow_busy"}, acl: admACL, handler: cmdShutdown},
		{name: "subscribe", arity: -2, flags: []string{"pubsub", "noscript", "loading", "stale"}, acl: []string{"@pubsub", "@slow"}, pubsubOK: true, handler: cmdSubscribe},
		{name: "unsubscribe", arity: -1, flags: []string{"pubsub", "noscript", "loading", "stale"}, acl: []string{"@pubsub", "@slow"}, pubsubOK: true, handler: cmdUnsubscribe},
	}
	commandIndex = map[string]*command{}
	for _, c := range commandTable {
		commandIndex[c.name] = c
	}
}

// commandsRenamed is commandIndex after rename-command (original name ->
// new name, "" = removed), as Redis renames entries of sentinel mode's
// command table while loading the configuration. Errors keep naming the
// original command, as Redis's do (they use the command's fullname).
func commandsRenamed(renames map[string]string) map[string]*command {
	if len(renames) == 0 {
		return commandIndex
	}
	m := make(map[string]*command, len(commandIndex))
	for name, c := range commandIndex {
		if _, renamed := renames[name]; !renamed {
			m[name] = c
		}
	}
	for orig, to := range renames {
		if c := commandIndex[orig]; c != nil && to != "" {
			m[to] = c
		}
	}
	return m
}

// sub finds a subcommand by name, case-insensitively (nil if none).
func (cmd *command) sub(name string) *subcommand {
	name = strings.ToLower(name)
	for i := range cmd.subs {
		if cmd.subs[i].name == name {
			return &cmd.subs[i]
		}
	}
	return nil
}

// knownCommand tells configs.Load which names rename-command may rename.
func knownCommand(name string) bool { return commandIndex[strings.ToLower(name)] != nil }

func arityOK(arity, n int) bool {
	if arity >= 0 {
		return n == arity
	}
	return n >= -arity
}

// Reply modes of CLIENT REPLY.
const (
	replyOn = iota
	replyOff
	replySkipNext // set by SKIP, becomes replySkip for the next command
	replySkip
)

// dispatch runs one command, honouring CLIENT REPLY OFF/SKIP.
// dispatch runs one command as read (argv, valid until the next read);
// the ACL checks argv itself, the handlers its strings.
func (c *client) dispatch(argv [][]byte) {
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = string(a)
	}
	mark := len(c.w.B)
	mode := c.replyMode
	c.argv = argv
	c.exec(args)
	c.argv = nil
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

// exec is processCommand for the sentinel's table.
func (c *client) exec(args []string) {
	cmd := c.d.cmds[strings.ToLower(args[0])]
	if cmd == nil {
		c.w.Error(errUnknownCommand(args))
		return
	}
	name := cmd.name
	var sub *subcommand
	if len(cmd.subs) > 0 && len(args) >= 2 {
		if sub = cmd.sub(args[1]); sub == nil {
			c.w.Error(errUnknownSubcommand(args[1], strings.ToUpper(name)))
			return
		}
	}
	if !arityOK(cmd.arity, len(args)) {
		c.w.Error(errWrongArgs(name))
		return
	}
	if sub != nil && !arityOK(sub.arity, len(args)) {
		c.w.Error(errWrongArgs(name + "|" + sub.name))
		return
	}
	if !c.authed && !cmd.noAuth && !c.d.acl.defaultNoPass() {
		c.w.Error(errNoAuth)
		return
	}
	if !c.aclCheck(cmd, sub, args) {
		return
	}
	if c.w.Proto == 2 && !cmd.pubsubOK && c.subscribed() {
		c.w.Error("ERR Can't execute '" + fullName(name, sub) + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
		return
	}
	c.lastCmd = fullName(name, sub)
	if sub != nil {
		sub.handler(c, args)
	} else {
		cmd.handler(c, args)
	}
	c.d.totalCmds.Add(1) // call(): counted after the command, rejected ones never
}

func fullName(name string, sub *subcommand) string {
	if sub == nil {
		return name
	}
	return name + "|" + sub.name
}

// help is addReplyHelp.
func (c *client) help(cmd string, lines []string) {
	redistext.Help(&c.w, cmd, lines)
}

func cmdPing(c *client, args []string) {
	redistext.Ping(&c.w, c.w.Proto == 2 && c.subscribed(), args)
}

func cmdAuth(c *client, args []string) {
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
func cmdHello(c *client, args []string) {
	h, errText := netshell.ParseHello(c.argv, func(i int) bool {
		return c.authenticate(args[i], args[i+1], args[0])
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

func cmdClientOnOff(c *client, args []string) {
	switch strings.ToLower(args[2]) {
	case "on", "off":
		c.w.OK()
	default:
		c.w.Error(errSyntax)
	}
}

// cmdClientPause validates like Redis; a sentinel has no writes to hold.
func cmdClientPause(c *client, args []string) {
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

func cmdClientUnblock(c *client, args []string) {
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
func cmdClientReply(c *client, args []string) {
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

func cmdClientGetName(c *client, _ []string) {
	n := c.getName()
	if n == "" {
		c.w.Null()
		return
	}
	c.w.BulkString(n)
}

func cmdClientSetName(c *client, args []string) {
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

func cmdClientList(c *client, args []string) {
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
func cmdClientKill(c *client, args []string) {
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

func cmdSubscribe(c *client, args []string) {
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

func cmdUnsubscribe(c *client, args []string) {
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
func cmdPublish(c *client, args []string) {
	if args[1] != sentinel.HelloChannel {
		c.w.Error(errOnlyHello)
		return
	}
	payload := args[2]
	c.d.call(func() { c.d.step(sentinel.HelloReceived{Payload: payload}) })
	c.w.Int(1)
}

func cmdRole(c *client, _ []string) {
	var names []string
	c.d.call(func() { names = c.d.core.MasterNames() })
	c.w.ArrayLen(2)
	c.w.BulkString("sentinel")
	c.w.ArrayLen(len(names))
	for _, n := range names {
		c.w.BulkString(n)
	}
}

func cmdShutdown(c *client, args []string) {
	for _, a := range args[1:] {
		switch strings.ToLower(a) {
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
