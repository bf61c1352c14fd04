package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// startLiveTCP is startLive on a loopback TCP port (and a unix socket): the
// connection tests need real TCP half-close and reset behaviour.
func startLiveTCP(t *testing.T, directives ...string) (l *liveServer, tcpAddr string) {
	t.Helper()
	// A free port: the listener is closed and the server binds it at once.
	// Another process taking it in between fails Listen; try again then.
	for attempt := 0; ; attempt++ {
		probe, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := probe.Addr().(*net.TCPAddr).Port
		probe.Close()
		sock := t.TempDir() + "/v.sock"
		ts := newTestServer(t, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--unixsocket", sock}, directives...)...)
		if err := ts.s.Listen(); err != nil {
			if attempt < 5 {
				continue
			}
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		l = &liveServer{testServer: ts, sock: sock, done: make(chan error, 1)}
		go func() { l.done <- ts.s.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			select {
			case <-l.done:
			case <-time.After(10 * time.Second):
				t.Error("server did not stop")
			}
		})
		return l, "127.0.0.1:" + strconv.Itoa(port)
	}
}

// readAllUntilEOF reads c until EOF or the deadline; it reports what it
// read and the error that ended the read (nil at EOF).
func readAllUntilEOF(c net.Conn, d time.Duration) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(d))
	var buf bytes.Buffer
	_, err := io.Copy(&buf, c)
	return buf.Bytes(), err
}

// closeWrite half-closes c (shutdown(SHUT_WR)), as nc -q, proxies and
// health checkers do after their last request.
func closeWrite(t *testing.T, c net.Conn) {
	t.Helper()
	type cw interface{ CloseWrite() error }
	if err := c.(cw).CloseWrite(); err != nil {
		t.Fatal(err)
	}
}

// TestHalfClose: a client that sends requests and half-closes its socket
// gets every reply and then EOF, and the server forgets the connection, as
// redis-server does. Many connections in a row, because the data and the
// FIN usually arrive before the server first reads: the read that returns
// the data consumes the readiness the FIN raised (Go's netpoller is
// edge-triggered), so a server that waits for readiness after a short read
// instead of reading again misses the EOF (it did, about 3 times in 30).
func TestHalfClose(t *testing.T) {
	l, addr := startLiveTCP(t)
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			target := addr
			if network == "unix" {
				target = l.sock
			}
			const conns, parallel = 200, 8
			reqs := []struct{ in, want string }{
				{"PING\r\n", "+PONG\r\n"},
				{"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n", "+PONG\r\n$2\r\nhi\r\n"},
			}
			var wg sync.WaitGroup
			errs := make(chan error, conns)
			sem := make(chan struct{}, parallel)
			for i := 0; i < conns; i++ {
				wg.Add(1)
				sem <- struct{}{}
				go func(i int) {
					defer wg.Done()
					defer func() { <-sem }()
					r := reqs[i%len(reqs)]
					c, err := net.Dial(network, target)
					if err != nil {
						errs <- err
						return
					}
					defer c.Close()
					if _, err := c.Write([]byte(r.in)); err != nil {
						errs <- err
						return
					}
					if err := c.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
						errs <- err
						return
					}
					got, err := readAllUntilEOF(c, 5*time.Second)
					if err != nil || string(got) != r.want {
						errs <- errors.New("connection " + strconv.Itoa(i) + ": read " + strconv.Quote(string(got)) + " then " + errString(err) + ", want " + strconv.Quote(r.want) + " then EOF")
					}
				}(i)
			}
			wg.Wait()
			close(errs)
			n := 0
			for err := range errs {
				if n < 5 {
					t.Error(err)
				}
				n++
			}
			if n > 0 {
				t.Fatalf("%d of %d half-closed connections failed", n, conns)
			}
			waitClients(t, l.s, 0)
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "EOF"
	}
	return err.Error()
}

