package daemon

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/sentinel"
)

// Options configure a Daemon.
type Options struct {
	// Settings is the loaded sentinel.conf (LoadConfig).
	Settings *Settings
	// Log receives Redis-like lines; Notify events are logged at their level.
	Log zerolog.Logger
	// Tunables override the core's timers (nil: sentinel.DefaultTunables).
	Tunables *sentinel.Tunables
	// Seed seeds the core's randomness (0: from the clock).
	Seed int64
	// Exit is called for SENTINEL SIMULATE-FAILURE crashes (status 99);
	// nil means os.Exit. SHUTDOWN makes Run return instead.
	Exit func(code int)
	// DialTimeout bounds connection attempts to instances (default 2 s).
	DialTimeout time.Duration
}

// Daemon is the sentinel shell: it owns one sentinel.Core, driven by a
// single event-loop goroutine (Run). Instance links and client connections
// run on their own goroutines and hand their facts to the loop through an
// unbounded inbox, so nothing that runs on the loop ever blocks on them.
type Daemon struct {
	// failovers counts the failovers run, for the metrics (failoverstats.go).
	failovers failoverStats
	// timelineVer is the core's TimelineVersion last saved (timeline.go).
	timelineVer uint64
	// cmds is the command table by the names clients use: the table
	// after the configuration's rename-command directives.
	cmds map[string]*command
	opts Options
	st   *Settings
	// tls is the TLS context (tls-port's clients; with tls-replication,
	// the links to instances and sentinels), tlsLinks whether links use
	// it (netshell/tls.go).
	tls      netshell.TLSState
	tlsLinks bool
	log      zerolog.Logger
	core     *sentinel.Core // owned by the loop goroutine

	inboxMu  sync.Mutex
	inboxQ   []func()
	inboxSig chan struct{}

	links   map[uint64]*ilink // by Ref.Link; loop only
	scripts *scriptQueue      // loop only

	listeners []net.Listener
	lnMu      sync.Mutex

	clientsMu sync.Mutex
	clients   map[int64]*client
	nextID    atomic.Int64
	hub       *hub

	started    time.Time
	totalConns atomic.Int64
	// trackingClients counts the clients with CLIENT TRACKING on (INFO).
	trackingClients atomic.Int64
	totalCmds       atomic.Int64
	rejected        atomic.Int64
	stats           serverStats  // INFO's byte, read/write and error counters
	curHz           atomic.Int64 // server.hz: 1000 / the current tick delay

	done      chan struct{} // closed when the loop stops
	stop      chan int      // SHUTDOWN / Close requests
	stopOnce  sync.Once
	myIDCache atomic.Value // the sentinel id, for other goroutines
	acl       *aclState    // users and ACL log (acl.go)
}

// ilink is the connection pair of one sentinel.Ref.Link.
type ilink struct {
	cc, pc *iconn
}

// iconn is one connection attempt; events carry it so that the loop can
// drop those of a connection it already replaced or closed.
type iconn struct {
	l *link // nil while dialing
	// queued holds commands sent while dialing (the core sends on a
	// connection being opened, as sentinel.c does through hiredis's
	// buffering); they follow the AUTH/SETNAME prelude.
	queued []queuedCmd
}

type queuedCmd struct {
	cb   func(Reply)
	args []string
}

// New builds a daemon from loaded settings and applies the configuration to
// the core (ConfigLoaded). It returns the core's error for a bad
// configuration, and rewrites the file when the core generated an id.
func New(opts Options) (*Daemon, error) {
	if opts.Settings == nil {
		return nil, errors.New("daemon: no settings")
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 2 * time.Second
	}
	seed := opts.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	d := &Daemon{
		opts:     opts,
		st:       opts.Settings,
		log:      opts.Log,
		inboxSig: make(chan struct{}, 1),
		links:    map[uint64]*ilink{},
		clients:  map[int64]*client{},
		hub:      newHub(),
		done:     make(chan struct{}),
		stop:     make(chan int, 1),
		started:  time.Now(),
	}
	d.scripts = newScriptQueue(d)
	d.stats.start(d.started.UnixMilli())
	acl, err := newACL(d.st.Server)
	if err != nil {
		return nil, err
	}
	d.acl = acl
	d.st.userLines = acl.lines
	// rename-command, as Redis renames entries of sentinel mode's table
	// while loading the configuration (checked there: configs.Load).
	// Errors keep naming the original command (its fullname).
	if d.cmds, err = table.Renamed(d.st.Server.RenameCommands); err != nil {
		return nil, err
	}
	port := d.st.Server.Port
	if t := netshell.TLSSettingsOf(d.st.Server); t.Replication && t.Port != 0 { // sentinelSendHello's announce_port
		port = t.Port
	}
	d.core = sentinel.New(sentinel.Options{Port: port, Tunables: opts.Tunables, RequirePass: d.st.Server.RequirePass != "",
		Resolve: resolveHost}, rand.New(rand.NewSource(seed)))
	return d, nil
}

