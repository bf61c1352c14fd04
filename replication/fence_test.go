package replication

import (
	"strings"
	"testing"
	"time"
)

func hello(id string, ip string, port int, epoch uint64) FenceHello {
	return FenceHello{SentinelID: id, MasterName: "mymaster", MasterIP: ip, MasterPort: port, Epoch: epoch}
}

func TestParseHello(t *testing.T) {
	h, ok := ParseHello([]byte("127.0.0.1,26379,0123456789abcdef0123456789abcdef01234567,7,mymaster,10.0.0.2,6380,5"))
	if !ok || h.SentinelID != "0123456789abcdef0123456789abcdef01234567" || h.MasterName != "mymaster" ||
		h.MasterIP != "10.0.0.2" || h.MasterPort != 6380 || h.Epoch != 5 {
		t.Fatalf("ParseHello = %+v, %v", h, ok)
	}
	for _, bad := range []string{
		"", "a,b,c", "127.0.0.1,26379,id,7,mymaster,10.0.0.2,6380",
		"127.0.0.1,26379,id,7,mymaster,10.0.0.2,6380,5,extra",
		"127.0.0.1,26379,id,7,mymaster,10.0.0.2,port,5",
		"127.0.0.1,26379,id,7,mymaster,10.0.0.2,6380,-1",
		"127.0.0.1,26379,,7,mymaster,10.0.0.2,6380,1",
		"127.0.0.1,26379,id,7,mymaster,10.0.0.2,0,1",
	} {
		if _, ok := ParseHello([]byte(bad)); ok {
			t.Errorf("ParseHello(%q) accepted", bad)
		}
	}
}

func TestSentinelClientKey(t *testing.T) {
	if k := SentinelClientKey("sentinel-0123abcd-cmd"); k != "0123abcd" {
		t.Fatalf("key = %q", k)
	}
	for _, n := range []string{"sentinel-0123abcd-pubsub", "sentinel-0123abc-cmd", "app", ""} {
		if k := SentinelClientKey(n); k != "" {
			t.Errorf("SentinelClientKey(%q) = %q", n, k)
		}
	}
	if SentinelKey("0123456789abcdef") != "01234567" {
		t.Fatal("SentinelKey")
	}
}

func TestIsSelf(t *testing.T) {
	cases := []struct {
		ip           string
		port         int
		laddr        string
		announceIP   string
		announcePort int
		want         bool
	}{
		{"127.0.0.1", 7000, "127.0.0.1:7000", "", 0, true},
		{"127.0.0.1", 7001, "127.0.0.1:7000", "", 0, false},
		{"10.0.0.2", 7000, "127.0.0.1:7000", "", 0, false},
		{"10.0.0.2", 7000, "127.0.0.1:7000", "10.0.0.2", 0, true},
		{"10.0.0.2", 6379, "127.0.0.1:7000", "10.0.0.2", 6379, true},
		{"::1", 7000, "[::1]:7000", "", 0, true},
		{"db1.example", 7000, "10.0.0.1:7000", "", 0, false},
		{"db1.example", 7000, "10.0.0.1:7000", "DB1.example", 0, true},
		{"127.0.0.1", 7000, "garbage", "", 0, false},
	}
	for _, c := range cases {
		if got := IsSelf(c.ip, c.port, c.laddr, c.announceIP, c.announcePort); got != c.want {
			t.Errorf("IsSelf(%s,%d,%s,%q,%d) = %v", c.ip, c.port, c.laddr, c.announceIP, c.announcePort, got)
		}
	}
}

