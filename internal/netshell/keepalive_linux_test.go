package netshell

import (
	"net"
	"syscall"
	"testing"
)

// TestAcceptedKeepAliveLikeRedis: an accepted TCP connection has
// TCP_NODELAY and anetKeepAlive's probes for tcp-keepalive N (idle N s,
// every N/3 s, 3 of them), and none at all for tcp-keepalive 0, as
// redis-server's (Go's own 15 s default is not applied).
func TestAcceptedKeepAliveLikeRedis(t *testing.T) {
	ls, err := ListenTCP([]string{"127.0.0.1"}, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	ln := ls[0]
	defer ln.Close()
	for _, tc := range []struct {
		keepAlive            int
		on, idle, intvl, cnt int
	}{
		{300, 1, 300, 100, 3},
		{2, 1, 2, 1, 3},
		{0, 0, -1, -1, -1},
	} {
		cli, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		conn, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		Accepted(conn, tc.keepAlive)
		rc, err := conn.(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		get := func(level, opt int) int {
			var v int
			var gerr error
			if err := rc.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), level, opt) }); err != nil || gerr != nil {
				t.Fatal(err, gerr)
			}
			return v
		}
		if nd := get(syscall.IPPROTO_TCP, syscall.TCP_NODELAY); nd == 0 {
			t.Errorf("tcp-keepalive %d: TCP_NODELAY off", tc.keepAlive)
		}
		if on := get(syscall.SOL_SOCKET, syscall.SO_KEEPALIVE); on != tc.on {
			t.Errorf("tcp-keepalive %d: SO_KEEPALIVE %d, want %d", tc.keepAlive, on, tc.on)
		}
		if tc.on == 1 {
			idle, intvl, cnt := get(syscall.IPPROTO_TCP, syscall.TCP_KEEPIDLE), get(syscall.IPPROTO_TCP, syscall.TCP_KEEPINTVL), get(syscall.IPPROTO_TCP, syscall.TCP_KEEPCNT)
			if idle != tc.idle || intvl != tc.intvl || cnt != tc.cnt {
				t.Errorf("tcp-keepalive %d: idle %d, interval %d, count %d; want %d, %d, %d", tc.keepAlive, idle, intvl, cnt, tc.idle, tc.intvl, tc.cnt)
			}
		}
		conn.Close()
		cli.Close()
	}
}
