package sentinel

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
)

const (
	liveReplica = "10.0.0.2:6380"
	deadReplica = "10.0.0.9:6380"
	liveSent    = "10.0.0.5:26379"
	deadSent    = "10.0.0.6:26379"
)

// forgetCore is a core monitoring mymaster at 10.0.0.1:6379 (down-after 5 s,
// forget-after 20 s unless changed) that knows, from its config, two
// replicas and two sentinels.
func forgetCore(t *testing.T, mutate func(*MasterConfig)) *Core {
	t.Helper()
	c := New(Options{Port: 26379}, rand.New(rand.NewSource(1)))
	cfg := NewConfig()
	cfg.MyID = idA
	mc := MasterConfig{Name: "mymaster", IP: "10.0.0.1", Port: 6379, Quorum: 2, DownAfter: 5000,
		FailoverTimeout: 60000, ForgetAfter: 20000,
		KnownReplicas: []Addr{{IP: "10.0.0.2", Port: 6380}, {IP: "10.0.0.9", Port: 6380}},
		KnownSentinels: []KnownSentinel{
			{Addr: Addr{IP: "10.0.0.5", Port: 26379}, RunID: idB},
			{Addr: Addr{IP: "10.0.0.6", Port: 26379}, RunID: idC},
		}}
	if mutate != nil {
		mutate(&mc)
	}
	cfg.Masters = []MasterConfig{mc}
	if r, ok := last(c.Step(t0, ConfigLoaded{Config: cfg})).(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("config load: %v", r)
	}
	return c
}

// masterInfoExtra is added to the master's INFO replies by drive.
var masterInfoExtra string

// drive ticks c every 100 ms over (from, to] and answers its requests as a
// network where alive(now, addr) says which instances answer: connections
// to them open, PINGs get PONG, INFO a reply; the others refuse
// connections. It returns every action, and the time of each Notify.
func drive(c *Core, from, to int64, alive func(now int64, addr string) bool) ([]Action, map[string]int64) {
	var all []Action
	when := map[string]int64{}
	var handle func(now int64, acts []Action)
	handle = func(now int64, acts []Action) {
		for _, a := range acts {
			all = append(all, a)
			switch a := a.(type) {
			case Notify:
				if _, ok := when[a.Type+" "+a.Message]; !ok {
					when[a.Type+" "+a.Message] = now
				}
			case Connect:
				up := alive(now, a.Instance.Addr.String())
				for _, cn := range []struct {
					want bool
					conn Conn
				}{{a.Cmd, ConnCmd}, {a.PubSub, ConnPubSub}} {
					if !cn.want {
						continue
					}
					if up {
						handle(now, c.Step(now, LinkConnected{Instance: a.Instance, Conn: cn.conn, LocalIP: "10.0.0.100"}))
					} else {
						handle(now, c.Step(now, LinkDisconnected{Instance: a.Instance, Conn: cn.conn}))
					}
				}
			case SendPing:
				if alive(now, a.Instance.Addr.String()) {
					handle(now, c.Step(now, PingReplied{Instance: a.Instance, Reply: "PONG"}))
				}
			case SendInfo:
				if alive(now, a.Instance.Addr.String()) {
					info := "role:master\r\n" + masterInfoExtra
					if a.Instance.Kind == KindReplica {
						info = "role:slave\r\nmaster_host:10.0.0.1\r\nmaster_port:6379\r\nmaster_link_status:up\r\n"
					}
					handle(now, c.Step(now, InfoReceived{Instance: a.Instance, Info: info}))
				}
			case PublishHello:
				if alive(now, a.Instance.Addr.String()) {
					handle(now, c.Step(now, PublishReplied{Instance: a.Instance, OK: true}))
				}
			}
		}
	}
	for now := from + 100; now <= to; now += 100 {
		handle(now, c.Step(now, Ticked{}))
	}
	return all, when
}

func knownReplicas(c *Core) []string {
	var out []string
	for _, r := range c.Config().Masters[0].KnownReplicas {
		out = append(out, r.String())
	}
	return out
}

func knownSentinels(c *Core) []string {
	var out []string
	for _, s := range c.Config().Masters[0].KnownSentinels {
		out = append(out, s.Addr.String())
	}
	return out
}

func allBut(dead ...string) func(int64, string) bool {
	return func(_ int64, addr string) bool {
		for _, d := range dead {
			if addr == d {
				return false
			}
		}
		return true
	}
}

