package sentinel

import (
	"strings"
	"testing"
)

func FuzzParseHello(f *testing.F) {
	f.Add("127.0.0.1,26381,615a34fb92ba0b54e1892a14bb7b094b824e64c9,0,mym,127.0.0.1,16380,0")
	f.Add(",,,,,,,")
	f.Add("::1,-1,x,-1,mymaster,::1,99999999999,18446744073709551616")
	f.Fuzz(func(t *testing.T, p string) {
		h, ok := ParseHello(p)
		if ok && strings.Count(p, ",") != 7 {
			t.Fatalf("accepted %q with %d commas", p, strings.Count(p, ","))
		}
		if ok && !strings.Contains(p, h.MasterName) {
			t.Fatalf("master name %q not in %q", h.MasterName, p)
		}
		// Through a live core: must never panic.
		c := newCore(t)
		m := c.masters["mymaster"]
		c.Step(t0+1, HelloReceived{Payload: p})
		c.Step(t0+2, HelloReceived{Instance: c.ref(m), Payload: p})
		c.Step(t0+3, HelloReceived{Payload: strings.Replace(p, h.MasterName, "mymaster", 1)})
		c.Step(t0+4, Ticked{})
	})
}

func FuzzParseInfo(f *testing.F) {
	f.Add(masterInfo)
	f.Add(replicaInfo)
	f.Add("slave0:ip=,port=\r\nslave1:,\r\nslave2:ip=1.1.1.1\r\nrole:slave\r\nmaster_port:\r\n")
	f.Add("run_id:" + strings.Repeat("z", 39) + "\r\nmaster_link_down_since_seconds:")
	f.Fuzz(func(t *testing.T, info string) {
		in := ParseInfo(info)
		if in.RunID != "" && len(in.RunID) != RunIDSize {
			t.Fatalf("run id %q", in.RunID)
		}
		c := newCore(t)
		m := c.masters["mymaster"]
		c.Step(t0+1, InfoReceived{Instance: c.ref(m), Info: info})
		for _, r := range sortedInstances(m.replicas) {
			c.Step(t0+2, InfoReceived{Instance: c.ref(r), Info: info})
		}
		c.Step(t0+3, Ticked{})
		c.Masters(t0 + 3)
		c.Config()
	})
}
