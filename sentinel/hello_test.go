package sentinel

import (
	"reflect"
	"testing"
)

func TestParseHello(t *testing.T) {
	good := "127.0.0.1,26381,615a34fb92ba0b54e1892a14bb7b094b824e64c9,3,mym,127.0.0.1,16380,2"
	h, ok := ParseHello(good)
	want := Hello{"127.0.0.1", 26381, "615a34fb92ba0b54e1892a14bb7b094b824e64c9", 3, "mym", "127.0.0.1", 16380, 2}
	if !ok || h != want {
		t.Fatalf("got %+v %v", h, ok)
	}
	if h.String() != good {
		t.Errorf("round trip: %q", h.String())
	}
	for _, bad := range []string{"", ",,,,,,", "a,b,c,d,e,f,g,h,i", "1,2,3,4,5,6,7"} {
		if _, ok := ParseHello(bad); ok {
			t.Errorf("ParseHello(%q) accepted", bad)
		}
	}
	// Eight tokens, garbage numbers: accepted with C semantics (Redis does too).
	if h, ok := ParseHello("x,y,z,-1,m,ip,p,q"); !ok || h.Port != 0 || h.CurrentEpoch != ^uint64(0) {
		t.Errorf("got %+v %v", h, ok)
	}
}

func TestProcessHello(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	mref := c.ref(m)

	// Our own hello is ignored (substring test), but counts as activity.
	acts := c.Step(t0+10, HelloReceived{Instance: mref, Payload: hello("127.0.0.1", 26379, idA, 0, "127.0.0.1", 6379, 0)})
	if len(acts) != 0 {
		t.Errorf("own hello: %#v", acts)
	}
	// Unknown master name: ignored.
	if acts := c.Step(t0+11, HelloReceived{Payload: "1.1.1.1,1,x,0,other,1.1.1.1,1,0"}); len(acts) != 0 {
		t.Errorf("unknown master: %#v", acts)
	}

	// A new sentinel.
	acts = c.Step(t0+20, HelloReceived{Instance: mref, Payload: hello("127.0.0.1", 26380, idB, 0, "127.0.0.1", 6379, 0)})
	if got := notifies(acts); !reflect.DeepEqual(got, []string{"+sentinel sentinel " + idB + " 127.0.0.1 26380 @ mymaster 127.0.0.1 6379"}) {
		t.Errorf("got %q", got)
	}
	if count[RewriteConfig](acts) != 1 {
		t.Error("a new sentinel must flush the config")
	}

	// Same sentinel, new port: address switch.
	acts = c.Step(t0+30, HelloReceived{Payload: hello("127.0.0.1", 26390, idB, 0, "127.0.0.1", 6379, 0)})
	if got := notifies(acts); !reflect.DeepEqual(got, []string{"+sentinel-address-switch master mymaster 127.0.0.1 6379 ip 127.0.0.1 port 26390 for " + idB}) {
		t.Errorf("got %q", got)
	}

	// Another run id at that address: the old one is invalid and removed.
	acts = c.Step(t0+40, HelloReceived{Payload: hello("127.0.0.1", 26390, idC, 0, "127.0.0.1", 6379, 0)})
	want := []string{
		"+sentinel-invalid-addr sentinel " + idB + " 127.0.0.1 26390 @ mymaster 127.0.0.1 6379",
		"+sentinel sentinel " + idC + " 127.0.0.1 26390 @ mymaster 127.0.0.1 6379",
	}
	if got := notifies(acts); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if len(m.sentinels) != 1 {
		t.Errorf("sentinels: %d", len(m.sentinels))
	}

	// A greater current epoch is adopted.
	acts = c.Step(t0+50, HelloReceived{Payload: hello("127.0.0.1", 26390, idC, 5, "127.0.0.1", 6379, 0)})
	if got := notifies(acts); !reflect.DeepEqual(got, []string{"+new-epoch 5"}) || c.CurrentEpoch() != 5 {
		t.Errorf("got %q epoch %d", got, c.CurrentEpoch())
	}

	// A newer config epoch with another address switches the master.
	acts = c.Step(t0+60, HelloReceived{Payload: hello("127.0.0.1", 26390, idC, 5, "127.0.0.1", 6380, 5)})
	want = []string{
		"+config-update-from sentinel " + idC + " 127.0.0.1 26390 @ mymaster 127.0.0.1 6379",
		"+switch-master mymaster 127.0.0.1 6379 127.0.0.1 6380",
		"+slave slave 127.0.0.1:6379 127.0.0.1 6379 @ mymaster 127.0.0.1 6380",
	}
	if got := notifies(acts); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	if a, _ := c.MasterAddr("mymaster"); a != (Addr{IP: "127.0.0.1", Port: 6380}) || m.configEpoch != 5 {
		t.Errorf("addr %v epoch %d", a, m.configEpoch)
	}
	// An older (or equal) config epoch changes nothing.
	acts = c.Step(t0+70, HelloReceived{Payload: hello("127.0.0.1", 26390, idC, 5, "127.0.0.1", 6381, 4)})
	if len(notifies(acts)) != 0 {
		t.Errorf("stale config applied: %q", notifies(acts))
	}
}

// TestHelloGarbage feeds malformed payloads through the whole path.
func TestHelloGarbage(t *testing.T) {
	c := newCore(t)
	for _, p := range []string{
		"", ",,,,,,,", "a,b,c,d,mymaster,f,g,h", "1.1.1.1,99999999,x,1,mymaster,1.1.1.1,-5,1",
		"::1,1,x,0,mymaster,::1,1,0", "1.1.1.1,1,,0,mymaster,1.1.1.1,1,18446744073709551616",
	} {
		c.Step(t0+1, HelloReceived{Payload: p})
	}
}
