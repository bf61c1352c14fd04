package server

import (
	"bufio"
	"math"
	"math/rand/v2"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestRandomDifferential (interop) sends the same random stream of string,
// keyspace, expire and transaction commands (valid and invalid arguments,
// a handful of keys in a few databases, two clients) to Vigil and to a live
// redis-server 7.0.15 and compares every reply byte for byte, in RESP2 and
// in RESP3.
//
// Replies that depend on the wall clock are compared loosely: TTL and PTTL
// by sign only, EXPIRETIME and PEXPIRETIME within a few seconds (Vigil's
// clock is set to the real time when the run starts and stands still).
// Relative expire times are all distinct and at least 1000 s apart, so
// that NX/XX/GT/LT decisions do not depend on when a command ran. KEYS is
// compared as a set (Redis's order depends on its random hash seed), and
// RANDOMKEY only runs when the database holds at most one key.
func TestRandomDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	// VIGIL_RANDOM_SEEDS=n and VIGIL_RANDOM_COMMANDS=n run more.
	seeds, n := randomDiffSeeds(10, 3000) // diffharness_test.go
	// The oracle also writes its AOF: every run's propagated stream is
	// compared with it (aof_oracle_test.go).
	dial, aof := startRedisAOF(t)
	for _, mode := range []string{"resp2", "resp3", "lru"} {
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			if mode == "lru" && seed > uint64(seeds+2)/3 {
				break
			}
			t.Run(mode+"/seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
				randomDiffRun(t, dial, aof, mode, seed, n)
			})
		}
	}
}

// rdSide is one of the two clients on both servers.
type rdSide struct {
	*diffSide
	inMulti bool
}

type rdGen struct {
	rng  *rand.Rand
	base int64 // unix seconds when the run started
	seq  int64 // makes every relative expire time distinct
}

var rdKeys = []string{"a", "b", "c", "d", "e"}

func (g *rdGen) key() string { return rdKeys[g.rng.IntN(len(rdKeys))] }

func (g *rdGen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

func (g *rdGen) value() string {
	r := g.rng
	switch r.IntN(14) {
	case 0:
		return g.pick("0", "1", "-1", "42", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
			"-9223372036854775809", "007", "+1", " 1", "1 ", "-0", "10000", "9999", "12345678901234567890", "1e3")
	case 1:
		return strconv.FormatInt(r.Int64()>>uint(r.IntN(63)), 10)
	case 2:
		return g.pick("1.5", "-0.0", "0.1", "3e5", "1e400", "inf", "-inf", "+inf", "nan", "0x10", "1.", ".5", " .5",
			"10.50", "5.0e3", "1.7976931348623157e308", "-1.1", "3.0000000000000001", "1e-10", "123456789.123456789")
	case 3:
		return ""
	case 4:
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	case 5:
		return strings.Repeat(string(rune('a'+r.IntN(26))), 40+r.IntN(10))
	case 6:
		return strings.Repeat("xy", 100+r.IntN(1000))
	case 7, 8:
		return strconv.Itoa(r.IntN(20001) - 5000)
	case 9:
		f := r.NormFloat64() * math.Pow(10, float64(r.IntN(41)-20))
		return strconv.FormatFloat(f, "fegf"[r.IntN(4)], r.IntN(22)-1, 64)
	}
	n := 1 + r.IntN(8)
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcxyz"[r.IntN(6)]
	}
	return string(b)
}

// relSec is a relative expire time in seconds: far in the future, distinct
// from every other one, sometimes invalid or in the past.
func (g *rdGen) relSec() string {
	switch g.rng.IntN(16) {
	case 0:
		return g.pick("0", "-1", "-100", "x", "", "1.5", "9223372036854775807", "-9223372036854775808",
			"9223372036854775", "9223372036854776", "4611686018427387", "-9223372036854775", "+5")
	}
	g.seq++
	return strconv.FormatInt(100000+g.seq*1000+int64(g.rng.IntN(1000)), 10)
}

func (g *rdGen) relMs() string {
	switch g.rng.IntN(16) {
	case 0:
		return g.pick("0", "-1", "-100", "x", "9223372036854775807", "-9223372036854775808",
			"9223372036854775", "9223372036854776000", "4611686018427387904")
	}
	g.seq++
	return strconv.FormatInt((100000+g.seq*1000)*1000+int64(g.rng.IntN(1000000)), 10)
}

// absSec is an absolute unix time in seconds: in the past or (exactly
// comparable) far in the future.
func (g *rdGen) absSec() string { return g.abs(false) }

func (g *rdGen) absMs() string { return g.abs(true) }

