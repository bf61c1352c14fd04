package sentinel

import (
	"math/rand"
	"reflect"
	"testing"
)

// TestAnnounceHostnames: with resolve-hostnames, an address keeps the host
// as given and the address it resolved to (sentinelAddr's hostname and
// ip); announce-hostnames chooses which one replies, events, hellos and the
// rewritten file show (announceSentinelAddr), so turning it off shows the
// resolved addresses again, as redis-sentinel 7.0.15 does.
func TestAnnounceHostnames(t *testing.T) {
	hosts := map[string]string{"localhost": "127.0.0.1", "peer.example": "10.0.0.7"}
	c := New(Options{Port: 26379, Resolve: func(h string) (string, bool) {
		ip, ok := hosts[h]
		return ip, ok
	}}, rand.New(rand.NewSource(1)))
	cfg := NewConfig()
	cfg.MyID = idA
	cfg.ResolveHostnames, cfg.AnnounceHostnames = true, true
	cfg.Masters = []MasterConfig{{Name: "mymaster", IP: "localhost", Port: 6379, Quorum: 2, DownAfter: 5000, FailoverTimeout: 60000}}
	if r, ok := last(c.Step(t0, ConfigLoaded{Config: cfg})).(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("config load: %#v", r)
	}
	acts := c.Step(t0+100, Ticked{})
	cn, _ := find[Connect](acts)
	if cn.Instance.Addr != (Addr{IP: "localhost", Port: 6379, Resolved: "127.0.0.1"}) {
		t.Fatalf("connect to %+v, want localhost resolved to 127.0.0.1", cn.Instance.Addr)
	}
	connect(c, t0+100, acts)
	m := c.masters["mymaster"]
	c.Step(t0+200, InfoReceived{Instance: c.ref(m), Info: "run_id:" + idB + "\r\nrole:master\r\n" +
		"slave0:ip=localhost,port=6380,state=online,offset=1,lag=0\r\n"})
	c.Step(t0+300, HelloReceived{Payload: hello("peer.example", 26380, idC, 0, "localhost", 6379, 0)})

	check := func(ip, peer string) {
		t.Helper()
		if a, _ := c.MasterAddr("mymaster"); a != (Addr{IP: ip, Port: 6379}) {
			t.Errorf("GET-MASTER-ADDR-BY-NAME %+v, want %s", a, ip)
		}
		reps, _ := c.Replicas(t0+400, "mymaster")
		if len(reps) != 1 || reps[0][0] != (Field{"name", "localhost:6380"}) || reps[0][1] != (Field{"ip", ip}) {
			t.Errorf("REPLICAS %v, want name localhost:6380 ip %s", reps, ip)
		}
		sens, _ := c.Sentinels(t0+400, "mymaster")
		if len(sens) != 1 || sens[0][1] != (Field{"ip", peer}) {
			t.Errorf("SENTINELS %v, want ip %s", sens, peer)
		}
		mc := c.Config().Masters[0]
		want := []Addr{{IP: ip, Port: 6380}}
		if mc.IP != ip || !reflect.DeepEqual(mc.KnownReplicas, want) || len(mc.KnownSentinels) != 1 || mc.KnownSentinels[0].Addr.IP != peer {
			t.Errorf("config %+v, want monitor, known-replica at %s and known-sentinel at %s", mc, ip, peer)
		}
		m.link.localIP = "127.0.0.1"
		c.sendHello(m)
		if h, ok := find[PublishHello](c.out); !ok || h.Payload != hello("127.0.0.1", 26379, idA, 0, ip, 6379, 0) {
			t.Errorf("hello %+v, want the master at %s", h, ip)
		}
		c.out = nil
		c.event(LevelWarning, "+test", m, "%@")
		if n, ok := find[Notify](c.out); !ok || n.Message != "master mymaster "+ip+" 6379" {
			t.Errorf("event %+v, want the master at %s", n, ip)
		}
		c.out = nil
	}
	check("localhost", "peer.example")
	if r, ok := last(c.Step(t0+500, ConfigSetRequested{Param: "announce-hostnames", Value: "no"})).(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("CONFIG SET: %#v", r)
	}
	check("127.0.0.1", "10.0.0.7")
	c.Step(t0+600, ConfigSetRequested{Param: "announce-hostnames", Value: "yes"})
	check("localhost", "peer.example")

	// A hello naming the master by its address or by its name is the same
	// master: no +switch-master.
	acts = c.Step(t0+700, HelloReceived{Payload: hello("peer.example", 26380, idC, 0, "127.0.0.1", 6379, 1)})
	if hasNotify(acts, "+switch-master") {
		t.Errorf("the same master under its address switched: %v", notifies(acts))
	}
}
