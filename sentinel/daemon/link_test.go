package daemon

import (
	"bufio"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestLinkSpontaneousError: an error reply no command waits for (the
// -NOAUTH answering SUBSCRIBE when the default user was switched off)
// closes the link, as hiredis disconnects the context; a message is a push.
func TestLinkSpontaneousError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		// CLIENT SETNAME gets its reply, then SUBSCRIBE (no callback) a
		// message, then an error.
		if _, err := resp.ReadValue(br, resp.ReplyLimits{MaxBulk: 1 << 20, MaxElems: 16, MaxDepth: 4}); err != nil {
			return
		}
		c.Write([]byte("-NOAUTH Authentication required.\r\n"))
		c.Write([]byte("*3\r\n$7\r\nmessage\r\n$1\r\nc\r\n$1\r\np\r\n"))
		c.Write([]byte("-NOAUTH Authentication required.\r\n"))
		time.Sleep(5 * time.Second)
	}()
	pushes := make(chan resp.Value, 4)
	closed := make(chan error, 1)
	l, err := dialLink(ln.Addr().String(), time.Second, nil, func(v resp.Value) { pushes <- v }, func(err error) { closed <- err })
	if err != nil {
		t.Fatal(err)
	}
	replied := make(chan Reply, 1)
	l.Send(func(r Reply) { replied <- r }, "CLIENT", "SETNAME", "x")
	l.SendNoReply("SUBSCRIBE", "c")
	if r := <-replied; !r.V.IsError() {
		t.Fatalf("SETNAME reply %+v, want the error", r)
	}
	if v := <-pushes; len(v.Elems) != 3 || v.Elems[0].Str != "message" {
		t.Fatalf("push %+v, want the message", v)
	}
	select {
	case err := <-closed:
		var se *SpontaneousError
		if !errors.As(err, &se) || se.Text != "NOAUTH Authentication required." {
			t.Fatalf("closed with %v, want the spontaneous -NOAUTH", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the link stayed open after a spontaneous error reply")
	}
}