// futureAbs is an absolute time for SET's EXAT and PXAT: a key stored
// with an expire time in the past stays in the database until Redis's
// active expire cycle (run in the background) deletes it, so DBSIZE would
// depend on timing.
func (g *rdGen) futureAbs(ms bool) string {
	if g.rng.IntN(8) == 0 {
		return g.pick("0", "-1", "x", "9223372036854775807", "-9223372036854775808")
	}
	v := g.base + 500000000 + int64(g.rng.IntN(100))*1000000
	if ms {
		return strconv.FormatInt(v*1000+int64(g.rng.IntN(1000)), 10)
	}
	return strconv.FormatInt(v, 10)
}

func (g *rdGen) abs(ms bool) string {
	if ms {
		return g.absMs0()
	}
	switch g.rng.IntN(12) {
	case 0:
		return g.pick("0", "1", "-1", "x", "9223372036854775807", "9223372036854775", "-9223372036854775808")
	case 1, 2:
		return strconv.FormatInt(g.base-1-int64(g.rng.IntN(1000000)), 10)
	}
	return strconv.FormatInt(g.base+500000000+int64(g.rng.IntN(100))*1000000, 10)
}

func (g *rdGen) absMs0() string {
	switch g.rng.IntN(12) {
	case 0:
		return g.pick("0", "1", "-1", "x", "9223372036854775807", "-9223372036854775808")
	case 1, 2:
		return strconv.FormatInt((g.base-1)*1000-int64(g.rng.IntN(1000000000)), 10)
	}
	return strconv.FormatInt((g.base+500000000+int64(g.rng.IntN(100))*1000000)*1000+int64(g.rng.IntN(1000)), 10)
}

func (g *rdGen) index() string {
	switch g.rng.IntN(12) {
	case 0:
		return g.pick("x", "", "1.5", "9223372036854775807", "-9223372036854775808", "-0", "+3")
	}
	return strconv.Itoa(g.rng.IntN(61) - 30)
}

func (g *rdGen) db() string {
	if g.rng.IntN(12) == 0 {
		return g.pick("16", "-1", "x", "", "1.0", "9223372036854775808")
	}
	return strconv.Itoa(g.rng.IntN(3))
}

// setOpts are SET's options in a random order, sometimes invalid.
func (g *rdGen) setOpts() []string {
	var out []string
	for n := g.rng.IntN(4); n > 0; n-- {
		switch g.rng.IntN(11) {
		case 0:
			out = append(out, g.pick("NX", "nx"))
		case 1:
			out = append(out, g.pick("XX", "xx"))
		case 2:
			out = append(out, g.pick("GET", "get"))
		case 3:
			out = append(out, "KEEPTTL")
		case 4:
			out = append(out, g.pick("EX", "ex"), g.relSec())
		case 5:
			out = append(out, "PX", g.relMs())
		case 6:
			out = append(out, "EXAT", g.futureAbs(false))
		case 7:
			out = append(out, "PXAT", g.futureAbs(true))
		case 8:
			out = append(out, g.pick("EX", "PX", "EXAT", "PXAT")) // missing value
		case 9:
			out = append(out, g.pick("FOO", "PERSIST", "NXX", ""))
		default:
			out = append(out, g.pick("GET", "NX", "XX", "KEEPTTL"))
		}
	}
	return out
}

func (g *rdGen) getexOpts() []string {
	var out []string
	for n := g.rng.IntN(3); n > 0; n-- {
		switch g.rng.IntN(7) {
		case 0:
			out = append(out, "EX", g.relSec())
		case 1:
			out = append(out, "px", g.relMs())
		case 2:
			out = append(out, "EXAT", g.absSec())
		case 3:
			out = append(out, "PXAT", g.absMs())
		case 4:
			out = append(out, g.pick("PERSIST", "persist"))
		case 5:
			out = append(out, g.pick("EX", "KEEPTTL", "NX", "GET", "foo"))
		default:
			out = append(out, "PERSIST")
		}
	}
	return out
}

func (g *rdGen) expireFlags() []string {
	var out []string
	for n := g.rng.IntN(3); n > 0 && g.rng.IntN(2) == 0; n-- {
		out = append(out, g.pick("NX", "XX", "GT", "LT", "gt", "lt", "xx", "FOO"))
	}
	return out
}