// A master learns of a failover it did not take part in from a hello with
// a higher epoch naming another master: fenced at once, until reconfigured.
func TestFenceEpoch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var f Fence
	// Monitored at epoch 0: the hellos name this master.
	if r := f.Hello(t0, hello("s1", "127.0.0.1", 7000, 0), true, true); r != HelloIgnored || f.FencedEpoch != 0 {
		t.Fatalf("epoch-0 hello: %v %+v", r, f)
	}
	// A stale hello (lower or equal epoch) naming another master: nothing.
	if r := f.Hello(t0, hello("s2", "127.0.0.1", 7001, 0), true, false); r != HelloIgnored {
		t.Fatalf("equal epoch naming another: %v", r)
	}
	// Epoch 3 names 7001: fenced.
	if r := f.Hello(t0, hello("s2", "127.0.0.1", 7001, 3), true, false); r != HelloFenced {
		t.Fatalf("higher epoch naming another: %v", r)
	}
	if f.FencedEpoch != 3 || f.FencedBy != "127.0.0.1:7001" || f.Epoch != 0 || f.HighestEpoch != 3 {
		t.Fatalf("fence = %+v", f)
	}
	msg := f.FencedError()
	if !strings.HasPrefix(msg, "READONLY You can't write against a read only replica.") || !strings.Contains(msg, "127.0.0.1:7001") ||
		!strings.Contains(msg, "config epoch 3") {
		t.Fatalf("error = %q", msg)
	}
	// The same hello again, or an older one: still fenced by epoch 3.
	if r := f.Hello(t0, hello("s1", "127.0.0.1", 7001, 3), true, false); r != HelloIgnored || f.FencedEpoch != 3 {
		t.Fatalf("repeat: %v %+v", r, f)
	}
	// Persisted form.
	if s := f.FenceString(); s != "3 127.0.0.1 7001" {
		t.Fatalf("FenceString = %q", s)
	}
	e, by, ok := ParseFenceString("3 127.0.0.1 7001")
	var g Fence
	g.Restore(e, by)
	if !ok || g.FencedEpoch != 3 || g.FencedBy != "127.0.0.1:7001" {
		t.Fatalf("restore: %+v %v", g, ok)
	}
	for _, bad := range []string{"3 127.0.0.1", "x 127.0.0.1 7001", "0 127.0.0.1 7001", "3 h 70000"} {
		if _, _, ok := ParseFenceString(bad); ok {
			t.Errorf("ParseFenceString(%q) accepted", bad)
		}
	}
	// REPLICAOF lifts it and adopts the epoch: the hellos of epoch 3 do
	// not raise it again.
	f.Reconfigured()
	if f.FencedEpoch != 0 || f.Epoch != 3 || f.FenceString() != "" {
		t.Fatalf("after REPLICAOF: %+v", f)
	}
	if r := f.Hello(t0, hello("s1", "127.0.0.1", 7001, 3), true, false); r != HelloIgnored {
		t.Fatalf("epoch-3 hello after REPLICAOF NO ONE: %v", r)
	}
	// A later failover fences it again.
	if r := f.Hello(t0, hello("s1", "127.0.0.1", 7002, 4), true, false); r != HelloFenced || f.FencedBy != "127.0.0.1:7002" {
		t.Fatalf("epoch 4: %v %+v", r, f)
	}
	// vigil-sentinel's stamp of epoch >= the fence's lifts it.
	f.Stamp(4)
	if f.FencedEpoch != 0 || f.Epoch != 4 {
		t.Fatalf("after stamp: %+v", f)
	}
}

// A replica, or a master the hello names (promoted by redis-sentinel,
// which does not stamp), adopts the epoch; it is never fenced by it.
func TestFenceAdopt(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var r Fence
	if res := r.Hello(t0, hello("s1", "127.0.0.1", 7000, 2), false, false); res != HelloAdopted || r.Epoch != 2 || r.FencedEpoch != 0 {
		t.Fatalf("replica: %v %+v", res, r)
	}
	var m Fence
	if res := m.Hello(t0, hello("s1", "127.0.0.1", 7001, 2), true, true); res != HelloAdopted || m.Epoch != 2 {
		t.Fatalf("promoted master: %v %+v", res, m)
	}
	// The lagging sentinels' hellos still name the old master at epoch 1.
	if res := m.Hello(t0, hello("s2", "127.0.0.1", 7000, 1), true, false); res != HelloIgnored || m.FencedEpoch != 0 {
		t.Fatalf("lagging hello: %v %+v", res, m)
	}
}

