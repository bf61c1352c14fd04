package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeNode answers every line it reads with the next of replies.
func fakeNode(t *testing.T, replies ...string) string {
	t.Helper()
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
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for _, rep := range replies {
					// AUTH arrives as a multibulk (5 lines); PING inline.
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if line[0] == '*' {
						for i := 0; i < 4; i++ {
							if _, err := r.ReadString('\n'); err != nil {
								return
							}
						}
					}
					c.Write([]byte(rep + "\r\n"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProbeAcceptsWhatRedisProbesAccept(t *testing.T) {
	for _, tc := range []struct {
		reply string
		ok    bool
	}{
		{"+PONG", true},
		{"-LOADING Redis is loading the dataset in memory", true},
		{"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"-NOAUTH Authentication required.", false},
		{"-ERR unknown command", false},
		{"+OK", false},
	} {
		addr := fakeNode(t, tc.reply)
		err := probe(context.Background(), addr, "", time.Second)
		if (err == nil) != tc.ok {
			t.Errorf("reply %q: probe error %v, want ok=%v", tc.reply, err, tc.ok)
		}
	}
}

func TestProbeAuth(t *testing.T) {
	if err := probe(context.Background(), fakeNode(t, "+OK", "+PONG"), "secret", time.Second); err != nil {
		t.Fatalf("AUTH ok then PONG: %v", err)
	}
	if err := probe(context.Background(), fakeNode(t, "-WRONGPASS invalid username-password pair", "+PONG"), "bad", time.Second); err == nil {
		t.Fatal("a refused AUTH passed the probe")
	}
}

func TestProbeUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := probe(context.Background(), addr, "", time.Second); err == nil {
		t.Fatal("probe of a closed port passed")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"vigil", "probe", "--addr", addr}, &out, &errb); code != 1 {
		t.Fatalf("vigil probe of a closed port: exit %d, want 1 (stderr %q)", code, errb.String())
	}
	if code := run([]string{"vigil", "probe", "--addr", fakeNode(t, "+PONG")}, &out, &errb); code != 0 {
		t.Fatalf("vigil probe of a PONG node: exit %d, want 0 (stderr %q)", code, errb.String())
	}
}

func TestInstallConfigKeepsExisting(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "from.conf"), filepath.Join(dir, "data", "to.conf")
	os.WriteFile(from, []byte("port 6379\n"), 0o644)
	if ok, err := installConfig(from, to); err != nil || !ok {
		t.Fatalf("first install: %v %v", ok, err)
	}
	os.WriteFile(to, []byte("port 6379\nreplicaof a 1\n"), 0o644)
	if ok, err := installConfig(from, to); err != nil || ok {
		t.Fatalf("second install: %v %v, want kept", ok, err)
	}
	if b, _ := os.ReadFile(to); string(b) != "port 6379\nreplicaof a 1\n" {
		t.Fatalf("existing config overwritten: %q", b)
	}
}