// command returns the next random command for a side; timeless says
// whether its reply may be nested in an EXEC reply (no TTL, KEYS, ...).
func (g *rdGen) command(s *rdSide) []string {
	r := g.rng
	k := g.key
	switch r.IntN(61) {
	case 0, 1, 2:
		return append([]string{"SET", k(), g.value()}, g.setOpts()...)
	case 3, 4:
		return []string{"GET", k()}
	case 5:
		return []string{"SETNX", k(), g.value()}
	case 6:
		return []string{"SETEX", k(), g.relSec(), g.value()}
	case 7:
		return []string{"PSETEX", k(), g.relMs(), g.value()}
	case 8:
		return []string{"GETSET", k(), g.value()}
	case 9:
		return []string{"GETDEL", k()}
	case 10:
		return append([]string{"GETEX", k()}, g.getexOpts()...)
	case 11:
		args := []string{"MGET"}
		for n := 1 + r.IntN(5); n > 0; n-- {
			args = append(args, k())
		}
		return args
	case 12, 13:
		args := []string{g.pick("MSET", "MSETNX")}
		for n := 1 + r.IntN(3); n > 0; n-- {
			args = append(args, k(), g.value())
		}
		if r.IntN(15) == 0 {
			args = args[:len(args)-1]
		}
		return args
	case 14, 15:
		return []string{"APPEND", k(), g.value()}
	case 16:
		return []string{"STRLEN", k()}
	case 17, 18:
		return []string{g.pick("GETRANGE", "SUBSTR"), k(), g.index(), g.index()}
	case 19, 20:
		off := strconv.Itoa(r.IntN(64))
		switch r.IntN(15) {
		case 0:
			off = g.pick("-1", "x", "536870912", "536870911", "9223372036854775807", "3000", "")
		}
		v := g.value()
		if off == "536870911" && r.IntN(2) == 0 {
			v = ""
		} else if off == "536870911" {
			off = "536870912"
		}
		return []string{"SETRANGE", k(), off, v}
	case 21, 22:
		return []string{g.pick("INCR", "DECR"), k()}
	case 23, 24:
		return []string{g.pick("INCRBY", "DECRBY", "incrby"), k(), g.value()}
	case 25, 26:
		return []string{"INCRBYFLOAT", k(), g.value()}
	case 27:
		args := []string{"LCS", k(), k()}
		for n := r.IntN(4); n > 0; n-- {
			switch r.IntN(5) {
			case 0:
				args = append(args, "LEN")
			case 1:
				args = append(args, g.pick("IDX", "idx"))
			case 2:
				args = append(args, "MINMATCHLEN", g.pick("0", "1", "2", "3", "5", "-1", "x"))
			case 3:
				args = append(args, "WITHMATCHLEN")
			default:
				args = append(args, g.pick("FOO", "MINMATCHLEN"))
			}
		}
		return args
	case 28, 29:
		args := []string{g.pick("DEL", "UNLINK", "EXISTS", "TOUCH")}
		for n := 1 + r.IntN(3); n > 0; n-- {
			args = append(args, k())
		}
		return args
	case 30:
		return []string{"TYPE", k()}
	case 31:
		return []string{g.pick("RENAME", "RENAMENX"), k(), k()}
	case 32:
		args := []string{"COPY", k(), k()}
		for n := r.IntN(3); n > 0; n-- {
			switch r.IntN(4) {
			case 0, 1:
				args = append(args, "DB", g.db())
			case 2:
				args = append(args, g.pick("REPLACE", "replace"))
			default:
				args = append(args, g.pick("DB", "FOO"))
			}
		}
		return args
	case 33:
		return []string{"MOVE", k(), g.db()}
	case 34, 35:
		return append([]string{g.pick("EXPIRE", "expire"), k(), g.relSec()}, g.expireFlags()...)
	case 36:
		return append([]string{"PEXPIRE", k(), g.relMs()}, g.expireFlags()...)
	case 37:
		return append([]string{"EXPIREAT", k(), g.absSec()}, g.expireFlags()...)
	case 38:
		return append([]string{"PEXPIREAT", k(), g.absMs()}, g.expireFlags()...)
	case 39, 40:
		if s.inMulti {
			return []string{"EXISTS", k()}
		}
		return []string{g.pick("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"), k()}
	case 41:
		return []string{"PERSIST", k()}
	case 42:
		return []string{"OBJECT", g.pick("ENCODING", "REFCOUNT", "encoding", "FREQ", "NOSUCH"), k()}
	case 43:
		return []string{"DBSIZE"}
	case 44:
		return []string{"SELECT", g.db()}
	case 45:
		if r.IntN(4) == 0 {
			return []string{"SWAPDB", g.db(), g.db()}
		}
		return []string{"SWAPDB", strconv.Itoa(r.IntN(3)), strconv.Itoa(r.IntN(3))}
	case 46:
		if r.IntN(4) == 0 {
			return []string{g.pick("FLUSHDB", "FLUSHALL"), g.pick("ASYNC", "SYNC", "FOO")}
		}
		return []string{"FLUSHDB"}
	case 47:
		if s.inMulti {
			return []string{"DBSIZE"}
		}
		return []string{"KEYS", g.pick("*", "a*", "[a-c]", "?", "[^a]", "[!b-d]", "\\a", "*[", "[a-", "b", "**", "[]a]", "")}
	case 48:
		return []string{"RANDOMKEY"} // run only when the db holds <= 1 key
	case 49, 50, 51:
		return []string{"MULTI"}
	case 52, 53:
		return []string{"EXEC"}
	case 54:
		return []string{"DISCARD"}
	case 55, 56:
		args := []string{"WATCH"}
		for n := 1 + r.IntN(2); n > 0; n-- {
			args = append(args, k())
		}
		return args
	case 57:
		return []string{"UNWATCH"}
	case 58:
		return []string{g.pick("SETEX", "PSETEX"), k(), g.pick("0", "-1", "x", "9223372036854775807"), g.value()}
	case 59:
		switch r.IntN(6) {
		case 0:
			if s.inMulti {
				return []string{"ECHO", g.value()}
			}
			args := []string{"SCAN", g.pick("0", "0", "0", "x", "18446744073709551616", "+0")}
			for n := r.IntN(3); n > 0; n-- {
				switch r.IntN(4) {
				case 0:
					args = append(args, "MATCH", g.pick("*", "a*", "[b-d]", "?", "x"))
				case 1:
					args = append(args, "COUNT", g.pick("10", "100", "0", "-1", "x"))
				case 2:
					args = append(args, "TYPE", g.pick("string", "list", "STRING", "foo"))
				default:
					args = append(args, g.pick("FOO", "MATCH", "COUNT"))
				}
			}
			return args
		case 1:
			return []string{"OBJECT", g.pick("HELP", "help")}
		case 2:
			return []string{"ECHO", g.value()}
		case 3:
			return []string{"PING", g.value()}
		case 4:
			return []string{"RESET"}
		}
		return []string{"PING"}
	}
	return []string{"GET", k()}
}