func TestForgetGone(t *testing.T) {
	c := forgetCore(t, nil)
	_, when := drive(c, t0, t0+19_900, allBut(deadReplica, deadSent))
	if got := knownReplicas(c); len(got) != 2 {
		t.Fatalf("before forget-after: known replicas %v", got)
	}
	if got := knownSentinels(c); len(got) != 2 {
		t.Fatalf("before forget-after: known sentinels %v", got)
	}
	for ev := range when {
		if !strings.HasPrefix(ev, "+sdown ") {
			t.Errorf("event before forget-after: %s", ev)
		}
	}

	acts, when := drive(c, t0+19_900, t0+40_000, allBut(deadReplica, deadSent))
	wantRep := "-slave slave 10.0.0.9:6380 10.0.0.9 6380 @ mymaster 10.0.0.1 6379 #unreachable for 20100 ms"
	wantSen := "-sentinel sentinel " + idC + " 10.0.0.6 26379 @ mymaster 10.0.0.1 6379 #unreachable for 20100 ms"
	// Never answered: counted from the config load (t0); first tick past it.
	if at, ok := when[wantRep]; !ok || at != t0+20_100 {
		t.Errorf("-slave at %d (%v), want %d; events %v", at-t0, ok, 20_100, notifies(acts))
	}
	if at, ok := when[wantSen]; !ok || at != t0+20_100 {
		t.Errorf("-sentinel at %d (%v), want %d; events %v", at-t0, ok, 20_100, notifies(acts))
	}
	n := 0
	for _, a := range acts {
		if nt, ok := a.(Notify); ok && (nt.Type == "-slave" || nt.Type == "-sentinel") {
			n++
			if nt.Level != LevelWarning {
				t.Errorf("%s at level %s", nt.Type, nt.Level)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d forget events, want 2", n)
	}
	if got := knownReplicas(c); !reflect.DeepEqual(got, []string{liveReplica}) {
		t.Errorf("known replicas %v", got)
	}
	if got := knownSentinels(c); !reflect.DeepEqual(got, []string{liveSent}) {
		t.Errorf("known sentinels %v", got)
	}
	reps, _ := c.Replicas(t0+40_000, "mymaster")
	sens, _ := c.Sentinels(t0+40_000, "mymaster")
	if len(reps) != 1 || len(sens) != 1 {
		t.Errorf("SENTINEL REPLICAS %d, SENTINELS %d, want 1 and 1", len(reps), len(sens))
	}
	// The step that forgets rewrites the config.
	rewrote := false
	for i, a := range acts {
		if nt, ok := a.(Notify); ok && nt.Type == "-slave" {
			for _, b := range acts[i:] {
				if _, ok := b.(RewriteConfig); ok {
					rewrote = true
					break
				}
			}
		}
	}
	if !rewrote {
		t.Error("no RewriteConfig after forgetting")
	}
}

func TestForgetOffByDefault(t *testing.T) {
	c := forgetCore(t, func(mc *MasterConfig) { mc.ForgetAfter = 0 })
	acts, _ := drive(c, t0, t0+600_000, allBut(deadReplica, deadSent))
	if hasNotify(acts, "-slave") || hasNotify(acts, "-sentinel") {
		t.Errorf("forgot with forget-after 0: %v", notifies(acts))
	}
	if len(knownReplicas(c)) != 2 || len(knownSentinels(c)) != 2 {
		t.Errorf("known %v %v", knownReplicas(c), knownSentinels(c))
	}
	for _, f := range c.instanceFields(t0, c.masters["mymaster"]) {
		if f.Name == "forget-after-milliseconds" {
			t.Errorf("SENTINEL MASTER shows %v when off", f)
		}
	}
}

// A node that comes back before forget-after is kept; gone again, the time
// counts from its last PONG, not from the first outage.
func TestForgetNotWhatCameBack(t *testing.T) {
	c := forgetCore(t, nil)
	back := func(now int64, addr string) bool {
		if addr == deadReplica || addr == deadSent {
			return now >= t0+15_000 && now < t0+60_000
		}
		return true
	}
	acts, _ := drive(c, t0, t0+79_000, back)
	if hasNotify(acts, "-slave") || hasNotify(acts, "-sentinel") {
		t.Fatalf("forgot a node that came back: %v", notifies(acts))
	}
	if !hasNotify(acts, "-sdown slave 10.0.0.9:6380") {
		t.Errorf("the replica never came back: %v", notifies(acts))
	}
	_, when := drive(c, t0+79_000, t0+90_000, back)
	found := false
	for ev, at := range when {
		if strings.HasPrefix(ev, "-slave slave 10.0.0.9:6380") {
			found = true
			// Last PONG in the second before 60 s: forgotten 20 s after it.
			if at < t0+79_000 || at > t0+80_100 {
				t.Errorf("-slave at %d ms", at-t0)
			}
		}
	}
	if !found {
		t.Errorf("not forgotten 20 s after its last reply: %v", when)
	}
}

func TestForgetNeverTheMaster(t *testing.T) {
	c := forgetCore(t, func(mc *MasterConfig) { mc.ForgetAfter = 1000; mc.KnownSentinels = nil })
	acts, _ := drive(c, t0, t0+120_000, allBut("10.0.0.1:6379", deadReplica))
	if !hasNotify(acts, "+sdown master mymaster") {
		t.Fatalf("master never SDOWN: %v", notifies(acts))
	}
	if len(c.Masters(t0)) != 1 || c.masters["mymaster"].addr.IP != "10.0.0.1" {
		t.Errorf("master gone or moved: %v", c.Masters(t0))
	}
	if !hasNotify(acts, "-slave slave 10.0.0.9:6380") {
		t.Errorf("the dead replica was kept: %v", notifies(acts))
	}
	if got := knownReplicas(c); !reflect.DeepEqual(got, []string{liveReplica}) {
		t.Errorf("known replicas %v", got)
	}
}

// In sync-ack mode a replica seen following the master is an ack member:
// it may hold acknowledged writes, so it is never forgotten.
func TestForgetKeepsAckMembers(t *testing.T) {
	c := forgetCore(t, func(mc *MasterConfig) { mc.MinReplicasAck = 1; mc.AckHistory = strings.Repeat("f", 40) })
	masterInfoExtra = "min_replicas_ack:1\r\n"
	defer func() { masterInfoExtra = "" }()
	acts, _ := drive(c, t0, t0+120_000, allBut(deadReplica, deadSent))
	if hasNotify(acts, "-slave") {
		t.Errorf("forgot an ack member: %v", notifies(acts))
	}
	if !hasNotify(acts, "-sentinel sentinel "+idC) {
		t.Errorf("the dead sentinel was kept: %v", notifies(acts))
	}
	if len(knownReplicas(c)) != 2 {
		t.Errorf("known replicas %v", knownReplicas(c))
	}
}

// In TILT nothing is forgotten: the timers cannot be trusted.
func TestForgetNotInTilt(t *testing.T) {
	c := forgetCore(t, nil)
	dead := allBut(deadReplica, deadSent)
	drive(c, t0, t0+1_000, dead)
	// The clock jumps 24 s: TILT for 30 s (until 55 s).
	acts, _ := drive(c, t0+25_000, t0+54_900, dead)
	if !hasNotify(acts, "+tilt") {
		t.Fatalf("no TILT: %v", notifies(acts))
	}
	if hasNotify(acts, "-slave") || hasNotify(acts, "-sentinel") {
		t.Errorf("forgot in TILT: %v", notifies(acts))
	}
	acts, _ = drive(c, t0+54_900, t0+56_000, dead)
	if !hasNotify(acts, "-tilt") || !hasNotify(acts, "-slave slave 10.0.0.9:6380") || !hasNotify(acts, "-sentinel sentinel "+idC) {
		t.Errorf("after TILT: %v", notifies(acts))
	}
}

func TestForgetSet(t *testing.T) {
	c := forgetCore(t, func(mc *MasterConfig) { mc.ForgetAfter = 0 })
	for _, bad := range []string{"-1", "abc", ""} {
		r, _ := last(c.Step(t0+1, SetRequested{Name: "mymaster", Args: []string{"forget-after-milliseconds", bad}})).(Reply)
		want := "ERR Invalid argument '" + bad + "' for SENTINEL SET 'forget-after-milliseconds'"
		if r.Kind != ReplyError || r.Text != want {
			t.Errorf("SET %q: %+v", bad, r)
		}
	}
	acts := c.Step(t0+2, SetRequested{Name: "mymaster", Args: []string{"forget-after-milliseconds", "300000"}})
	if r, _ := last(acts).(Reply); r.Kind != ReplyOK || count[RewriteConfig](acts) != 1 ||
		!hasNotify(acts, "+set master mymaster 10.0.0.1 6379 forget-after-milliseconds 300000") {
		t.Errorf("SET: %#v", acts)
	}
	if c.Config().Masters[0].ForgetAfter != 300000 {
		t.Errorf("config: %+v", c.Config().Masters[0])
	}
	shown := ""
	for _, f := range c.instanceFields(t0+2, c.masters["mymaster"]) {
		if f.Name == "forget-after-milliseconds" {
			shown = f.Value
		}
	}
	if shown != "300000" {
		t.Errorf("SENTINEL MASTER forget-after-milliseconds %q", shown)
	}
	// A negative value in the file is refused.
	c2 := New(Options{Port: 26379}, rand.New(rand.NewSource(1)))
	cfg := NewConfig()
	cfg.Masters = []MasterConfig{{Name: "m", IP: "10.0.0.1", Port: 6379, Quorum: 1, ForgetAfter: -1}}
	if r, _ := last(c2.Step(t0, ConfigLoaded{Config: cfg})).(Reply); r.Kind != ReplyError {
		t.Errorf("negative forget-after loaded: %+v", r)
	}
}
