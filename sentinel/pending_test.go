package sentinel

import (
	"strings"
	"testing"
)

// TestPendingWhileConnecting follows sentinelReconnectInstance as
// redis-sentinel 7.0.15 shows it in SENTINEL MASTER: the link is not
// "disconnected" while its connections are being opened, and
// link-pending-commands counts what was queued on them: CLIENT SETNAME on
// both connections, the PING, then the INFO of the same tick (4, as
// redis-sentinel shows for a master whose connect hangs). When both
// connections fail, only the SETNAMEs are settled (2, as it shows for a
// refused port); the next reconnection starts again from the new prelude.
func TestPendingWhileConnecting(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	flags := func() string {
		fields, _ := c.Master(t0, "mymaster")
		for _, f := range fields {
			if f.Name == "flags" {
				return f.Value
			}
		}
		return ""
	}
	pending := func() int { return m.link.pending }
	acts := c.Step(t0+100, Ticked{})
	cn, ok := find[Connect](acts)
	if !ok {
		t.Fatalf("first tick: %#v", acts)
	}
	if got := pending(); got != 4 {
		t.Errorf("pending while connecting: %d, want 4 (2 SETNAME, PING, INFO)", got)
	}
	if f := flags(); strings.Contains(f, "disconnected") {
		t.Errorf("flags while connecting: %s", f)
	}
	// Every tick sends INFO again while none was received.
	c.Step(t0+200, Ticked{})
	if got := pending(); got != 5 {
		t.Errorf("pending after a second tick: %d, want 5", got)
	}
	c.Step(t0+250, LinkDisconnected{Instance: cn.Instance, Conn: ConnCmd})
	c.Step(t0+250, LinkDisconnected{Instance: cn.Instance, Conn: ConnPubSub})
	if got := pending(); got != 3 {
		t.Errorf("pending after the connections failed: %d, want 3 (PING, 2 INFO)", got)
	}
	if f := flags(); !strings.Contains(f, "disconnected") {
		t.Errorf("flags after the failure: %s", f)
	}
	// Reconnection a ping period after the last attempt: counted afresh.
	acts = c.Step(t0+1100, Ticked{})
	cn, ok = find[Connect](acts)
	if !ok {
		t.Fatalf("reconnection: %#v", acts)
	}
	if got := pending(); got != 4 {
		t.Errorf("pending after reconnecting: %d, want 4", got)
	}
	// Established; the SETNAME replies, then the PING and INFO replies.
	c.Step(t0+1101, LinkConnected{Instance: cn.Instance, Conn: ConnCmd, LocalIP: "127.0.0.1"})
	c.Step(t0+1101, LinkConnected{Instance: cn.Instance, Conn: ConnPubSub})
	c.Step(t0+1102, PreludeReplied{Instance: cn.Instance, Conn: ConnCmd})
	c.Step(t0+1102, PreludeReplied{Instance: cn.Instance, Conn: ConnPubSub})
	if got := pending(); got != 2 {
		t.Errorf("pending after the SETNAME replies: %d, want 2", got)
	}
	c.Step(t0+1103, PingReplied{Instance: cn.Instance, Reply: "PONG"})
	c.Step(t0+1103, InfoReceived{Instance: cn.Instance, Info: "role:master\r\n"})
	if got := pending(); got != 0 {
		t.Errorf("pending after the replies: %d, want 0", got)
	}
	// A stray prelude reply never drives the count below what is owed.
	c.Step(t0+1104, PreludeReplied{Instance: cn.Instance, Conn: ConnCmd})
	if got := pending(); got != 0 {
		t.Errorf("pending after an extra prelude reply: %d", got)
	}
}

// TestPendingPreludeWithAuth: AUTH is part of the prelude when the master
// has auth-pass, and for sentinel links when requirepass is set without
// sentinel-pass.
func TestPendingPreludeWithAuth(t *testing.T) {
	c := newCore(t)
	c.Step(t0, SetRequested{Name: "mymaster", Args: []string{"auth-pass", "secret"}})
	c.Step(t0+100, Ticked{})
	if got := c.masters["mymaster"].link.pending; got != 6 {
		t.Errorf("pending with auth-pass: %d, want 6 (2 AUTH, 2 SETNAME, PING, INFO)", got)
	}
}

// TestHelloOnConnectingLink: once the shell reports the local address of
// the command connection being opened (LinkLocalIP), hellos go out on it
// like the other periodic commands.
func TestHelloOnConnectingLink(t *testing.T) {
	c := newCore(t)
	acts := c.Step(t0+100, Ticked{})
	cn, ok := find[Connect](acts)
	if !ok {
		t.Fatalf("first tick: %#v", acts)
	}
	c.Step(t0+101, LinkLocalIP{Instance: cn.Instance, LocalIP: "127.0.0.1"})
	acts = c.Step(t0+2100, Ticked{})
	h, ok := find[PublishHello](acts)
	if !ok {
		t.Fatalf("no hello on the connecting link: %#v", acts)
	}
	if want := "127.0.0.1,26379," + idA + ",0,mymaster,127.0.0.1,6379,0"; h.Payload != want {
		t.Errorf("hello %q, want %q", h.Payload, want)
	}
}