// mangle sometimes breaks a command's arity.
func (g *rdGen) mangle(args []string) []string {
	switch g.rng.IntN(40) {
	case 0:
		return args[:1+g.rng.IntN(len(args))]
	case 1:
		return append(args, g.pick("x", "a", "b", "EX", "NX"))
	}
	return args
}

// rdReplyEqual compares Redis's and Vigil's raw replies to args.
func rdReplyEqual(args []string, want, got string) bool {
	if want == got {
		return true
	}
	intOf := func(raw string) (int64, bool) {
		if !strings.HasPrefix(raw, ":") || !strings.HasSuffix(raw, "\r\n") {
			return 0, false
		}
		n, err := strconv.ParseInt(raw[1:len(raw)-2], 10, 64)
		return n, err == nil
	}
	switch strings.ToUpper(args[0]) {
	case "TTL", "PTTL":
		w, ok1 := intOf(want)
		g, ok2 := intOf(got)
		return ok1 && ok2 && w > 0 && g > 0
	case "EXPIRETIME", "PEXPIRETIME":
		w, ok1 := intOf(want)
		g, ok2 := intOf(got)
		tol := int64(30)
		if strings.ToUpper(args[0]) == "PEXPIRETIME" {
			tol = 30000
		}
		return ok1 && ok2 && w > 0 && g > 0 && g <= w && w-g <= tol
	case "SCAN":
		// [cursor, keys]: the keys in any order (Redis's depends on its
		// random hash seed).
		sorted := func(raw string) string {
			v, err := resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits)
			if err != nil || len(v.Elems) != 2 {
				return raw
			}
			var s []string
			for _, e := range v.Elems[1].Elems {
				s = append(s, e.Str)
			}
			slices.Sort(s)
			return v.Elems[0].Str + "\x00" + strings.Join(s, "\x00")
		}
		return sorted(want) == sorted(got)
	case "KEYS":
		sorted := func(raw string) string {
			v, err := resp.ReadValue(bufio.NewReader(strings.NewReader(raw)), resp.DefaultReplyLimits)
			if err != nil {
				return raw
			}
			var s []string
			for _, e := range v.Elems {
				s = append(s, e.Str)
			}
			slices.Sort(s)
			return strings.Join(s, "\x00")
		}
		return sorted(want) == sorted(got)
	}
	return false
}

