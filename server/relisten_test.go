package server

import (
	"bufio"
	"net"
	"strconv"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestConfigSetPortVsRedis is introspection.tcl's "CONFIG SET rollback on
// apply error" on Vigil and redis-server 7.0.15 (both bound to 127.0.0.1):
// CONFIG SET port to a port another socket listens on fails with Redis's
// apply error and rolls every value of the command back; to a free port
// it moves the TCP listener there (connections stay); CONFIG SET bind to
// an address the host lacks fails likewise. Vigil stored the new port and
// kept listening on the old one.
func TestConfigSetPortVsRedis(t *testing.T) {
	testutil.NeedRedis(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{TCP: true})
	rc := r.Dial(t)
	t.Cleanup(func() { rc.Close() })
	l, _ := startLiveTCP(t)
	for name, c := range map[string]*rconn{"redis": {t: t, c: rc, br: bufio.NewReader(rc)}, "vigil": l.dial(t)} {
		busy, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		used := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
		before := c.do("CONFIG", "GET", "maxmemory")
		if got, want := c.do("CONFIG", "SET", "maxmemory", "10000001", "port", used), "-ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."; got != want {
			t.Errorf("%s: CONFIG SET port to a used port: %s, want %s", name, got, want)
		}
		busy.Close()
		if got := c.do("CONFIG", "GET", "maxmemory"); got != before {
			t.Errorf("%s: maxmemory not rolled back: %s", name, got)
		}
		free := strconv.Itoa(testutil.FreePort(t))
		if got := c.do("CONFIG", "SET", "port", free); got != "+OK" {
			t.Fatalf("%s: CONFIG SET port %s: %s", name, free, got)
		}
		nc, err := net.Dial("tcp", "127.0.0.1:"+free)
		if err != nil {
			t.Fatalf("%s: not listening on the new port: %v", name, err)
		}
		if got := (&rconn{t: t, c: nc, br: bufio.NewReader(nc)}).do("PING"); got != "+PONG" {
			t.Errorf("%s: PING on the new port: %s", name, got)
		}
		nc.Close()
		if got, want := c.do("CONFIG", "SET", "bind", "192.0.2.1"), "-ERR CONFIG SET failed (possibly related to argument 'bind') - Failed to bind to specified addresses."; got != want {
			t.Errorf("%s: CONFIG SET bind: %s, want %s", name, got, want)
		}
		if got := c.do("CONFIG", "GET", "bind"); got != `["bind", "127.0.0.1"]` {
			t.Errorf("%s: bind after the failure: %s", name, got)
		}
	}
}
