package sentinel

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

// connect answers the Connect actions in acts with LinkConnected and returns
// the actions those produce.
func connect(c *Core, now int64, acts []Action) []Action {
	var out []Action
	for _, a := range acts {
		if cn, ok := a.(Connect); ok {
			if cn.Cmd {
				out = append(out, c.Step(now, LinkConnected{Instance: cn.Instance, Conn: ConnCmd, LocalIP: "127.0.0.1"})...)
			}
			if cn.PubSub {
				out = append(out, c.Step(now, LinkConnected{Instance: cn.Instance, Conn: ConnPubSub})...)
			}
		}
	}
	return out
}

func TestPeriodicCommands(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	acts := c.Step(t0+100, Ticked{})
	cn, ok := find[Connect](acts)
	if !ok || !cn.Cmd || !cn.PubSub || cn.Instance.Addr != (Addr{IP: "127.0.0.1", Port: 6379, Resolved: "127.0.0.1"}) || cn.Instance.Kind != KindMaster {
		t.Fatalf("first tick: %#v", acts)
	}
	// The PING and the INFO are queued on the connections being opened.
	if _, ok := find[SendPing](acts); !ok {
		t.Fatalf("PING with the Connect: %#v", acts)
	}
	if _, ok := find[SendInfo](acts); !ok {
		t.Fatalf("INFO with the Connect: %#v", acts)
	}
	connect(c, t0+101, acts)
	acts = c.Step(t0+200, Ticked{})
	if _, ok := find[SendInfo](acts); !ok {
		t.Errorf("INFO when never received: %#v", acts)
	}
	c.Step(t0+201, InfoReceived{Instance: c.ref(m), Info: "run_id:" + strings.Repeat("1", 40) + "\r\nrole:master\r\n"})
	c.Step(t0+202, PingReplied{Instance: c.ref(m), Reply: "PONG"})
	// Nothing due until 1 s after the PONG; INFO every 10 s; hello every 2 s.
	var pings, infos, hellos []int64
	for now := t0 + 300; now <= t0+12_300; now += 100 {
		for _, a := range c.Step(now, Ticked{}) {
			switch a := a.(type) {
			case SendPing:
				pings = append(pings, now-t0)
				c.Step(now+1, PingReplied{Instance: a.Instance, Reply: "PONG"})
			case SendInfo:
				infos = append(infos, now-t0)
				c.Step(now+1, InfoReceived{Instance: a.Instance, Info: "role:master\r\n"})
			case PublishHello:
				hellos = append(hellos, now-t0)
				want := "127.0.0.1,26379," + idA + ",0,mymaster,127.0.0.1,6379,0"
				if a.Payload != want {
					t.Errorf("hello %q, want %q", a.Payload, want)
				}
				c.Step(now+1, PublishReplied{Instance: a.Instance, OK: true})
			}
		}
	}
	if len(pings) != 11 || pings[0] != 1300 {
		t.Errorf("pings at %v", pings)
	}
	if !reflect.DeepEqual(infos, []int64{10300}) {
		t.Errorf("INFO at %v", infos)
	}
	// last_pub_time is the time of the reply, so with 100 ms ticks: every 2.1 s.
	if !reflect.DeepEqual(hellos, []int64{2100, 4200, 6300, 8400, 10500}) {
		t.Errorf("hellos at %v", hellos)
	}
}

func TestPingPeriodFollowsDownAfter(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	c.Step(t0, SetRequested{Name: "mymaster", Args: []string{"down-after-milliseconds", "400"}})
	connect(c, t0+1, c.Step(t0+1, Ticked{}))
	c.Step(t0+2, PingReplied{Instance: c.ref(m), Reply: "PONG"})
	var pings []int64
	for now := t0 + 100; now <= t0+1500; now += 100 {
		for _, a := range c.Step(now, Ticked{}) {
			if p, ok := a.(SendPing); ok {
				pings = append(pings, now-t0)
				c.Step(now, PingReplied{Instance: p.Instance, Reply: "PONG"})
			}
		}
	}
	if !reflect.DeepEqual(pings, []int64{500, 1000, 1500}) {
		t.Errorf("pings at %v (period min(down-after, 1000) = 400)", pings)
	}
}

