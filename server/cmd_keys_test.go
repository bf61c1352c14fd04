package server

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// scanReply decodes SCAN's [cursor, [keys]].
func scanReply(t *testing.T, raw string) (string, []string) {
	t.Helper()
	v, err := readOne(raw)
	if err != nil {
		t.Fatal(err)
	}
	if v.Kind != resp.KindArray || len(v.Elems) != 2 || v.Elems[0].Kind != resp.KindBulk {
		t.Fatalf("bad SCAN reply %q", raw)
	}
	var keys []string
	for _, e := range v.Elems[1].Elems {
		keys = append(keys, e.Str)
	}
	return v.Elems[0].Str, keys
}

func readOne(raw string) (resp.Value, error) {
	return resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits)
}

// TestScanGrowingKeyspace is SCAN's guarantee: every key present for the
// whole iteration is returned at least once, even while the keyspace grows
// (and its table rehashes) between calls.
func TestScanGrowingKeyspace(t *testing.T) {
	// Every growEvery calls, grow keys are added: the table doubles several
	// times mid-scan (so cursors cross rehashes) while the scan still
	// outpaces the growth.
	for _, tc := range []struct{ count, grow, growEvery int }{{1, 4, 1}, {10, 40, 1}, {100, 400, 1}} {
		t.Run("count"+strconv.Itoa(tc.count), func(t *testing.T) {
			ts := newTestServer(t)
			c := ts.client()
			const initial = 500
			for i := 0; i < initial; i++ {
				ts.do(c, "SET", "k"+strconv.Itoa(i), "v")
			}
			seen := map[string]int{}
			cursor, added, calls := "0", 0, 0
			for {
				next, keys := scanReply(t, ts.do(c, "SCAN", cursor, "COUNT", strconv.Itoa(tc.count)))
				for _, k := range keys {
					seen[k]++
				}
				calls++
				if calls%tc.growEvery == 0 {
					for j := 0; j < tc.grow; j++ {
						ts.do(c, "SET", "new"+strconv.Itoa(added), "v")
						added++
					}
				}
				if next == "0" {
					break
				}
				if calls > 200000 {
					t.Fatal("SCAN does not terminate")
				}
				cursor = next
			}
			for i := 0; i < initial; i++ {
				if seen["k"+strconv.Itoa(i)] == 0 {
					t.Errorf("k%d never returned (%d calls, %d keys added)", i, calls, added)
				}
			}
			if added < 4*initial { // the 512-bucket table doubled at least twice
				t.Errorf("only %d keys added during the scan", added)
			}
			t.Logf("%d calls, %d keys added", calls, added)
		})
	}
}

func TestScanSkipsExpiredAndFilters(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	for i := 0; i < 50; i++ {
		ts.do(c, "SET", "live"+strconv.Itoa(i), "v")
		ts.do(c, "SET", "gone"+strconv.Itoa(i), "v", "PX", "10")
	}
	ts.s.mu.Lock()
	ts.s.ks.DBs[0].Set([]byte("other"), notAString{}, ts.clk.Now().UnixMilli())
	ts.s.mu.Unlock()
	ts.clk.Advance(11 * time.Millisecond)
	all := map[string]bool{}
	nStrings := 0
	for _, typ := range []string{"", "string"} {
		cursor := "0"
		for {
			args := []string{"SCAN", cursor, "COUNT", "7"}
			if typ != "" {
				args = append(args, "TYPE", typ)
			}
			next, keys := scanReply(t, ts.do(c, args...))
			for _, k := range keys {
				if strings.HasPrefix(k, "gone") {
					t.Errorf("expired key %s returned", k)
				}
				if typ == "" {
					all[k] = true
				} else {
					if k == "other" {
						t.Errorf("TYPE string returned a non-string")
					}
					nStrings++
				}
			}
			if next == "0" {
				break
			}
			cursor = next
		}
	}
	if len(all) != 51 || nStrings < 50 {
		t.Errorf("saw %d keys, %d strings", len(all), nStrings)
	}
}

