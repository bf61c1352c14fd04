package server

import (
	"strconv"
	"strings"
	"testing"
)

// TestInfoMemClients: mem_clients_normal counts every normal client (its
// struct at least) and grows with what a client holds, here a MULTI queue
// of 100 KB, and shrinks back when it is gone; mem_clients_slaves is 0
// without replicas. With maxmemory set, clients are counted after each of
// their commands (else by the cron, as Redis's stat_clients_type_memory).
func TestInfoMemClients(t *testing.T) {
	ts := newTestServer(t, "--maxmemory", "1gb")
	a, b := ts.client(), ts.client()
	num := func(field string) int64 {
		t.Helper()
		var raw string
		for _, line := range strings.Split(ts.do(a, "INFO", "memory"), "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				raw = v
			}
		}
		v, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", field, err)
		}
		return v
	}
	ts.do(a, "PING")
	ts.do(b, "PING")
	base := num("mem_clients_normal")
	if min := 2 * int64(clientStructMem); base < min {
		t.Fatalf("mem_clients_normal %d with two clients, want at least %d", base, min)
	}
	if n := num("mem_clients_slaves"); n != 0 {
		t.Fatalf("mem_clients_slaves %d without replicas", n)
	}
	ts.do(b, "MULTI")
	ts.do(b, "SET", "k", strings.Repeat("x", 100000))
	if grown := num("mem_clients_normal"); grown < base+100000 {
		t.Fatalf("mem_clients_normal %d with a 100 KB MULTI queue, was %d", grown, base)
	}
	ts.do(b, "DISCARD")
	if n := num("mem_clients_normal"); n != base {
		t.Fatalf("mem_clients_normal %d after DISCARD, was %d", n, base)
	}
	if used := num("used_memory"); used < base {
		t.Fatalf("used_memory %d below the clients' %d", used, base)
	}
}
