package netshell

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
)

func TestQueue(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	var writes, out atomic.Int64
	q := NewQueue(a, 10, &writes, &out)
	go q.Run()
	got := make(chan string, 1)
	go func() {
		all, _ := io.ReadAll(b)
		got <- string(all)
	}()
	if !q.Push([]byte("ab")) || !q.Push([]byte("cd")) {
		t.Fatal("Push under the limit refused")
	}
	q.Close()
	if q.Push([]byte("x")) {
		t.Fatal("Push after Close accepted")
	}
	a.Close()
	if s := <-got; s != "abcd" {
		t.Fatalf("wrote %q", s)
	}
	if writes.Load() != 2 || out.Load() != 4 {
		t.Fatalf("counted %d writes, %d bytes", writes.Load(), out.Load())
	}
}

func TestQueueLimitCloses(t *testing.T) {
	a, b := net.Pipe() // nobody reads b: the writer blocks on the first write
	defer b.Close()
	q := NewQueue(a, 10, nil, nil)
	go q.Run()
	q.Push([]byte("12345"))
	q.Push([]byte("12345"))
	if q.Push([]byte("123456789012")) {
		t.Fatal("Push over the limit accepted")
	}
	q.Close() // the connection is closed: the blocked write fails, Run ends
}