func TestParseScanCursor(t *testing.T) {
	for in, want := range map[string]uint64{
		"0": 0, "": 0, "+5": 5, "-0": 0, "007": 7, "-1": 1<<64 - 1,
		"18446744073709551615": 1<<64 - 1, "3\x00junk": 3,
	} {
		if got, ok := parseScanCursor([]byte(in)); !ok || got != want {
			t.Errorf("%q: %d %v, want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{" 0", "0 ", "x", "+", "-", "1.5", "0x10", "18446744073709551616", "-18446744073709551616"} {
		if _, ok := parseScanCursor([]byte(in)); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestExpiredKeysStat(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	expired := func() int64 {
		ts.s.mu.Lock()
		defer ts.s.mu.Unlock()
		if ts.s.stats.expiredKeys != ts.s.ks.Stats.ExpiredKeys {
			t.Errorf("OnExpire hook saw %d expiries, keyspace counted %d", ts.s.stats.expiredKeys, ts.s.ks.Stats.ExpiredKeys)
		}
		return ts.s.ks.Stats.ExpiredKeys
	}
	ts.do(c, "SET", "a", "v", "PX", "100")
	ts.do(c, "SET", "b", "v", "PX", "100")
	ts.do(c, "SET", "c", "v")
	ts.clk.Advance(100 * time.Millisecond)
	ts.do(c, "GET", "a") // now == expire time: still there
	if n := expired(); n != 0 {
		t.Fatalf("expired_keys %d at the expire time", n)
	}
	ts.clk.Advance(time.Millisecond)
	if got := ts.doR(t, c, "DEL", "a", "c"); got != "(integer) 1" {
		t.Errorf("DEL counted an expired key: %s", got)
	}
	ts.do(c, "EXISTS", "b")
	if n := expired(); n != 2 {
		t.Errorf("expired_keys = %d, want 2", n)
	}
	// EXPIRE into the past deletes without counting an expiry (as Redis).
	ts.do(c, "SET", "d", "v")
	ts.do(c, "EXPIRE", "d", "-1")
	if n := expired(); n != 2 {
		t.Errorf("expired_keys = %d after EXPIRE -1, want 2", n)
	}
}

func TestObjectUnderLFU(t *testing.T) {
	ts := newTestServer(t, "--maxmemory-policy", "allkeys-lfu")
	c := ts.client()
	ts.do(c, "SET", "k", "hello")
	if got := ts.doR(t, c, "OBJECT", "IDLETIME", "k"); got != "-"+ErrLFUSelected {
		t.Errorf("IDLETIME under LFU: %s", got)
	}
	if got := ts.doR(t, c, "OBJECT", "FREQ", "k"); got[:10] != "(integer) " {
		t.Errorf("FREQ under LFU: %s", got)
	}
	if got := ts.doR(t, c, "OBJECT", "FREQ", "nokey"); got != "(nil)" {
		t.Errorf("FREQ of a missing key: %s", got)
	}
}

func TestObjectFreqAfterConfigSet(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "hello")
	if got := ts.doR(t, c, "CONFIG", "SET", "maxmemory-policy", "volatile-lfu"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	ts.do(c, "SET", "k2", "hello")
	if got := ts.doR(t, c, "OBJECT", "FREQ", "k2"); got != "(integer) 5" { // LFU_INIT_VAL
		t.Errorf("FREQ of a new key: %s", got)
	}
	for i := 0; i < 100; i++ {
		ts.do(c, "GET", "k2")
	}
	if got := ts.doR(t, c, "OBJECT", "FREQ", "k2"); got == "(integer) 5" {
		t.Errorf("FREQ did not grow with accesses: %s", got)
	}
	if got := ts.doR(t, c, "OBJECT", "IDLETIME", "k2"); got != "-"+ErrLFUSelected {
		t.Errorf("IDLETIME: %s", got)
	}
	ts.do(c, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	if got := ts.doR(t, c, "OBJECT", "FREQ", "k2"); got != "-"+ErrLFUNotSelected {
		t.Errorf("FREQ after switching back: %s", got)
	}
}

func TestObjectRefcountWithMaxmemory(t *testing.T) {
	// With maxmemory set and an LRU/LFU policy Redis stops sharing integers.
	ts := newTestServer(t, "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru")
	c := ts.client()
	ts.do(c, "SET", "k", "5")
	if got := ts.doR(t, c, "OBJECT", "REFCOUNT", "k"); got != "(integer) 1" {
		t.Errorf("REFCOUNT: %s", got)
	}
	ts2 := newTestServer(t, "--maxmemory", "100mb")
	c2 := ts2.client()
	ts2.do(c2, "SET", "k", "5")
	if got := ts2.doR(t, c2, "OBJECT", "REFCOUNT", "k"); got != "(integer) 2147483647" {
		t.Errorf("REFCOUNT under noeviction: %s", got)
	}
}

func TestObjectDoesNotTouch(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "v")
	ts.clk.Advance(5 * time.Second)
	for _, cmd := range [][]string{
		{"OBJECT", "ENCODING", "k"}, {"TYPE", "k"}, {"EXISTS", "k"}, {"TTL", "k"}, {"PTTL", "k"},
		{"SCAN", "0"}, {"KEYS", "*"}, {"OBJECT", "REFCOUNT", "k"},
	} {
		ts.do(c, cmd...)
	}
	if got := ts.doR(t, c, "OBJECT", "IDLETIME", "k"); got != "(integer) 5" {
		t.Errorf("IDLETIME after non-touching commands: %s", got)
	}
	ts.do(c, "TOUCH", "k")
	if got := ts.doR(t, c, "OBJECT", "IDLETIME", "k"); got != "(integer) 0" {
		t.Errorf("IDLETIME after TOUCH: %s", got)
	}
}

func TestRenameMoveKeepMetadata(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "v", "PX", "5000")
	ts.clk.Advance(3 * time.Second)
	ts.do(c, "RENAME", "k", "k2")
	// RENAME looks the source up for writing, which touches it (as Redis).
	if got := ts.doR(t, c, "OBJECT", "IDLETIME", "k2"); got != "(integer) 0" {
		t.Errorf("IDLETIME after RENAME: %s", got)
	}
	ts.clk.Advance(time.Second)
	if got := ts.doR(t, c, "PTTL", "k2"); got != "(integer) 1000" {
		t.Errorf("PTTL after RENAME: %s", got)
	}
	ts.do(c, "MOVE", "k2", "3")
	ts.do(c, "SELECT", "3")
	if got := ts.doR(t, c, "PTTL", "k2"); got != "(integer) 1000" {
		t.Errorf("PTTL after MOVE: %s", got)
	}
	// COPY makes an independent value.
	ts.do(c, "COPY", "k2", "k3")
	ts.do(c, "SETRANGE", "k3", "0", "X")
	ts.do(c, "APPEND", "k3", "yz")
	if got := ts.doR(t, c, "GET", "k2"); got != `"v"` {
		t.Errorf("COPY shares its value: %s", got)
	}
	ts.clk.Advance(1001 * time.Millisecond)
	if got := ts.doR(t, c, "EXISTS", "k2", "k3"); got != "(integer) 0" {
		t.Errorf("copied TTL: %s", got)
	}
}

func TestTypeOfOtherValues(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.s.mu.Lock()
	ts.s.ks.DBs[0].Set([]byte("x"), notAString{}, ts.clk.Now().UnixMilli())
	ts.s.mu.Unlock()
	// Served by the value model: nothing in these commands knows lists.
	for _, tc := range []struct{ cmd, want string }{
		{"TYPE x", "+list"},
		{"OBJECT ENCODING x", `"quicklist"`},
		{"MEMORY USAGE x", "(integer) 1032"}, // Size + the key's sds (8) + the dictEntry (24)
		{"COPY x y", "(integer) 1"},
		{"TYPE y", "+list"},
		{"SCAN 0 TYPE list", ""},
		{"DEL y", "(integer) 1"},
	} {
		got := ts.doR(t, c, strings.Fields(tc.cmd)...)
		if tc.want != "" && got != tc.want {
			t.Errorf("%s: %s, want %s", tc.cmd, got, tc.want)
		}
		if tc.want == "" && !strings.Contains(got, `"x"`) {
			t.Errorf("%s: %s, want x listed", tc.cmd, got)
		}
	}
	ts.s.mu.Lock()
	got := ts.s.debugObject(ts.s.ks.DBs[0].Peek([]byte("x")))
	ts.s.mu.Unlock()
	if !strings.Contains(got, " encoding:quicklist ") {
		t.Errorf("DEBUG OBJECT: %s", got)
	}
	if got := ts.doR(t, c, "RENAME", "x", "y"); got != "+OK" {
		t.Errorf("RENAME: %s", got)
	}
	if got := ts.doR(t, c, "EXPIRE", "y", "10"); got != "(integer) 1" {
		t.Errorf("EXPIRE: %s", got)
	}
	if got := ts.doR(t, c, "DEL", "y"); got != "(integer) 1" {
		t.Errorf("DEL: %s", got)
	}
}

func TestDelOnReplicaRemovesExpiredKey(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "SET", "k", "v", "PX", "10")
	ts.s.mu.Lock()
	ts.s.ks.Replica = true
	ts.s.mu.Unlock()
	ts.clk.Advance(20 * time.Millisecond)
	if got := ts.doR(t, c, "GET", "k"); got != "(nil)" {
		t.Fatalf("GET of an expired key on a replica: %s", got)
	}
	// The master's DEL (or EXPIRE into the past) must still remove it.
	if got := ts.doR(t, c, "DEL", "k"); got != "(integer) 1" {
		t.Errorf("DEL on a replica: %s", got)
	}
	ts.do(c, "SET", "k2", "v")
	if got := ts.doR(t, c, "PEXPIREAT", "k2", "1"); got != "(integer) 1" {
		t.Errorf("PEXPIREAT: %s", got)
	}
	ts.s.mu.Lock()
	kept := ts.s.ks.DBs[0].Peek([]byte("k2")) != nil
	ts.s.mu.Unlock()
	if !kept {
		t.Errorf("a replica deleted a key on EXPIRE into the past")
	}
}
