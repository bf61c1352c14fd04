package deploy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer echoes every line back; it is closed with the test.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

func roundTrip(c net.Conn, r *bufio.Reader, msg string, wait time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func TestProxyCutDropsTrafficAndHealRestoresIt(t *testing.T) {
	p, err := newProxy("127.0.0.1", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	addr := net.JoinHostPort("127.0.0.1", itoa(p.port()))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if got, err := roundTrip(c, r, "one", 5*time.Second); err != nil || got != "one\n" {
		t.Fatalf("before the cut: %q, %v", got, err)
	}

	d := &Deployment{Servers: []*Node{{Name: "server-x", proxy: p}}}
	heal, err := d.Partition(d.Servers)
	if err != nil {
		t.Fatal(err)
	}
	// Open connections stay open but nothing gets through: a timeout,
	// not a reset.
	if _, err := roundTrip(c, r, "two", 300*time.Millisecond); err == nil || !isTimeout(err) {
		t.Fatalf("during the cut, open connection: %v, want a timeout", err)
	}
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("during the cut, a new connection is accepted (then swallowed): %v", err)
	}
	defer c2.Close()
	if _, err := roundTrip(c2, bufio.NewReader(c2), "three", 300*time.Millisecond); err == nil || !isTimeout(err) {
		t.Fatalf("during the cut, new connection: %v, want a timeout", err)
	}

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	// The connections that lived through the cut are closed.
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.ReadString('\n'); err == nil || isTimeout(err) {
		t.Fatalf("after heal, the cut connection: %v, want it closed", err)
	}
	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3, bufio.NewReader(c3), "four", 5*time.Second); err != nil || got != "four\n" {
		t.Fatalf("after heal: %q, %v", got, err)
	}
}

func TestPartitionNeedsProxy(t *testing.T) {
	d := &Deployment{Servers: []*Node{{Name: "server-x"}}}
	if _, err := d.Partition(d.Servers); err == nil {
		t.Fatal("Partition without a proxy succeeded")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}