// Start loads the configuration into the core, as sentinelIsRunning: the
// id is generated and saved when missing ("Sentinel new configuration saved
// on disk"), "Sentinel ID is ..." and +monitor are logged.
func (d *Daemon) Start() error {
	d.loadTimeline()
	actions := d.core.Step(nowMs(), sentinel.ConfigLoaded{Config: d.st.Sentinel})
	for _, a := range actions {
		if r, ok := a.(sentinel.Reply); ok && r.Kind == sentinel.ReplyError {
			// A state the line checks of LoadConfig let through: Redis's
			// fatal block, without a line.
			return &configs.ConfigError{Reason: strings.TrimPrefix(r.Text, "ERR ")}
		}
	}
	d.myIDCache.Store(d.core.MyID())
	var notifies []sentinel.Action
	for _, a := range actions {
		switch a.(type) {
		case sentinel.RewriteConfig:
			if err := d.flush(); err != nil {
				return fmt.Errorf("can't save the configuration: %w", err)
			}
		case sentinel.Reply:
		default:
			notifies = append(notifies, a)
		}
	}
	d.log.Warn().Msg("Sentinel ID is " + d.core.MyID())
	for _, a := range notifies {
		d.exec(a)
	}
	return nil
}

// MyID returns the sentinel id (safe from any goroutine).
func (d *Daemon) MyID() string {
	if v, ok := d.myIDCache.Load().(string); ok {
		return v
	}
	return ""
}

func nowMs() int64 { return time.Now().UnixMilli() }

// resolveHost is anetResolve for the core (sentinel.Options.Resolve): the
// first address the resolver gives, as getaddrinfo's first result; like
// Redis's it blocks the loop for the lookup.
func resolveHost(host string) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	if err != nil || len(addrs) == 0 {
		return "", false
	}
	return addrs[0], true
}

// post queues f to run on the loop goroutine. It never blocks.
func (d *Daemon) post(f func()) {
	d.inboxMu.Lock()
	d.inboxQ = append(d.inboxQ, f)
	d.inboxMu.Unlock()
	select {
	case d.inboxSig <- struct{}{}:
	default:
	}
}

// call runs f on the loop goroutine and waits for it; false if the loop
// has stopped.
func (d *Daemon) call(f func()) bool {
	ch := make(chan struct{})
	d.post(func() { f(); close(ch) })
	select {
	case <-ch:
		return true
	case <-d.done:
		return false
	}
}

// Shutdown asks Run to return (SIGTERM, SHUTDOWN).
func (d *Daemon) Shutdown(code int) {
	d.stopOnce.Do(func() { d.stop <- code })
}

// Done is closed when Run has returned.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Run serves until ctx is cancelled or Shutdown is called. The listeners
// must already be open (Listen).
func (d *Daemon) Run(ctx context.Context) int {
	defer close(d.done)
	for _, ln := range d.listeners {
		go d.acceptLoop(ln)
	}
	timer := time.NewTimer(d.tickDelay())
	defer timer.Stop()
	code := 0
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case code = <-d.stop:
			break loop
		case <-d.inboxSig:
			d.drain()
		case <-timer.C:
			d.step(sentinel.Ticked{})
			d.scripts.tick()
			d.stats.sample(nowMs(), d.totalCmds.Load())
			timer.Reset(d.tickDelay())
		}
	}
	d.closeAll()
	return code
}

