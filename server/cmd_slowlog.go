package server

// SLOWLOG (slowlog.c) and MONITOR: the two views of the commands clients
// run.

func init() {
	ls := FlagLoading | FlagStale
	admACL := []string{"admin", "slow", "dangerous"}
	register(
		&Command{Name: "slowlog", Arity: -2, ACL: []string{"slow"}, Subs: []*Command{
			{Name: "get", Arity: -2, Flags: FlagAdmin | ls, ACL: admACL, Handler: cmdSlowlogGet},
			{Name: "help", Arity: 2, Flags: ls, ACL: []string{"slow"}, Handler: helpHandler("SLOWLOG", slowlogHelp)},
			{Name: "len", Arity: 2, Flags: FlagAdmin | ls, ACL: admACL, Handler: cmdSlowlogLen},
			{Name: "reset", Arity: 2, Flags: FlagAdmin | ls, ACL: admACL, Handler: cmdSlowlogReset},
		}},
		&Command{Name: "monitor", Arity: 1, Flags: FlagAdmin | FlagNoScript | ls, ACL: admACL, Handler: cmdMonitor},
	)
}

// --- SLOWLOG -----------------------------------------------------------------

var slowlogHelp = []string{
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
}

func cmdSlowlogGet(c *Client, args [][]byte) {
	if len(args) > 3 {
		c.w.Error(errSubcommandSyntax(args[1], "SLOWLOG"))
		return
	}
	entries := c.srv.slowlog.entries
	count := int64(10)
	if len(args) == 3 {
		n, ok := parseInt(args[2])
		if !ok || n < -1 {
			c.w.Error(ErrSlowlogCount)
			return
		}
		count = n
	}
	if count == -1 || count > int64(len(entries)) {
		count = int64(len(entries))
	}
	c.w.ArrayLen(int(count))
	for _, e := range entries[:count] {
		c.w.ArrayLen(6)
		c.w.Int(e.id)
		c.w.Int(e.at)
		c.w.Int(e.usec)
		c.w.ArrayLen(len(e.args))
		for _, a := range e.args {
			c.w.BulkString(a)
		}
		c.w.BulkString(e.addr)
		c.w.BulkString(e.name)
	}
}

func cmdSlowlogLen(c *Client, args [][]byte) { c.w.Int(int64(len(c.srv.slowlog.entries))) }

func cmdSlowlogReset(c *Client, args [][]byte) {
	c.srv.slowlog.entries = nil
	c.w.OK()
}

// --- MONITOR -------------------------------------------------------------------

// cmdMonitor is monitorCommand: +OK, then every command other clients run
// is pushed to this connection (feedMonitors). A second MONITOR is ignored
// without a reply, as Redis.
func cmdMonitor(c *Client, args [][]byte) {
	if c.monitor {
		return
	}
	c.monitor = true
	c.srv.monitors[c] = struct{}{}
	c.w.OK()
}
