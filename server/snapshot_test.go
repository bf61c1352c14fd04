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
		endSnapshotRound(t, ts, snap, round, got, want)
	}
}

// TestSnapshotUnderListpackInPlaceWrites: ZADD, ZREM and HDEL write a
// listpack in place; a running snapshot's view of the sorted sets and
// hashes stays the one at its start (DB.Mutable copies a value the
// snapshot still needs before the write), including the values it has
// already handed out.
func TestSnapshotUnderListpackInPlaceWrites(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	rng := rand.New(rand.NewPCG(5, 6))
	key := func(p string) string { return p + strconv.Itoa(rng.IntN(6)) }
	member := func() string { return "member:" + strconv.Itoa(rng.IntN(90)) }
	for i := range 6 {
		for j := range 60 {
			ts.do(c, "ZADD", "z"+strconv.Itoa(i), strconv.Itoa(rng.IntN(1000)), "member:"+strconv.Itoa(j))
			ts.do(c, "HSET", "h"+strconv.Itoa(i), "member:"+strconv.Itoa(j), "value:"+strconv.Itoa(j))
		}
	}
	show := func(v keyspace.Value) string {
		var b []byte
		switch x := v.(type) {
		case *keyspace.ZSet:
			x.ForEach(func(m string, s float64) bool {
				b = append(append(append(b, m...), '='), strconv.FormatFloat(s, 'g', -1, 64)...)
				return true
			})
		case *keyspace.Hash:
			x.Range(func(f, v string) bool { b = append(append(append(b, f...), '='), v...); return true })
		}
		return string(b)
	}
	cmds := []func() []string{
		func() []string { return []string{"ZADD", key("z"), strconv.Itoa(rng.IntN(1000)), member()} },
		func() []string { return []string{"ZINCRBY", key("z"), "-7", member()} },
		func() []string { return []string{"ZREM", key("z"), member(), member()} },
		func() []string { return []string{"HSET", key("h"), member(), "v"} },
		func() []string { return []string{"HDEL", key("h"), member(), member()} },
	}
	for round := range 4 {
		ts.s.mu.Lock()
		want := map[string]string{}
		ts.s.ks.DBs[0].ForEach(func(k string, e *keyspace.Entry) bool { want[k] = show(e.Value()); return true })
		snap, err := ts.s.ks.BeginSnapshot()
		ts.s.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		var items []keyspace.Value
		var names []string
		var buf []keyspace.Item
		for done := false; !done; {
			for range 20 {
				ts.do(c, cmds[rng.IntN(len(cmds))]()...)
			}
			ts.s.mu.Lock()
			buf, done = snap.Step(buf[:0], 2)
			ts.s.mu.Unlock()
			for _, it := range buf {
				got[it.Key] = show(it.Value)
				items, names = append(items, it.Value), append(names, it.Key)
			}
		}
		for range 200 {
			ts.do(c, cmds[rng.IntN(len(cmds))]()...)
		}
		for i, v := range items { // values handed out stay as they were until Close
			if s := show(v); s != want[names[i]] {
				t.Errorf("round %d: %s handed out, then changed to %q, want %q", round, names[i], s, want[names[i]])
			}
		}
		endSnapshotRound(t, ts, snap, round, got, want)
	}
}

// endSnapshotRound checks that a round's snapshot read got, the
// keyspace's contents when it began (want), then closes it under the
// server's lock.
func endSnapshotRound(t *testing.T, ts *testServer, snap *keyspace.Snapshot, round int, got, want map[string]string) {
	t.Helper()
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