// tickDelay draws the delay to the next Ticked and records the hz INFO
// reports (sentinelTimer sets server.hz to 10..19 at every run).
func (d *Daemon) tickDelay() time.Duration {
	ms := d.core.TickDelay()
	d.curHz.Store(1000 / ms)
	return time.Duration(ms) * time.Millisecond
}

func (d *Daemon) drain() {
	for {
		d.inboxMu.Lock()
		q := d.inboxQ
		d.inboxQ = nil
		d.inboxMu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, f := range q {
			f()
		}
	}
}

func (d *Daemon) closeAll() {
	d.lnMu.Lock()
	for _, ln := range d.listeners {
		ln.Close()
	}
	d.lnMu.Unlock()
	for _, il := range d.links {
		for _, c := range []*iconn{il.cc, il.pc} {
			if c != nil && c.l != nil {
				c.l.Close(nil)
			}
		}
	}
	d.links = map[uint64]*ilink{}
	d.scripts.killAll()
	d.clientsMu.Lock()
	for _, c := range d.clients {
		c.conn.Close()
	}
	d.clientsMu.Unlock()
}

// step delivers one event and executes the actions; it returns the reply
// action (Reply or MasterDownReply) if any, with a failed config rewrite
// turning an OK into the flush error as sentinel.c does.
func (d *Daemon) step(ev sentinel.Event) sentinel.Action {
	var reply sentinel.Action
	flushFailed := false
	for _, a := range d.core.Step(nowMs(), ev) {
		switch a := a.(type) {
		case sentinel.RewriteConfig:
			if err := d.flush(); err != nil {
				flushFailed = true
			}
		case sentinel.Reply, sentinel.MasterDownReply:
			reply = a
		case sentinel.SendAckSeen:
			// Only once the replicas it confirms are on disk (a sentinel
			// restarted from its file must still count them).
			if flushFailed {
				d.send(a.Instance, func(Reply) sentinel.Event { return sentinel.CommandReplied{Instance: a.Instance} },
					d.core.MapCommand(a.Instance, "PING"))
			} else {
				d.exec(a)
			}
		default:
			d.exec(a)
		}
	}
	d.saveTimeline()
	if r, ok := reply.(sentinel.Reply); ok && flushFailed && r.Kind == sentinel.ReplyOK {
		reply = sentinel.Reply{Kind: sentinel.ReplyError, Text: "ERR Failed to save config file. Check server logs."}
	}
	return reply
}

// flush is sentinelFlushConfig.
func (d *Daemon) flush() error {
	err := d.st.Rewrite(d.core.Config(), d.core.Tunables())
	if err != nil {
		d.log.Warn().Err(err).Msg("WARNING: Sentinel was not able to save the new configuration on disk!!!: " + redisutil.Strerror(err))
		return err
	}
	d.log.Info().Msg("Sentinel new configuration saved on disk")
	return nil
}

