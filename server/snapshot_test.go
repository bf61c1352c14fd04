package server

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// TestSnapshotUnderStringWrites: every string command that writes, in place
// or not, keeps a running snapshot's view of the keyspace at its start
// (they go through keyspace.DB.Set and DB.Mutable).
func TestSnapshotUnderStringWrites(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() string { return "k" + strconv.Itoa(rng.IntN(40)) }
	num := func(n int) string { return strconv.Itoa(rng.IntN(n)) }
	for i := range 40 {
		ts.do(c, "SET", "k"+strconv.Itoa(i), strconv.Itoa(i*37))
	}
	ts.do(c, "EXPIRE", "k5", "100")
	dump := func() map[string]string {
		m := map[string]string{}
		for d, db := range ts.s.ks.DBs {
			db.ForEach(func(k string, e *keyspace.Entry) bool {
				s := e.Value().(*keyspace.String)
				m[strconv.Itoa(d)+":"+k] = string(s.Bytes()) + "|" + strconv.FormatInt(db.ExpireAt(e), 10)
				return true
			})
		}
		return m
	}
	cmds := []func() []string{
		func() []string { return []string{"SET", key(), num(1000)} },
		func() []string { return []string{"SET", key(), num(1000), "KEEPTTL"} },
		func() []string { return []string{"MSET", key(), num(100), key(), "abc"} },
		func() []string { return []string{"APPEND", key(), "xy"} },
		func() []string { return []string{"SETRANGE", key(), num(8), "Z"} },
		func() []string { return []string{"SETBIT", key(), num(40), num(2)} },
		func() []string { return []string{"BITFIELD", key(), "INCRBY", "u8", num(32), "7"} },
		func() []string { return []string{"INCR", key()} },
		func() []string { return []string{"DECRBY", key(), num(50)} },
		func() []string { return []string{"INCRBYFLOAT", key(), "1.5"} },
		func() []string { return []string{"GETSET", key(), num(10)} },
		func() []string { return []string{"GETDEL", key()} },
		func() []string { return []string{"PEXPIRE", key(), num(50)} },
		func() []string { return []string{"PERSIST", key()} },
		func() []string { return []string{"RENAME", key(), key()} },
		func() []string { return []string{"COPY", key(), key(), "REPLACE"} },
		func() []string { return []string{"MOVE", key(), "1"} },
		func() []string { return []string{"BITOP", "OR", key(), key(), key()} },
		func() []string { return []string{"DEL", key()} },
	}
	for round := range 5 {
		ts.s.mu.Lock()
		want := dump()
		snap, err := ts.s.ks.BeginSnapshot()
		ts.s.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		var buf []keyspace.Item
		for done := false; !done; {
			for range 10 {
				ts.do(c, cmds[rng.IntN(len(cmds))]()...)
			}
			if round == 4 && rng.IntN(10) == 0 {
				ts.do(c, "FLUSHALL")
			}
			ts.s.mu.Lock()
			buf, done = snap.Step(buf[:0], 3)
			ts.s.mu.Unlock()
			for _, it := range buf {
				got[strconv.Itoa(it.DB)+":"+it.Key] = string(it.Value.(*keyspace.String).Bytes()) + "|" + strconv.FormatInt(it.ExpireAt, 10)
			}
		}
		for range 50 { // values handed out stay as they were until Close
			ts.do(c, cmds[rng.IntN(len(cmds))]()...)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("round %d: %s = %q, want %q", round, k, got[k], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("round %d: %d keys, want %d", round, len(got), len(want))
		}
		ts.s.mu.Lock()
		snap.Close()
		ts.s.mu.Unlock()
	}
}
