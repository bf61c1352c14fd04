package deploy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
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

// TestMain lets the test binary act as a foreign client: with
// DEPLOY_TEST_DIAL=addr it connects there and relays stdin lines to the
// connection and the replies to stdout, as another process would.
func TestMain(m *testing.M) {
	netnsHelper() // exits when run as the namespaces tests' helper
	if addr := os.Getenv("DEPLOY_TEST_DIAL"); addr != "" {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		in, r := bufio.NewScanner(os.Stdin), bufio.NewReader(c)
		for in.Scan() {
			got, err := roundTrip(c, r, in.Text(), 300*time.Millisecond)
			if err != nil {
				fmt.Println("error:", err)
				continue
			}
			fmt.Print(got)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestPartitionPeersKeepsThisProcessClients(t *testing.T) {
	p, err := newProxy("127.0.0.1", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	addr := net.JoinHostPort("127.0.0.1", itoa(p.port()))

	// A foreign client: the test binary in another process.
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "DEPLOY_TEST_DIAL="+addr)
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	out := bufio.NewReader(stdout)
	foreign := func(msg string) string {
		fmt.Fprintln(stdin, msg)
		line, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("child: %v", err)
		}
		return line
	}
	if got := foreign("a"); got != "a\n" {
		t.Fatalf("foreign client before the cut: %q", got)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if !ownSocket(c.LocalAddr(), c.RemoteAddr()) {
		t.Fatal("ownSocket: this process's connection not recognized")
	}

	d := &Deployment{Servers: []*Node{{Name: "server-x", proxy: p}}}
	heal, err := d.PartitionPeers(d.Servers)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(c, r, "local", 5*time.Second); err != nil || got != "local\n" {
		t.Fatalf("this process's client during the cut: %q, %v", got, err)
	}
	if got := foreign("b"); !strings.Contains(got, "timeout") {
		t.Fatalf("foreign client during the cut: %q, want a timeout", got)
	}
	if err := heal(); err != nil {
		t.Fatal(err)
	}
	if got, err := roundTrip(c, r, "still", 5*time.Second); err != nil || got != "still\n" {
		t.Fatalf("this process's client after heal: %q, %v", got, err)
	}
}