// exec runs one action on the loop goroutine.
func (d *Daemon) exec(a sentinel.Action) {
	switch a := a.(type) {
	case sentinel.Connect:
		d.connect(a)
	case sentinel.Disconnect:
		d.disconnect(a.Instance, a.Cmd, a.PubSub)
	case sentinel.SendPing:
		d.send(a.Instance, func(r Reply) sentinel.Event {
			text := ""
			if r.V.Kind == resp.KindSimple || r.V.Kind == resp.KindError {
				text = r.V.Str
			}
			return sentinel.PingReplied{Instance: a.Instance, Reply: text}
		}, d.core.MapCommand(a.Instance, "PING"))
	case sentinel.SendInfo:
		d.send(a.Instance, func(r Reply) sentinel.Event {
			ok := r.V.Kind == resp.KindBulk || r.V.Kind == resp.KindVerbatim
			return sentinel.InfoReceived{Instance: a.Instance, Info: r.V.Str, Failed: !ok}
		}, d.core.MapCommand(a.Instance, "INFO"))
	case sentinel.PublishHello:
		d.send(a.Instance, func(r Reply) sentinel.Event {
			return sentinel.PublishReplied{Instance: a.Instance, OK: !r.V.IsError()}
		}, d.core.MapCommand(a.Instance, "PUBLISH"), sentinel.HelloChannel, a.Payload)
	case sentinel.AskMasterDown:
		d.send(a.Sentinel, func(r Reply) sentinel.Event {
			ev := sentinel.IsMasterDownReplied{Sentinel: a.Sentinel, Invalid: true}
			v := r.V
			if v.Kind == resp.KindArray && len(v.Elems) == 3 && v.Elems[0].Kind == resp.KindInt &&
				v.Elems[1].Kind == resp.KindBulk && v.Elems[2].Kind == resp.KindInt {
				ev.Invalid = false
				ev.Down = v.Elems[0].Int == 1
				ev.Leader = v.Elems[1].Str
				ev.LeaderEpoch = uint64(v.Elems[2].Int)
			}
			return ev
		}, d.core.MapCommand(a.Sentinel, "SENTINEL"), "is-master-down-by-addr", a.MasterIP,
			strconv.Itoa(a.MasterPort), strconv.FormatUint(a.Epoch, 10), a.RunID)
	case sentinel.SendReplicaOf:
		d.sendReplicaOf(a)
	case sentinel.SendAckSeen:
		d.send(a.Instance, func(Reply) sentinel.Event { return sentinel.CommandReplied{Instance: a.Instance} },
			d.core.MapCommand(a.Instance, "REPLCONF"), "sentinel-seen", strconv.FormatUint(a.Seq, 10), "sentinel-id", a.RunID)
	case sentinel.SendScriptKill:
		d.send(a.Instance, func(Reply) sentinel.Event { return sentinel.CommandReplied{Instance: a.Instance} },
			d.core.MapCommand(a.Instance, "SCRIPT"), "KILL")
	case sentinel.SendFailover:
		args := []string{d.core.MapCommand(a.Instance, "FAILOVER"), "ABORT"}
		if !a.Abort {
			args = []string{args[0], "TO", a.Host, strconv.Itoa(a.Port), "TIMEOUT", strconv.FormatInt(a.TimeoutMs, 10)}
		}
		d.send(a.Instance, func(r Reply) sentinel.Event {
			ev := sentinel.FailoverReplied{Instance: a.Instance}
			if r.V.IsError() {
				ev.Err = r.V.Str
			}
			return ev
		}, args...)
	case sentinel.RewriteConfig:
		_ = d.flush()
	case sentinel.Notify:
		d.notify(a.Level, a.Type, a.Message)
	case sentinel.Log:
		d.logLine(a.Level, a.Message)
	case sentinel.RunScript:
		d.scripts.schedule(a.Path, a.Args)
	case sentinel.Crash:
		// sentinelSimFailureCrash.
		d.log.Warn().Str("reason", a.Reason).Msg("Sentinel CRASH because of SENTINEL simulate-failure")
		if d.opts.Exit != nil {
			d.opts.Exit(99)
		} else {
			os.Exit(99)
		}
	}
}

// notify is sentinelEvent's log and pub/sub part.
func (d *Daemon) notify(level sentinel.Level, typ, msg string) {
	d.failovers.event(typ, msg, nowMs())
	if ev := d.logEvent(level); ev != nil {
		ev.Str("event", typ).Msg(typ + " " + msg)
	}
	if level != sentinel.LevelDebug {
		d.hub.publish(typ, msg)
	}
}

// logLine is a serverLog line of sentinel.c that is not an event.
func (d *Daemon) logLine(level sentinel.Level, msg string) {
	if ev := d.logEvent(level); ev != nil {
		ev.Msg(msg)
	}
}

// logEvent maps a sentinel level to the logger's (LL_DEBUG is Trace, as in
// internal/logging.Level).
func (d *Daemon) logEvent(level sentinel.Level) *zerolog.Event {
	switch level {
	case sentinel.LevelWarning:
		return d.log.Warn()
	case sentinel.LevelNotice:
		return d.log.Info()
	case sentinel.LevelVerbose:
		return d.log.Debug()
	}
	return d.log.Trace()
}

func (d *Daemon) linkOf(ref sentinel.Ref) *ilink {
	il := d.links[ref.Link]
	if il == nil {
		il = &ilink{}
		d.links[ref.Link] = il
	}
	return il
}