// randomDiffRun runs n random commands of one seed on a fresh pair of
// servers' state.
//
// Mode "resp2" and "resp3" select the protocol, "lru" runs RESP2 with
// maxmemory and an LRU policy (no shared integers: OBJECT ENCODING and
// REFCOUNT change).
func randomDiffRun(t *testing.T, dial func(int) (net.Conn, *bufio.Reader), aof *aofOracle, mode string, seed uint64, n int) {
	proto := 2
	if mode == "resp3" {
		proto = 3
	}
	h := newDiffHarnessOn(t, dial, aof, nil)
	h.keep = 60
	ts := h.ts
	now := time.Now()
	ts.clk.Advance(now.Sub(ts.clk.Now()))
	g := &rdGen{rng: rand.New(rand.NewPCG(seed, 7)), base: now.Unix()}
	var sides [2]*rdSide
	for i := range sides {
		sides[i] = &rdSide{diffSide: h.side(proto)}
	}
	h.begin(sides[0].diffSide)
	if mode == "lru" {
		for _, cfg := range [][]string{{"maxmemory", "1gb"}, {"maxmemory-policy", "allkeys-lru"}} {
			args := append([]string{"CONFIG", "SET"}, cfg...)
			if want, got := rawDo(t, sides[0].rc, sides[0].rbr, args...), ts.do(sides[0].vc, args...); want != got {
				t.Fatalf("%v: redis %q, vigil %q", args, want, got)
			}
		}
		t.Cleanup(func() {
			rc, rbr := dial(2)
			rawDo(t, rc, rbr, "CONFIG", "SET", "maxmemory", "0")
			rawDo(t, rc, rbr, "CONFIG", "SET", "maxmemory-policy", "noeviction")
		})
	}
	both := func(s *rdSide, args ...string) (want, got string) {
		return h.redis(s.diffSide, args...), h.vigil(s.diffSide, args...)
	}
	defer func() {
		if !t.Failed() {
			return
		}
		// Both servers' keys, on new connections.
		rc, rbr := dial(2)
		vc := ts.client()
		for db := 0; db < 3; db++ {
			rawDo(t, rc, rbr, "SELECT", strconv.Itoa(db))
			ts.do(vc, "SELECT", strconv.Itoa(db))
			for _, k := range rdKeys {
				w := rawDo(t, rc, rbr, "PEXPIRETIME", k)
				g := ts.do(vc, "PEXPIRETIME", k)
				t.Logf("db %d key %s pexpiretime: redis %q vigil %q", db, k, w, g)
			}
		}
	}()
	for i := 0; i < n; i++ {
		si := 0
		if g.rng.IntN(10) == 0 {
			si = 1
		}
		s := sides[si]
		args := g.mangle(g.command(s))
		name := strings.ToUpper(args[0])
		if name == "RANDOMKEY" && len(args) == 1 {
			if s.inMulti {
				continue
			}
			want, got := both(s, "DBSIZE")
			h.record(strconv.Itoa(si) + ": DBSIZE")
			if want != got {
				h.fatalf("seed %d command %d DBSIZE:\n redis: %q\n vigil: %q", seed, i, want, got)
			}
			if want != ":0\r\n" && want != ":1\r\n" {
				continue
			}
		}
		if name == "LCS" && len(args) >= 3 && !s.inMulti {
			// LCS allocates len(a)*len(b) cells: skip big pairs.
			l1, _ := both(s, "STRLEN", args[1])
			l2, _ := both(s, "STRLEN", args[2])
			a, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l1, ":")))
			b, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l2, ":")))
			if a*b > 1<<20 {
				continue
			}
		} else if name == "LCS" {
			continue
		}
		var quoted []string
		for _, a := range args {
			if len(a) > 60 {
				a = a[:60] + "..."
			}
			quoted = append(quoted, strconv.Quote(a))
		}
		h.record(strconv.Itoa(si) + ": " + strings.Join(quoted, " "))
		want, got := both(s, args...)
		if !rdReplyEqual(args, want, got) {
			h.fatalf("seed %d command %d (client %d) %s:\n redis: %.300q\n vigil: %.300q",
				seed, i, si, strings.Join(quoted, " "), want, got)
		}
		switch {
		case name == "MULTI" && want == "+OK\r\n":
			s.inMulti = true
		case (name == "EXEC" || name == "DISCARD" || name == "RESET") && s.inMulti && len(args) == 1:
			s.inMulti = false
		}
	}
	// What both propagated, then the final state, every database.
	h.checkAOF()
	for db := 0; db < 3; db++ {
		s := sides[0]
		if s.inMulti {
			both(s, "DISCARD")
			s.inMulti = false
		}
		both(s, "SELECT", strconv.Itoa(db))
		for _, k := range rdKeys {
			for _, cmd := range [][]string{{"GET", k}, {"OBJECT", "ENCODING", k}, {"TTL", k}} {
				want, got := both(s, cmd...)
				if !rdReplyEqual(cmd, want, got) {
					t.Errorf("db %d %v: redis %.200q, vigil %.200q", db, cmd, want, got)
				}
			}
		}
	}
}