func TestSDownODown(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	c.Step(t0+2, HelloReceived{Payload: hello("127.0.0.1", 26380, idB, 0, "127.0.0.1", 6379, 0)})
	s := m.sentinels[idB]
	connect(c, t0+10, c.Step(t0+10, Ticked{}))
	c.Step(t0+11, PingReplied{Instance: c.ref(m), Reply: "PONG"})
	// The master stops answering: ping at 1100 pending from then on.
	var sdownAt int64
	var ask AskMasterDown
	for now := t0 + 100; now <= t0+7000 && sdownAt == 0; now += 100 {
		acts := c.Step(now, Ticked{})
		if hasNotify(acts, "+sdown master mymaster") {
			sdownAt = now - t0
			a, ok := find[AskMasterDown](acts)
			if !ok || a.RunID != "*" || a.MasterPort != 6379 || a.Sentinel.Name != idB {
				t.Errorf("no immediate ask on SDOWN: %#v", acts)
			}
			ask = a
		}
		// MASTERDOWN/LOADING-style replies from the sentinel link keep it up.
		for _, a := range acts {
			if p, ok := a.(SendPing); ok && p.Instance.Kind == KindSentinel {
				c.Step(now, PingReplied{Instance: p.Instance, Reply: "PONG"})
			}
		}
	}
	// The PONG at 11 ms answered the connect PING; the next PING (1100 ms)
	// is never answered: SDOWN at the first tick more than 5000 ms later.
	if sdownAt != 6200 {
		t.Fatalf("SDOWN at %d", sdownAt)
	}
	c.Step(t0+6201, IsMasterDownReplied{Sentinel: ask.Sentinel, Down: true, Leader: "*"})
	if s.flags&fMasterDown == 0 {
		t.Fatal("master_down not recorded")
	}
	acts := c.Step(t0+6300, Ticked{})
	want := []string{
		"+odown master mymaster 127.0.0.1 6379 #quorum 2/2",
		"+new-epoch 1",
		"+try-failover master mymaster 127.0.0.1 6379",
		"+vote-for-leader " + idA + " 1",
	}
	if got := notifies(acts); len(got) < 4 || !reflect.DeepEqual(got[:4], want) {
		t.Errorf("got %q", got)
	}
	a, ok := find[AskMasterDown](acts)
	if !ok || a.RunID != idA || a.Epoch != 1 {
		t.Errorf("forced vote request: %#v", a)
	}
	// A PONG ends SDOWN; ODOWN goes with it.
	c.Step(t0+6301, PingReplied{Instance: c.ref(m), Reply: "PONG"})
	acts = c.Step(t0+6400, Ticked{})
	if !hasNotify(acts, "-sdown master") || !hasNotify(acts, "-odown master") {
		t.Errorf("got %q", notifies(acts))
	}
}

func TestPingReplyRule(t *testing.T) {
	for reply, valid := range map[string]bool{
		"PONG": true, "LOADING Redis is loading": true, "MASTERDOWN Link with MASTER is down": true,
		"NOAUTH Authentication required.": false, "ERR x": false, "": false, "MISCONF x": false,
	} {
		c := newCore(t)
		m := c.masters["mymaster"]
		connect(c, t0+1, c.Step(t0+1, Ticked{}))
		c.Step(t0+3000, PingReplied{Instance: c.ref(m), Reply: reply})
		if got := m.link.actPing == 0 && m.link.lastAvail == t0+3000; got != valid {
			t.Errorf("%q: valid=%v, want %v", reply, got, valid)
		}
		if m.link.lastPong != t0+3000 {
			t.Errorf("%q: any reply updates last_pong_time", reply)
		}
	}
}

func TestTilt(t *testing.T) {
	c := newCore(t)
	c.Step(t0+100, Ticked{})
	acts := c.Step(t0+2101, Ticked{}) // 2001 ms gap
	if got := notifies(acts); len(got) != 1 || got[0] != "+tilt #tilt mode entered" {
		t.Fatalf("got %q", got)
	}
	if on, since := c.Tilt(); !on || since != t0+2101 {
		t.Fatal("not in TILT")
	}
	if !strings.Contains(c.InfoSection(t0+5101, 0, 0), "sentinel_tilt:1\r\nsentinel_tilt_since_seconds:3\r\n") {
		t.Errorf("info: %q", c.InfoSection(t0+5101, 0, 0))
	}
	var out int64
	for now := t0 + 2200; now < t0+40000 && out == 0; now += 100 {
		acts := c.Step(now, Ticked{})
		if hasNotify(acts, "+sdown") && !hasNotify(acts, "-tilt") {
			t.Fatalf("SDOWN judged in TILT at %d", now-t0)
		}
		if hasNotify(acts, "-tilt #tilt mode exited") {
			out = now - t0
		}
	}
	if out != 32200 {
		t.Errorf("-tilt at %d, want 30 s after entering", out)
	}
	// Backwards clock.
	if acts := c.Step(t0+32000, Ticked{}); !hasNotify(acts, "+tilt") {
		t.Error("negative delta must enter TILT")
	}
}