// send queues a command on the instance's command connection; conv turns
// the reply into the event to deliver (on the loop, if the connection is
// still the current one).
func (d *Daemon) send(ref sentinel.Ref, conv func(Reply) sentinel.Event, args ...string) {
	il := d.links[ref.Link]
	if il == nil || il.cc == nil {
		return
	}
	c := il.cc
	cb := func(r Reply) {
		if r.Err != nil {
			return // the close is reported by onClose
		}
		d.post(func() {
			if cur := d.links[ref.Link]; cur == nil || cur.cc != c {
				return
			}
			d.step(conv(r))
		})
	}
	c.send(cb, args...)
}

// send writes a command, or queues it while the connection is dialing.
func (c *iconn) send(cb func(Reply), args ...string) {
	if c.l == nil {
		c.queued = append(c.queued, queuedCmd{cb, args})
		return
	}
	c.l.Send(cb, args...)
}

// sendReplicaOf is sentinelSendSlaveOf: the MULTI ... EXEC transaction,
// replies discarded except EXEC's; a vigil-server also gets CONFIG SET
// master-config-epoch (the fencing stamp) before CONFIG REWRITE.
func (d *Daemon) sendReplicaOf(a sentinel.SendReplicaOf) {
	il := d.links[a.Instance.Link]
	if il == nil || il.cc == nil {
		return
	}
	m := func(cmd string) string { return d.core.MapCommand(a.Instance, cmd) }
	l := il.cc
	l.send(nil, m("MULTI"))
	if a.Host == "" {
		l.send(nil, m("SLAVEOF"), "NO", "ONE")
	} else {
		l.send(nil, m("SLAVEOF"), a.Host, strconv.Itoa(a.Port))
	}
	// Vigil: stamp a vigil-server with the epoch (sentinel/fence.go).
	if e, ok := d.core.StampEpoch(a.Instance); ok {
		l.send(nil, m("CONFIG"), "SET", "master-config-epoch", strconv.FormatUint(e, 10))
	}
	l.send(nil, m("CONFIG"), "REWRITE")
	l.send(nil, m("CLIENT"), "KILL", "TYPE", "normal")
	l.send(nil, m("CLIENT"), "KILL", "TYPE", "pubsub")
	d.send(a.Instance, func(Reply) sentinel.Event { return sentinel.CommandReplied{Instance: a.Instance} }, m("EXEC"))
}

func (d *Daemon) disconnect(ref sentinel.Ref, cmd, pubsub bool) {
	il := d.links[ref.Link]
	if il == nil {
		return
	}
	if cmd && il.cc != nil {
		if il.cc.l != nil {
			il.cc.l.Close(nil)
		}
		il.cc = nil
	}
	if pubsub && il.pc != nil {
		if il.pc.l != nil {
			il.pc.l.Close(nil)
		}
		il.pc = nil
	}
	if il.cc == nil && il.pc == nil {
		delete(d.links, ref.Link)
	}
}

// connect is the dial half of sentinelReconnectInstance. The dial runs on
// its own goroutine; AUTH and CLIENT SETNAME (and SUBSCRIBE on the pub/sub
// connection) are queued before LinkConnected is reported.
func (d *Daemon) connect(a sentinel.Connect) {
	il := d.linkOf(a.Instance)
	user, pass := d.core.Auth(a.Instance)
	if a.Instance.Kind == sentinel.KindSentinel && pass == "" {
		pass = d.st.Server.RequirePass
	}
	id8 := d.core.MyID()
	if len(id8) > 8 {
		id8 = id8[:8]
	}
	m := func(cmd string) string { return d.core.MapCommand(a.Instance, cmd) }
	var prelude [][]string
	if pass != "" {
		if user != "" {
			prelude = append(prelude, []string{m("AUTH"), user, pass})
		} else {
			prelude = append(prelude, []string{m("AUTH"), pass})
		}
	}
	// sentinelReconnectInstance connects to the resolved address.
	host := a.Instance.Addr.Resolved
	if host == "" {
		host = a.Instance.Addr.IP
	}
	addr := net.JoinHostPort(host, strconv.Itoa(a.Instance.Addr.Port))
	if a.Cmd {
		c := &iconn{}
		il.cc = c
		// The source address the kernel picks for addr (a UDP "connect"
		// sends nothing), which getsockname gives Redis on the connecting
		// socket.
		if u, err := net.Dial("udp", addr); err == nil {
			if ta, ok := u.LocalAddr().(*net.UDPAddr); ok {
				ref, ip := a.Instance, ta.IP.String()
				d.post(func() {
					if d.current(ref, sentinel.ConnCmd, c) {
						d.step(sentinel.LinkLocalIP{Instance: ref, LocalIP: ip})
					}
				})
			}
			u.Close()
		}
		p := append(append([][]string(nil), prelude...), []string{m("CLIENT"), "SETNAME", "sentinel-" + id8 + "-cmd"})
		go d.dial(a.Instance, sentinel.ConnCmd, c, addr, p, nil)
	}
	if a.PubSub {
		c := &iconn{}
		il.pc = c
		p := append(append([][]string(nil), prelude...), []string{m("CLIENT"), "SETNAME", "sentinel-" + id8 + "-pubsub"})
		sub := []string{m("SUBSCRIBE"), sentinel.HelloChannel}
		go d.dial(a.Instance, sentinel.ConnPubSub, c, addr, p, sub)
	}
}