// TestRandomConnDifferential (interop) is TestRandomDifferential at the
// connection level, where one request and one reply at a time does not
// look: several connections to Vigil and to a live redis-server 7.0.15 get
// the same random steps, and each connection's byte stream is compared.
// A step is one command, or a pipelined batch (one write) that may hold
// MULTI...EXEC, QUIT or RESET in the middle, or a batch followed by a
// half-close (every reply, then EOF), or a large reply the client closes
// in the middle of; commands cover CLIENT REPLY ON/OFF/SKIP, pub/sub
// (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE and PUBLISH from another connection),
// HELLO 2/3 and a few keys shared by every connection.
//
// After each step every connection is fenced (fenceChannel: a push that
// every reply mode delivers and that changes nothing) and what it received
// before the fence is compared: the step's connection first, so that a
// command one client has seen answered is visible to every other
// connection's next command, and pub/sub messages have been delivered.
// The fence reads poll with a deadline. Client ids in HELLO replies are
// masked.
func TestRandomConnDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	seeds, n := randomDiffSeeds(8, 1500) // diffharness_test.go
	steps := n / 10
	oracle := startRedisOracle(t, nil)
	l, addr := startLiveTCP(t) // TCP: half-close and resets as clients meet them
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			connDiffRun(t, l, addr, oracle, seed, steps)
		})
	}
}

// cdConn is one client connection on both servers.
type cdConn struct {
	r, v   net.Conn
	rp, vp []byte // read past a fence (none in practice)
}

// cdGen generates the random steps of one seed.
type cdGen struct {
	rng  *rand.Rand
	pfx  string // channel prefix of the seed: a previous seed's subscribers may still be closing
	keys []string
}

func (g *cdGen) pick(s ...string) string { return s[g.rng.IntN(len(s))] }

func (g *cdGen) channel() string { return g.pfx + g.pick("ch1", "ch2", "other") }

// command is one random command of any kind but MULTI, QUIT and HELLO.
func (g *cdGen) command() []string {
	k := g.pick(g.keys...)
	switch g.rng.IntN(24) {
	case 0, 1:
		return []string{"SET", k, g.pick("1", "v", "hello", "")}
	case 2, 3:
		return []string{"GET", k}
	case 4:
		return []string{"INCR", k}
	case 5:
		return []string{"APPEND", k, "x"}
	case 6:
		return []string{"DEL", k, g.pick(g.keys...)}
	case 7:
		return append([]string{"MGET"}, g.keys...)
	case 8:
		return []string{"PING"}
	case 9:
		return []string{"ECHO", g.pick("a", "hi there")}
	case 10, 11, 12:
		return []string{"CLIENT", "REPLY", g.pick("ON", "ON", "OFF", "SKIP", "bad")}
	case 13:
		args := []string{"SUBSCRIBE", g.channel()}
		if g.rng.IntN(2) == 0 {
			args = append(args, g.channel())
		}
		return args
	case 14:
		if g.rng.IntN(2) == 0 {
			return []string{"UNSUBSCRIBE"}
		}
		return []string{"UNSUBSCRIBE", g.channel()}
	case 15:
		return []string{"PSUBSCRIBE", g.pfx + g.pick("ch*", "*")}
	case 16:
		if g.rng.IntN(2) == 0 {
			return []string{"PUNSUBSCRIBE"}
		}
		return []string{"PUNSUBSCRIBE", g.pfx + "ch*"}
	case 17:
		return []string{g.pick("SSUBSCRIBE", "SUNSUBSCRIBE"), g.pfx + "s"}
	case 18, 19:
		return []string{"PUBLISH", g.channel(), g.pick("m1", "m2")}
	case 20:
		return []string{"SPUBLISH", g.pfx + "s", "sm"}
	case 21:
		return []string{"PUBSUB", g.pick("NUMSUB", "SHARDNUMSUB"), g.pfx + "ch1", g.pfx + "s"}
	case 22:
		return []string{"SELECT", g.pick("0", "1")}
	}
	return []string{g.pick("NOSUCHCMD", "GET", "RESET")}
}

