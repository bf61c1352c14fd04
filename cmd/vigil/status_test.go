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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
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
					if _, err := c.Read(buf); err != nil {
						return
					}
					if _, err := c.Write([]byte("-ERR No such master with that name\r\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	var out, errb bytes.Buffer
	if code := run([]string{"vigil", "status", "--sentinel", ln.Addr().String(), "--master", "nosuch"}, &out, &errb); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if e := errb.String(); !strings.Contains(e, `master "nosuch"`) || !strings.Contains(e, "No such master") {
		t.Errorf("stderr %q should name the master and the sentinel's answer", e)
	}
}