func TestConfigRoundTrip(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	c.Step(t0+1, InfoReceived{Instance: c.ref(m), Info: masterInfo})
	c.Step(t0+2, HelloReceived{Payload: hello("127.0.0.1", 26380, idB, 4, "127.0.0.1", 6379, 0)})
	c.Step(t0+3, SetRequested{Name: "mymaster", Args: []string{"rename-command", "CONFIG", "XCONFIG", "auth-pass", "s3cret", "parallel-syncs", "3"}})
	c.Step(t0+4, IsMasterDownAsked{IP: "127.0.0.1", Port: 6379, Epoch: 4, RunID: idB})
	cfg := c.Config()
	if cfg.CurrentEpoch != 4 || cfg.Masters[0].LeaderEpoch != 4 || len(cfg.Masters[0].KnownReplicas) != 2 ||
		len(cfg.Masters[0].KnownSentinels) != 1 || cfg.Masters[0].ParallelSyncs != 3 || cfg.Masters[0].AuthPass != "s3cret" {
		t.Fatalf("snapshot: %+v", cfg)
	}
	c2 := New(Options{Port: 26379}, rand.New(rand.NewSource(99)))
	acts := c2.Step(t0, ConfigLoaded{Config: cfg})
	if r := last(acts).(Reply); r.Kind != ReplyOK {
		t.Fatal(r)
	}
	if count[RewriteConfig](acts) != 0 {
		t.Error("loading a config with a myid must not rewrite it")
	}
	if got := c2.Config(); !reflect.DeepEqual(got, cfg) {
		t.Errorf("round trip:\n got %+v\nwant %+v", got, cfg)
	}
	if c2.MapCommand(Ref{Master: "mymaster"}, "config") != "XCONFIG" || c2.MapCommand(Ref{Master: "mymaster"}, "PING") != "PING" {
		t.Error("rename-command")
	}
	if u, p := c2.Auth(Ref{Master: "mymaster", Kind: KindReplica}); u != "" || p != "s3cret" {
		t.Error("auth")
	}
	// Bad configs.
	bad := NewConfig()
	bad.MyID = "short"
	if r := last(New(Options{}, rand.New(rand.NewSource(1))).Step(t0, ConfigLoaded{Config: bad})).(Reply); r.Text != "ERR Malformed Sentinel id in myid option." {
		t.Errorf("got %+v", r)
	}
}

func TestGeneratedIDIsDeterministic(t *testing.T) {
	gen := func() (string, []Action) {
		c := New(Options{}, rand.New(rand.NewSource(42)))
		acts := c.Step(t0, ConfigLoaded{Config: NewConfig()})
		return c.MyID(), acts
	}
	id1, acts := gen()
	id2, _ := gen()
	if id1 != id2 || len(id1) != RunIDSize || strings.Trim(id1, "0123456789abcdef") != "" {
		t.Fatalf("ids %q %q", id1, id2)
	}
	if count[RewriteConfig](acts) != 1 {
		t.Error("a new myid must be persisted")
	}
	c := New(Options{}, rand.New(rand.NewSource(7)))
	for i := 0; i < 100; i++ {
		if d := c.TickDelay(); d < 52 || d > 100 {
			t.Fatalf("tick delay %d", d)
		}
	}
}

