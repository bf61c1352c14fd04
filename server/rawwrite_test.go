package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	a, err = net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b = <-acc
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// bigPayload is larger than a loopback socket's buffers, so that a write
// of it meets EAGAIN and waits for the peer to read.
func bigPayload() []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < 8<<20; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%97))
		b.WriteString("\n")
	}
	return b.Bytes()
}

// TestWriteRawConn: a client whose socket is read directly is written by
// other goroutines (a replica's writer, pushLoop) with raw system calls
// inside RawConn.Write: every byte arrives in order, also when the socket
// fills and the write has to wait for the peer, nothing stays counted in
// flight, and a write to a connection the peer reset fails.
func TestWriteRawConn(t *testing.T) {
	a, b := tcpPair(t)
	c := &Client{conn: a, raw: newRawReader(a)}
	if c.raw == nil {
		t.Skip("no raw access to the socket")
	}
	payload := bigPayload()
	got := make(chan []byte, 1)
	go func() {
		b.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf, _ := io.ReadAll(io.LimitReader(b, int64(2*len(payload))))
		got <- buf
	}()
	for range 2 {
		if !c.write(payload, time.Now()) {
			t.Fatal("write failed")
		}
		if n := c.inflight.Load(); n != 0 {
			t.Fatalf("inflight after the write: %d", n)
		}
	}
	if !c.write(nil, time.Now()) {
		t.Fatal("an empty write failed")
	}
	if buf := <-got; !bytes.Equal(buf, append(append([]byte(nil), payload...), payload...)) {
		t.Fatalf("the peer read %d bytes, not the %d written in order", len(buf), 2*len(payload))
	}
	b.(*net.TCPConn).SetLinger(0)
	b.Close() // a reset
	deadline := time.Now().Add(10 * time.Second)
	for c.write([]byte("more\r\n"), time.Now()) {
		if time.Now().After(deadline) {
			t.Fatal("writes to a reset connection keep succeeding")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriteRawConnClosed: closing the connection (as kill does: shut
// down, then closed on another goroutine) ends a write that waits for a
// peer that does not read.
func TestWriteRawConnClosed(t *testing.T) {
	a, _ := tcpPair(t)
	c := &Client{conn: a, raw: newRawReader(a)}
	if c.raw == nil {
		t.Skip("no raw access to the socket")
	}
	done := make(chan bool, 1)
	go func() { done <- c.write(bigPayload(), time.Now()) }()
	// The write fills the socket and waits; the close wakes it.
	for c.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	_ = c.raw.rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_RDWR) })
	go a.Close()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("the write to a closed connection succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the write did not end when the connection closed")
	}
}

// TestLinkConn: a replica's link to its master reads and writes with raw
// system calls but behaves as the net.Conn it wraps: all bytes in order
// both ways (a write waits for a slow reader), io.EOF at the end, the
// read deadline's timeout error and the closed connection's error, with
// net.Conn's error texts.
func TestLinkConn(t *testing.T) {
	a, b := tcpPair(t)
	l := newLinkConn(a)
	if _, ok := l.(*linkConn); !ok {
		t.Skip("no raw access to the socket")
	}
	payload := bigPayload()
	// Master to replica: a large stream, read in small pieces.
	go func() { b.Write(payload) }()
	var got bytes.Buffer
	buf := make([]byte, 1000)
	for got.Len() < len(payload) {
		n, err := l.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(buf[:n])
	}
	if !bytes.Equal(got.Bytes(), payload) {
		t.Fatal("the stream read differs from the one written")
	}
	// Replica to master: a write larger than the socket buffers.
	read := make(chan []byte, 1)
	go func() {
		b.SetReadDeadline(time.Now().Add(30 * time.Second))
		buf, _ := io.ReadAll(io.LimitReader(b, int64(len(payload))))
		read <- buf
	}()
	if n, err := l.Write(payload); err != nil || n != len(payload) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if !bytes.Equal(<-read, payload) {
		t.Fatal("the peer read differs from the write")
	}
	// A read deadline: net.Conn's timeout error.
	l.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := l.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past the deadline: %v", err)
	}
	_, want := a.Read(buf) // the wrapped net.Conn, its deadline passed as well
	if want == nil || err.Error() != want.Error() {
		t.Fatalf("Read past the deadline: %q, net.Conn's: %q", err, want)
	}
	l.SetReadDeadline(time.Time{})
	// The peer's close: io.EOF.
	b.Close()
	if _, err := l.Read(buf); err != io.EOF {
		t.Fatalf("Read after the peer closed: %v", err)
	}
	// Closed: net.ErrClosed.
	l.Close()
	if _, err := l.Read(buf); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := l.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}
