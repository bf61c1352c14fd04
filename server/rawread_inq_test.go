//go:build linux && (amd64 || arm64)

package server

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// TestRawReaderQueued: after a read, a TCP socket's reader says how many
// bytes are still queued (TCP_INQ), which the request reader sizes its next
// read by (resp.Reader.Fill), and 0 once the socket is drained.
func TestRawReaderQueued(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
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
		t.Skip("no TCP_INQ on this kernel")
	}
	// One loopback segment: the kernel has queued all of it on the
	// server's socket when Write returns.
	const total = 24 << 10
	data := bytes.Repeat([]byte("x"), total)
	if _, err := cli.Write(data); err != nil {
		t.Fatal(err)
	}
	got, reads := 0, 0
	buf := make([]byte, 4<<10)
	deadline := time.Now().Add(10 * time.Second)
	for got < total {
		if time.Now().After(deadline) {
			t.Fatalf("read %d of %d bytes", got, total)
		}
		var n int
		err := r.rc.Read(func(fd uintptr) bool {
			r.fd = int(fd)
			n, err = r.read(buf)
			return err != errWouldBlock
		})
		if err != nil {
			t.Fatal(err)
		}
		got += n
		reads++
		if q := r.Queued(); q != total-got || r.more != (q > 0) {
			t.Fatalf("after %d bytes read: queued %d, more %v; want %d", got, q, r.more, total-got)
		}
	}
	if reads != total/len(buf) {
		t.Fatalf("%d reads of %d bytes for %d bytes", reads, len(buf), total)
	}
	if r.Queued() != 0 || r.more {
		t.Fatalf("drained socket: queued %d, more %v", r.Queued(), r.more)
	}
}
