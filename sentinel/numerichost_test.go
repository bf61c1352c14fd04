package sentinel

import "testing"

// TestNumericHost: what redis-sentinel 7.0.15 accepted for SENTINEL
// MONITOR (without resolve-hostnames) and the ip it then showed, recorded
// with redis-cli; "" means -ERR Invalid IP address or hostname specified.
func TestNumericHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.1", "127.0.0.1"},
		{"1.2.3", "1.2.0.3"},
		{"0x7f.1", "127.0.0.1"},
		{"0X7F.1", "127.0.0.1"},
		{"010.0.0.1", "8.0.0.1"},
		{"0127.0.0.1", "87.0.0.1"},
		{"4294967295", "255.255.255.255"},
		{"0xffffffff", "255.255.255.255"},
		{"1.16777215", "1.255.255.255"},
		{"1.2.65535", "1.2.255.255"},
		{"00000000000000000001", "0.0.0.1"},
		{"0", "0.0.0.0"},
		{"::1", "::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		{"::ffff:1.2.3.4", "::ffff:1.2.3.4"},
		{"::FFFF:7f00:1", "::ffff:127.0.0.1"},
		{"::1.2.3.4", "::1.2.3.4"},
		{"::0.1.2.3", "::0.1.2.3"},
		{"::0.0.1.2", "::102"},
		{"1:0:0:0:1:0:0:1", "1::1:0:0:1"},
		{"FE80::1%1", "fe80::1"},
		{"127.0.0.1.", ""},
		{" 127.0.0.1", ""},
		{"127.0.0.1 x", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"1.2.3.256", ""},
		{"1.2.65536", ""},
		{"1.65536.1", ""},
		{"0x100000000", ""},
		{"08.1.1.1", ""},
		{"0x", ""},
		{"0x.1", ""},
		{"1..1", ""},
		{".1", ""},
		{"1.", ""},
		{"+1.1.1.1", ""},
		{"1e2.1.1.1", ""},
		{"localhost", ""},
		{"[::1]", ""},
		{"fe80::1%nosuch", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := NumericHost(tt.in)
		if !ok {
			got = ""
		}
		if got != tt.want {
			t.Errorf("NumericHost(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMonitorShorthandIPv4: the master is kept under the address as
// inet_ntop writes it, which SENTINEL MASTER and the config show.
func TestMonitorShorthandIPv4(t *testing.T) {
	c := newCore(t)
	out := c.Step(1000, MonitorRequested{Name: "m", IP: "127.1", Port: 7000, Quorum: 1})
	if r, ok := out[len(out)-1].(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("monitor 127.1: %v", out)
	}
	if a, ok := c.MasterAddr("m"); !ok || a.IP != "127.0.0.1" || a.Port != 7000 {
		t.Errorf("MasterAddr = %v %v, want 127.0.0.1:7000", a, ok)
	}
	for _, m := range c.Config().Masters {
		if m.Name == "m" && m.IP != "127.0.0.1" {
			t.Errorf("config: sentinel monitor m %s, want 127.0.0.1", m.IP)
		}
	}
}