func TestFenceIsolation(t *testing.T) {
	const T = 2 * time.Second
	t0 := time.Unix(1000, 0)
	in := IsolationInput{Timeout: T, MinReplicas: 1}
	var f Fence
	// Never monitored: never isolated, whatever the time.
	if f.NeedCheck(t0.Add(time.Hour), T) {
		t.Fatal("unmonitored server checked")
	}
	if iso, _ := f.IsolatedAt(t0.Add(time.Hour), in); iso {
		t.Fatal("unmonitored server isolated")
	}
	// Three sentinels heard at t0.
	for _, id := range []string{"aaaaaaaa11", "bbbbbbbb22", "cccccccc33"} {
		f.Hello(t0, hello(id, "127.0.0.1", 7000, 0), true, true)
	}
	if f.Sentinels() != 3 {
		t.Fatalf("sentinels = %d", f.Sentinels())
	}
	if iso, _ := f.IsolatedAt(t0.Add(T-time.Millisecond), in); iso {
		t.Fatal("isolated before the timeout")
	}
	// The cached verdict holds until the contacts expire.
	if f.NeedCheck(t0.Add(T-time.Millisecond), T) {
		t.Fatal("check needed before the contacts expire")
	}
	if !f.NeedCheck(t0.Add(T), T) {
		t.Fatal("no check when the contacts expire")
	}
	iso, tr := f.IsolatedAt(t0.Add(T), in)
	if !iso || !tr || !f.IsolatedSince.Equal(t0.Add(T)) {
		t.Fatalf("at the timeout: isolated=%v transition=%v %+v", iso, tr, f)
	}
	// One sentinel of three (its PING on the command connection): not a
	// majority.
	t1 := t0.Add(3 * time.Second)
	f.SentinelContact(t1, "aaaaaaaa")
	if iso, _ := f.IsolatedAt(t1, in); !iso {
		t.Fatal("one sentinel of three ended the isolation")
	}
	// An unknown client key is not a sentinel.
	f.SentinelContact(t1, "zzzzzzzz")
	if f.Sentinels() != 3 {
		t.Fatal("a client name added a sentinel")
	}
	// A second one: a majority, writes resume.
	f.SentinelContact(t1, "bbbbbbbb")
	if iso, tr := f.IsolatedAt(t1, in); iso || !tr {
		t.Fatalf("majority heard: isolated=%v transition=%v", iso, tr)
	}
	// Later: only a replica's ACK keeps it.
	t2 := t1.Add(T + time.Second)
	in.ReplicaAcks = []time.Time{t2.Add(-time.Second), t0}
	if iso, _ := f.IsolatedAt(t2, in); iso {
		t.Fatal("isolated with a replica acknowledging")
	}
	// With min-replicas 2, one replica is not enough.
	in.MinReplicas = 2
	if iso, _ := f.IsolatedAt(t2, in); !iso {
		t.Fatal("not isolated with 1 of 2 replicas")
	}
	in.ReplicaAcks[1] = t2
	if iso, _ := f.IsolatedAt(t2, in); iso {
		t.Fatal("isolated with 2 of 2 replicas")
	}
	// Off: never.
	in.Timeout = 0
	if f.NeedCheck(t2.Add(time.Hour), 0) {
		t.Fatal("checked with the rule off")
	}
	if iso, _ := f.IsolatedAt(t2.Add(time.Hour), in); iso {
		t.Fatal("isolated with the rule off")
	}
	msg := IsolatedError(T, 3, 1)
	if !strings.HasPrefix(msg, "READONLY ") || !strings.Contains(msg, "2000 ms") {
		t.Fatalf("error = %q", msg)
	}
}

// TestFenceRestoreSentinels: KnownSentinels lists the learned keys in
// order; RestoreSentinels makes them known as heard at the given time (a
// restart's: a full timeout from it), keeps the contact time of a key
// already known, and "" forgets them all.
func TestFenceRestoreSentinels(t *testing.T) {
	const T = 2 * time.Second
	t0 := time.Unix(1000, 0)
	in := IsolationInput{Timeout: T, MinReplicas: 1}
	var f Fence
	if f.KnownSentinels() != "" {
		t.Fatalf("known = %q", f.KnownSentinels())
	}
	f.RestoreSentinels(t0, "cccccccc aaaaaaaa bbbbbbbb")
	if !f.Monitored() || f.Sentinels() != 3 || f.KnownSentinels() != "aaaaaaaa bbbbbbbb cccccccc" {
		t.Fatalf("restored: monitored=%v %d %q", f.Monitored(), f.Sentinels(), f.KnownSentinels())
	}
	if iso, _ := f.IsolatedAt(t0.Add(T-time.Millisecond), in); iso {
		t.Fatal("isolated before the timeout from the restore")
	}
	if iso, _ := f.IsolatedAt(t0.Add(T), in); !iso {
		t.Fatal("not isolated at the timeout from the restore")
	}
	// Re-restoring keeps a known key's contact time: no fresh window.
	f.RestoreSentinels(t0.Add(T), "aaaaaaaa bbbbbbbb cccccccc")
	if iso, _ := f.IsolatedAt(t0.Add(T), in); !iso {
		t.Fatal("a restore of the same keys refreshed their contact")
	}
	f.RestoreSentinels(t0.Add(T), "")
	if f.Monitored() || f.KnownSentinels() != "" {
		t.Fatalf("forgotten: monitored=%v %q", f.Monitored(), f.KnownSentinels())
	}
	if iso, _ := f.IsolatedAt(t0.Add(time.Hour), in); iso {
		t.Fatal("isolated with no sentinel known")
	}
}