func TestClientCommands(t *testing.T) {
	c := newCore(t)
	reply := func(ev Event) Reply {
		t.Helper()
		r, ok := last(c.Step(t0+1, ev)).(Reply)
		if !ok {
			t.Fatalf("%#v: no reply", ev)
		}
		return r
	}
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{MonitorRequested{"x", "127.0.0.1", 1, 0}, "ERR Quorum must be 1 or greater."},
		{MonitorRequested{"x", "not-an-ip", 1, 1}, "ERR Invalid IP address or hostname specified"},
		{MonitorRequested{"x", "127.0.0.1", 70000, 1}, "ERR Invalid port number."},
		{MonitorRequested{"mymaster", "127.0.0.1", 1, 1}, "ERR Duplicate master name."},
		{RemoveRequested{"nope"}, "ERR No such master with that name"},
		{FailoverRequested{Name: "nope"}, "ERR No such master with that name"},
		{FailoverRequested{Name: "mymaster"}, "NOGOODSLAVE No suitable replica to promote"},
		{SetRequested{"mymaster", []string{"quorum", "0"}}, "ERR Invalid argument '0' for SENTINEL SET 'quorum'"},
		{SetRequested{"mymaster", []string{"bogus", "1"}}, "ERR Unknown option or number of arguments for SENTINEL SET 'bogus'"},
		{SetRequested{"mymaster", []string{"quorum"}}, "ERR Unknown option or number of arguments for SENTINEL SET 'quorum'"},
		{SetRequested{"mymaster", []string{"notification-script", "/bin/true"}}, errScriptsDenied[:len(errScriptsDenied)]},
		{ConfigSetRequested{"announce-port", "x"}, "ERR Invalid value 'x' to SENTINEL CONFIG SET 'announce-port'"},
		{ConfigSetRequested{"bogus", "x"}, "ERR Invalid argument 'bogus' to SENTINEL CONFIG SET"},
		{DebugRequested{[]string{"info-period", "0"}}, "ERR Invalid argument '0' for SENTINEL DEBUG 'info-period'"},
	} {
		if r := reply(tc.ev); r.Kind != ReplyError || r.Text != tc.want {
			t.Errorf("%#v: got %+v, want %q", tc.ev, r, tc.want)
		}
	}
	acts := c.Step(t0+2, SetRequested{"mymaster", []string{"auth-pass", "pw", "quorum", "3", "rename-command", "SLAVEOF", "X"}})
	want := []string{
		"+set master mymaster 127.0.0.1 6379 auth-pass ******",
		"+set master mymaster 127.0.0.1 6379 quorum 3",
		"+set master mymaster 127.0.0.1 6379 rename-command SLAVEOF X",
	}
	if got := notifies(acts); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if r := last(acts).(Reply); r.Kind != ReplyOK || count[RewriteConfig](acts) != 1 {
		t.Errorf("SET reply %+v", acts)
	}
	acts = c.Step(t0+3, MonitorRequested{"other", "10.0.0.9", 7000, 1})
	if !hasNotify(acts, "+monitor master other 10.0.0.9 7000 quorum 1") || count[RewriteConfig](acts) != 1 {
		t.Errorf("monitor: %#v", acts)
	}
	if !reflect.DeepEqual(c.MasterNames(), []string{"mymaster", "other"}) {
		t.Error(c.MasterNames())
	}
	wantInfo := "# Sentinel\r\nsentinel_masters:2\r\nsentinel_tilt:0\r\nsentinel_tilt_since_seconds:-1\r\n" +
		"sentinel_running_scripts:0\r\nsentinel_scripts_queue_length:0\r\nsentinel_simulate_failure_flags:0\r\n" +
		"master0:name=mymaster,status=ok,address=127.0.0.1:6379,slaves=0,sentinels=1\r\n" +
		"master1:name=other,status=ok,address=10.0.0.9:7000,slaves=0,sentinels=1\r\n"
	if got := c.InfoSection(t0+3, 0, 0); got != wantInfo {
		t.Errorf("info:\n%q\nwant\n%q", got, wantInfo)
	}
	acts = c.Step(t0+4, RemoveRequested{"other"})
	if !hasNotify(acts, "-monitor master other 10.0.0.9 7000") {
		t.Errorf("remove: %q", notifies(acts))
	}
	if r := reply(ResetRequested{"*"}); r.Kind != ReplyInteger || r.Int != 1 {
		t.Errorf("reset: %+v", r)
	}
	if got := c.ConfigGet("announce-*"); len(got) != 3 || got[0].Name != "announce-hostnames" {
		t.Errorf("config get: %v", got)
	}
	if d := c.Debug(); len(d) != 13 || d[0] != (Field{"INFO-PERIOD", "10000"}) || d[12] != (Field{"SCRIPT-RETRY-DELAY", "30000"}) {
		t.Errorf("debug: %v", d)
	}
}

