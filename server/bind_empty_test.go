package server

import (
	"net"
	"testing"
	"time"
)

// TestConfigSetBindEmpty is networking.tcl's "Default bind address
// configuration handling" (external:skip), live: bind's default is
// "* -::*"; CONFIG SET bind "" closes the TCP listeners (new connections
// are refused; the unix socket still serves) and CONFIG SET bind with an
// address opens them again. Vigil took an empty bind for the default and
// kept listening on every address.
func TestConfigSetBindEmpty(t *testing.T) {
	l, addr := startLiveTCP(t)
	c := l.dial(t) // over the unix socket
	refused := func() bool {
		conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			conn.Close()
		}
		return err != nil
	}
	if got := c.do("CONFIG", "SET", "bind", "* -::*"); got != "+OK" {
		t.Fatalf("CONFIG SET bind * -::*: %s", got)
	}
	if got := c.do("CONFIG", "GET", "bind"); got != `["bind", "* -::*"]` {
		t.Fatalf("CONFIG GET bind: %s", got)
	}
	if refused() {
		t.Fatal("bind * -::*: TCP refused")
	}
	if got := c.do("CONFIG", "SET", "bind", ""); got != "+OK" {
		t.Fatalf(`CONFIG SET bind "": %s`, got)
	}
	if got := c.do("CONFIG", "GET", "bind"); got != `["bind", ""]` {
		t.Fatalf("CONFIG GET bind: %s", got)
	}
	if !refused() {
		t.Fatal(`bind "": a TCP connection was accepted`)
	}
	if got := c.do("PING"); got != "+PONG" {
		t.Fatalf("PING over the unix socket: %s", got)
	}
	if got := c.do("CONFIG", "SET", "bind", "127.0.0.1"); got != "+OK" {
		t.Fatalf("CONFIG SET bind 127.0.0.1: %s", got)
	}
	if refused() {
		t.Fatal("bind 127.0.0.1 again: TCP refused")
	}
}
