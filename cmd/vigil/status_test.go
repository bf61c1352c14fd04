package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
)

// A sentinel that does not know the master answers; the error says so
// rather than "no sentinel answered".
func TestStatusUnknownMasterSaysSo(t *testing.T) {
	addr := fakeSentinel(t, func(string) string { return "-ERR No such master with that name\r\n" })
	var out, errb bytes.Buffer
	if code := run([]string{"vigil", "status", "--sentinel", addr, "--master", "nosuch"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if e := errb.String(); !strings.Contains(e, `master "nosuch"`) || !strings.Contains(e, "No such master") {
		t.Errorf("stderr %q should name the master and the sentinel's answer", e)
	}
}

// fakeSentinel listens on a loopback port until the test ends and answers
// every command it reads with reply(what it read); it returns the address.
func fakeSentinel(t *testing.T, reply func(req string) string) string {
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
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(reply(string(buf[:n])))); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}