// TestCloseDuringLargeReply: a client that goes away while a large reply
// is being written (it closes at once, or after reading part of it) does
// not leave the server stuck in the write or the connection registered; a
// client that half-closes after the request gets the whole reply, then
// EOF.
func TestCloseDuringLargeReply(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB replies")
	}
	l, addr := startLiveTCP(t)
	const size = 50 << 20
	val := strings.Repeat("v", size)
	setup := l.dial(t)
	if got := setup.do("SET", "big", val); got != "+OK" {
		t.Fatalf("SET: %q", got)
	}
	setup.c.Close()
	waitClients(t, l.s, 0)
	get := []byte("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
	for _, network := range []string{"tcp", "unix"} {
		target := addr
		if network == "unix" {
			target = l.sock
		}
		t.Run(network+"/close-at-once", func(t *testing.T) {
			for i := 0; i < 3; i++ {
				c, err := net.Dial(network, target)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Write(get); err != nil {
					t.Fatal(err)
				}
				c.Close()
			}
			waitClients(t, l.s, 0)
		})
		t.Run(network+"/close-after-part", func(t *testing.T) {
			c, err := net.Dial(network, target)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(get); err != nil {
				t.Fatal(err)
			}
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.ReadFull(c, make([]byte, 1<<20)); err != nil {
				t.Fatal(err)
			}
			c.Close()
			waitClients(t, l.s, 0)
		})
		t.Run(network+"/half-close", func(t *testing.T) {
			c, err := net.Dial(network, target)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(get); err != nil {
				t.Fatal(err)
			}
			closeWrite(t, c)
			got, err := readAllUntilEOF(c, 20*time.Second)
			if err != nil {
				t.Fatalf("after %d bytes: %v", len(got), err)
			}
			head := "$" + strconv.Itoa(size) + "\r\n"
			if len(got) != len(head)+size+2 || string(got[:len(head)]) != head || string(got[len(got)-2:]) != "\r\n" {
				t.Fatalf("reply of %d bytes, want %d", len(got), len(head)+size+2)
			}
			waitClients(t, l.s, 0)
		})
	}
	// The server still serves.
	if got := l.dial(t).do("STRLEN", "big"); got != "(integer) "+strconv.Itoa(size) {
		t.Fatalf("STRLEN: %q", got)
	}
}

// TestRawReaderMore: on TCP a read says whether the socket still holds
// data or the peer's FIN (TCP_INQ), without another system call; that is
// what lets rawReadLoop wait after a read, and the FIN case is the
// half-close of TestHalfClose.
func TestRawReaderMore(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := newRawReader(srv)
	if r == nil || r.inq == nil {
		if runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64") {
			t.Fatal("TCP_INQ not enabled")
		}
		t.Skip("no TCP_INQ here: reads are followed by another until EAGAIN")
	}
	type result struct {
		n    int
		more bool
		err  error
	}
	// read waits for readiness, then reads once into a buffer of size.
	read := func(size int) result {
		t.Helper()
		srv.SetReadDeadline(time.Now().Add(5 * time.Second))
		var res result
		err := r.rc.Read(func(fd uintptr) bool {
			r.fd = int(fd)
			n, err := r.Read(make([]byte, size))
			if err == errWouldBlock {
				return false
			}
			res = result{n, r.more, err}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if _, err := cli.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if got := read(64); got.n != 3 || got.more || got.err != nil {
		t.Fatalf("drained read: %+v, want 3 bytes and nothing more", got)
	}
	if _, err := cli.Write([]byte("de")); err != nil {
		t.Fatal(err)
	}
	closeWrite(t, cli)
	if got := read(1); got.n != 1 || !got.more {
		t.Fatalf("partial read: %+v, want 1 byte and more", got)
	}
	// Then "e", with more set if the FIN has arrived by then (if not, its
	// own readiness event wakes the next read), then the end of stream.
	if got := read(1); got.n != 1 || got.err != nil {
		t.Fatalf("read: %+v", got)
	}
	if got := read(1); got.n != 0 || got.err != io.EOF {
		t.Fatalf("read after FIN: %+v, want EOF", got)
	}
}