func (d *Daemon) current(ref sentinel.Ref, kind sentinel.Conn, c *iconn) bool {
	il := d.links[ref.Link]
	if il == nil {
		return false
	}
	if kind == sentinel.ConnCmd {
		return il.cc == c
	}
	return il.pc == c
}

func (d *Daemon) dial(ref sentinel.Ref, kind sentinel.Conn, c *iconn, addr string, prelude [][]string, sub []string) {
	var onPush func(resp.Value)
	if kind == sentinel.ConnPubSub {
		onPush = func(v resp.Value) {
			if (v.Kind != resp.KindArray && v.Kind != resp.KindPush) || len(v.Elems) != 3 {
				return
			}
			for _, e := range v.Elems {
				if e.Kind != resp.KindBulk {
					return
				}
			}
			if v.Elems[0].Str != "message" {
				return
			}
			payload := v.Elems[2].Str
			d.post(func() {
				if d.current(ref, kind, c) {
					d.step(sentinel.HelloReceived{Instance: ref, Payload: payload})
				}
			})
		}
	}
	onClose := func(error) {
		d.post(func() {
			if d.current(ref, kind, c) && c.l != nil {
				d.dropConn(ref, kind)
				d.step(sentinel.LinkDisconnected{Instance: ref, Conn: kind})
			}
		})
	}
	l, err := dialLink(addr, d.opts.DialTimeout, d.linkTLS(), onPush, onClose)
	if err != nil {
		d.post(func() {
			if d.current(ref, kind, c) {
				d.dropConn(ref, kind)
				d.step(sentinel.LinkDisconnected{Instance: ref, Conn: kind})
			}
		})
		return
	}
	// Each AUTH/SETNAME reply settles one pending command of the link
	// (sentinelDiscardReplyCallback).
	prReplied := func(r Reply) {
		if r.Err != nil {
			return // the close is reported by onClose
		}
		d.post(func() {
			if d.current(ref, kind, c) {
				d.step(sentinel.PreludeReplied{Instance: ref, Conn: kind})
			}
		})
	}
	for _, p := range prelude {
		l.Send(prReplied, p...)
	}
	if sub != nil {
		l.SendNoReply(sub...)
	}
	localIP := ""
	if ta, ok := l.conn.LocalAddr().(*net.TCPAddr); ok {
		localIP = ta.IP.String()
	}
	d.post(func() {
		if !d.current(ref, kind, c) {
			l.Close(nil)
			return
		}
		c.l = l
		for _, q := range c.queued {
			l.Send(q.cb, q.args...)
		}
		c.queued = nil
		if l.isClosed() {
			d.dropConn(ref, kind)
			d.step(sentinel.LinkDisconnected{Instance: ref, Conn: kind})
			return
		}
		d.step(sentinel.LinkConnected{Instance: ref, Conn: kind, LocalIP: localIP})
	})
}

func (d *Daemon) dropConn(ref sentinel.Ref, kind sentinel.Conn) {
	il := d.links[ref.Link]
	if il == nil {
		return
	}
	if kind == sentinel.ConnCmd {
		il.cc = nil
	} else {
		il.pc = nil
	}
	if il.cc == nil && il.pc == nil {
		delete(d.links, ref.Link)
	}
}