// batch is 2-7 commands, sometimes a transaction, with QUIT or RESET
// sometimes in the middle (when quitOK).
func (g *cdGen) batch(quitOK bool) [][]string {
	var b [][]string
	n := 2 + g.rng.IntN(6)
	for i := 0; i < n; i++ {
		b = append(b, g.command())
	}
	if g.rng.IntN(3) == 0 { // a transaction, always closed
		i := g.rng.IntN(len(b))
		j := i + g.rng.IntN(len(b)-i)
		b = slices.Insert(b, j+1, []string{g.pick("EXEC", "EXEC", "DISCARD")})
		b = slices.Insert(b, i, []string{"MULTI"})
	}
	if g.rng.IntN(4) == 0 {
		ins := [][]string{{"RESET"}}
		if quitOK && g.rng.IntN(2) == 0 {
			// RESET first: redis-server 7.0.15 never closes a connection
			// that sends QUIT while CLIENT REPLY OFF or SKIP silences the
			// +OK (CLIENT_CLOSE_AFTER_REPLY waits for a reply that never
			// comes, and the connection stops reading); Vigil closes it
			// (TestQuitReplyOff).
			ins = [][]string{{"RESET"}, {"QUIT"}}
		}
		b = slices.Insert(b, g.rng.IntN(len(b)+1), ins...)
	}
	return b
}

var cdHelloID = regexp.MustCompile(`\$2\r\nid\r\n:\d+\r\n`)

func connDiffRun(t *testing.T, l *liveServer, addr, oracle string, seed uint64, steps int) {
	g := &cdGen{rng: rand.New(rand.NewPCG(seed, 11)), pfx: "s" + strconv.FormatUint(seed, 10) + ":",
		keys: []string{"k1", "k2", "n"}}
	dialBoth := func() *cdConn {
		r := dialOracle(t, oracle).c
		v, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return &cdConn{r: r, v: v}
	}
	const nconn = 3
	// waitGone polls both servers until only the test's connections (and
	// on Redis the one asking) are left: a connection the client closed
	// is gone, with its subscriptions, on its server's own time.
	admin := dialOracle(t, oracle)
	defer admin.c.Close()
	waitGone := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			info := rawDo(t, admin.c, admin.br, "INFO", "clients")
			l.s.clientsMu.Lock()
			n := len(l.s.clients)
			l.s.clientsMu.Unlock()
			if strings.Contains(info, "connected_clients:"+strconv.Itoa(nconn+1)+"\r\n") && n == nconn {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("closed connections still there: vigil has %d clients, redis %q", n, info)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var conns [nconn]*cdConn
	for i := range conns {
		conns[i] = dialBoth()
	}
	defer func() {
		for _, c := range conns {
			c.r.Close()
			c.v.Close()
		}
	}()
	send := func(c *cdConn, cmds [][]string) {
		var b []byte
		for _, args := range cmds {
			b = resp.AppendCommandStrings(b, args...)
		}
		if _, err := c.r.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := c.v.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	var history []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: "+format+"\nsteps:\n%s", append([]any{seed}, append(args, strings.Join(history, "\n"))...)...)
	}
	compare := func(i int, what, want, got string) {
		t.Helper()
		want = cdCanonical(cdHelloID.ReplaceAllString(want, "$$2\r\nid\r\n:ID\r\n"))
		got = cdCanonical(cdHelloID.ReplaceAllString(got, "$$2\r\nid\r\n:ID\r\n"))
		if want != got {
			fail("connection %d, %s:\n redis: %.400q\n vigil: %.400q", i, what, want, got)
		}
	}
	// untilEOF reads both sides of c to EOF and compares.
	untilEOF := func(i int, c *cdConn) {
		t.Helper()
		want, err := readAllUntilEOF(c.r, 5*time.Second)
		if err != nil {
			fail("connection %d: redis: %v after %q", i, err, want)
		}
		got, err := readAllUntilEOF(c.v, 5*time.Second)
		if err != nil {
			fail("connection %d: vigil did not close: %v after %q (redis sent %q, then EOF)", i, err, got, want)
		}
		compare(i, "replies before EOF", string(want), string(got))
		c.r.Close()
		c.v.Close()
	}
	fenceAll := func(first int) {
		t.Helper()
		for k := 0; k < nconn; k++ {
			i := (first + k) % nconn
			c := conns[i]
			compare(i, "replies", fenced(t, c.r, &c.rp), fenced(t, c.v, &c.vp))
		}
	}
	// A large value for the close-mid-reply steps (not among g.keys).
	big := strings.Repeat("b", 4<<20)
	waitGone() // the previous seed's
	send(conns[0], [][]string{{"SELECT", "0"}, {"FLUSHALL"}, {"SET", "big", big}})
	fenceAll(0)
	for step := 0; step < steps; step++ {
		i := g.rng.IntN(nconn)
		c := conns[i]
		switch kind := g.rng.IntN(20); {
		case kind < 10: // one command
			args := g.command()
			history = append(history, strconv.Itoa(i)+": "+strings.Join(args, " "))
			send(c, [][]string{args})
		case kind < 11:
			args := []string{"HELLO", g.pick("2", "3")}
			history = append(history, strconv.Itoa(i)+": "+strings.Join(args, " "))
			send(c, [][]string{args})
		case kind < 17, kind < 18: // a pipelined batch
			b := g.batch(true)
			var names []string
			quit := false
			for _, args := range b {
				names = append(names, strings.Join(args, " "))
				quit = quit || args[0] == "QUIT"
			}
			history = append(history, strconv.Itoa(i)+": batch ["+strings.Join(names, "; ")+"]")
			send(c, b)
			if quit {
				untilEOF(i, c)
				conns[i] = dialBoth()
			}
		case kind < 19: // a batch, then half-close
			b := g.batch(false)
			var names []string
			for _, args := range b {
				names = append(names, strings.Join(args, " "))
			}
			history = append(history, strconv.Itoa(i)+": batch ["+strings.Join(names, "; ")+"] and half-close")
			send(c, b)
			for _, side := range []net.Conn{c.r, c.v} {
				if err := side.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
					t.Fatal(err)
				}
			}
			untilEOF(i, c)
			conns[i] = dialBoth()
		default: // close in the middle of a large reply
			history = append(history, strconv.Itoa(i)+": GET big, close")
			send(c, [][]string{{"SELECT", "0"}, {"GET", "big"}})
			c.r.Close()
			c.v.Close()
			conns[i] = dialBoth()
			waitGone()
		}
		fenceAll(i)
		if len(history) > 40 {
			history = history[1:]
		}
	}
	// Every connection closed by the steps is gone.
	waitGone()
}