func TestQueries(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	c.Step(t0+1, InfoReceived{Instance: c.ref(m), Info: masterInfo})
	c.Step(t0+2, HelloReceived{Payload: hello("127.0.0.1", 26380, idB, 0, "127.0.0.1", 6379, 0)})
	f, ok := c.Master(t0+1000, "mymaster")
	if !ok {
		t.Fatal("no master")
	}
	var names []string
	for _, x := range f {
		names = append(names, x.Name)
	}
	want := "name ip port runid flags link-pending-commands link-refcount last-ping-sent last-ok-ping-reply " +
		"last-ping-reply down-after-milliseconds info-refresh role-reported role-reported-time config-epoch " +
		"num-slaves num-other-sentinels quorum failover-timeout parallel-syncs"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("fields:\n%s\nwant\n%s", got, want)
	}
	if f[4].Value != "master,disconnected" || f[16].Value != "1" || f[15].Value != "2" {
		t.Errorf("values: %v", f)
	}
	reps, _ := c.Replicas(t0+1000, "mymaster")
	if reps[0][4].Value != "slave,disconnected" || reps[0][0].Value != "10.0.0.2:6380" {
		t.Errorf("replica: %v", reps[0])
	}
	sents, _ := c.Sentinels(t0+1000, "mymaster")
	last := sents[0][len(sents[0])-3:]
	if !reflect.DeepEqual(last, []Field{{"last-hello-message", "998"}, {"voted-leader", "?"}, {"voted-leader-epoch", "0"}}) {
		t.Errorf("sentinel: %v", last)
	}
	if text, ok, found := c.CKQuorum("mymaster"); !ok || !found || text != "OK 2 usable Sentinels. Quorum and failover authorization can be reached" {
		t.Errorf("ckquorum %q %v", text, ok)
	}
	m.quorum = 3
	m.sentinels[idB].flags |= fSDown
	want2 := "NOQUORUM 1 usable Sentinels. Not enough available Sentinels to reach the specified quorum for this master. " +
		"Not enough available Sentinels to reach the majority and authorize a failover"
	if text, ok, _ := c.CKQuorum("mymaster"); ok || text != want2 {
		t.Errorf("ckquorum %q", text)
	}
	if _, ok := c.MasterAddr("nope"); ok {
		t.Error("unknown master")
	}
	ic := c.InfoCache(t0+1000, nil)
	if len(ic) != 1 || len(ic[0].Entries) != 3 || ic[0].Entries[0].Info != masterInfo || ic[0].Entries[1].HasInfo {
		t.Errorf("info cache %+v", ic)
	}
}

func TestNotificationScript(t *testing.T) {
	c := newCore(t)
	c.denyScriptsReconfig = false
	c.Step(t0, SetRequested{"mymaster", []string{"notification-script", "/n.sh", "client-reconfig-script", "/r.sh"}})
	acts := c.Step(t0+1, HelloReceived{Payload: hello("127.0.0.1", 26380, idB, 3, "127.0.0.1", 6380, 3)})
	var runs []string
	for _, a := range acts {
		if r, ok := a.(RunScript); ok {
			runs = append(runs, r.Path+" "+strings.Join(r.Args, " "))
		}
	}
	want := []string{
		"/n.sh +new-epoch 3",
		"/n.sh +config-update-from sentinel " + idB + " 127.0.0.1 26380 @ mymaster 127.0.0.1 6379",
		"/n.sh +switch-master mymaster 127.0.0.1 6379 127.0.0.1 6380",
		"/r.sh mymaster observer start 127.0.0.1 6379 127.0.0.1 6380",
	}
	if !reflect.DeepEqual(runs, want) {
		t.Errorf("got %q", runs)
	}
}

// TestStaleRepliesIgnored: replies for removed instances only settle the
// pending count.
func TestStaleRepliesIgnored(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	c.Step(t0+1, InfoReceived{Instance: c.ref(m), Info: masterInfo})
	r := m.replicas["10.0.0.2:6380"]
	old := c.ref(r)
	c.Step(t0+2, ResetRequested{"*"})
	acts := c.Step(t0+3, InfoReceived{Instance: old, Info: replicaInfo})
	acts = append(acts, c.Step(t0+3, PingReplied{Instance: old, Reply: "PONG"})...)
	acts = append(acts, c.Step(t0+3, LinkConnected{Instance: old, Conn: ConnCmd})...)
	if len(acts) != 0 || len(m.replicas) != 0 {
		t.Errorf("stale reply acted on: %#v", acts)
	}
}