// cdUnsub and cdPmessage match one unsubscribe confirmation and one
// pmessage push (the generator's names and payloads hold no CR or LF).
var (
	cdUnsub    = regexp.MustCompile(`[*>]3\r\n\$1[12]\r\n([ps]?unsubscribe)\r\n(\$-1\r\n|\$\d+\r\n[^\r]*\r\n)(:\d+\r\n)`)
	cdPmessage = regexp.MustCompile(`[*>]4\r\n\$8\r\npmessage\r\n\$\d+\r\n[^\r]*\r\n(\$\d+\r\n[^\r]*\r\n\$\d+\r\n[^\r]*\r\n)`)
)

// cdCanonical puts the parts of a connection's byte stream whose order
// Redis takes from its hash tables (random per process) in a canonical
// order: the channels of adjacent unsubscribe confirmations of one kind
// (UNSUBSCRIBE without arguments; the counts keep their places) and
// adjacent pmessages of one publication (one per matching pattern). It
// works on the bytes, not on parsed replies: EXEC's array may hold pushes.
func cdCanonical(raw string) string {
	raw = cdRuns(raw, cdUnsub, func(m []string) string { return m[1] }, func(run [][]string) []string {
		var names []string
		for _, m := range run {
			names = append(names, m[2])
		}
		slices.Sort(names)
		out := make([]string, len(run))
		for i, m := range run {
			out[i] = m[0][:len(m[0])-len(m[2])-len(m[3])] + names[i] + m[3]
		}
		return out
	})
	return cdRuns(raw, cdPmessage, func(m []string) string { return m[1] }, func(run [][]string) []string {
		out := make([]string, len(run))
		for i, m := range run {
			out[i] = m[0]
		}
		slices.Sort(out)
		return out
	})
}

// cdRuns rewrites each run of adjacent matches of re with the same key.
func cdRuns(raw string, re *regexp.Regexp, key func([]string) string, canon func([][]string) []string) string {
	locs := re.FindAllStringSubmatchIndex(raw, -1)
	var out strings.Builder
	last := 0
	for i := 0; i < len(locs); {
		sub := func(k int) []string {
			l := locs[k]
			m := make([]string, len(l)/2)
			for j := range m {
				if l[2*j] >= 0 {
					m[j] = raw[l[2*j]:l[2*j+1]]
				}
			}
			return m
		}
		run := [][]string{sub(i)}
		j := i + 1
		for j < len(locs) && locs[j][0] == locs[j-1][1] && key(sub(j)) == key(run[0]) {
			run = append(run, sub(j))
			j++
		}
		out.WriteString(raw[last:locs[i][0]])
		for _, s := range canon(run) {
			out.WriteString(s)
		}
		last = locs[j-1][1]
		i = j
	}
	out.WriteString(raw[last:])
	return out.String()
}
