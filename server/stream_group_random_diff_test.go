package server

import (
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// TestStreamGroupDifferentialRandom is TestStreamDifferentialRandom for
// consumer groups: XGROUP (CREATE with $, IDs, MKSTREAM and ENTRIESREAD;
// SETID, DESTROY, CREATECONSUMER, DELCONSUMER), XREADGROUP (>, history,
// COUNT, NOACK, several keys), XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO
// GROUPS and STREAM, mixed with XADD, XDEL, XTRIM and XSETID, some in
// MULTI, on Vigil and a live redis-server. Replies must be the same bytes;
// after each write the key's DUMP payloads must be equal but for the
// delivery and seen times (Vigil's test clock stands still), which are
// zeroed on both sides before the comparison; keyspace.Check must pass;
// the propagated streams must match (XCLAIM's TIME within a minute).
// Idle, seen and delivery times in replies (XPENDING's extended form,
// XINFO CONSUMERS, XINFO STREAM FULL) are masked (noClocks) when the
// replies differ, and minimum idle times are 0 or an hour, for the same
// reason.
func TestStreamGroupDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 11, testStreamGroupDifferentialRandom) // diffharness_test.go
}

// clockFields match the clock values of stream replies: seen-time and idle
// values, the delivery time of a group's or consumer's pending entry
// ([id, consumer, time, count] in XINFO STREAM FULL and XPENDING,
// [id, time, count] for a consumer's).
var clockFields = []*regexp.Regexp{
	regexp.MustCompile(`(\$9\r\nseen-time\r\n|\$4\r\nidle\r\n):\d+`),
	regexp.MustCompile(`(\*4\r\n\$\d+\r\n\d+-\d+\r\n\$\d+\r\nc\d\r\n):\d+`),
	regexp.MustCompile(`(\*3\r\n\$\d+\r\n\d+-\d+\r\n):\d+`),
}

// noClocks is a raw reply with its clock values zeroed.
func noClocks(raw string) string {
	for _, re := range clockFields {
		raw = re.ReplaceAllString(raw, "${1}:0")
	}
	return raw
}

// dumpNoTimes is a stream DUMP payload with its delivery and seen times
// zeroed (re-encoded), or the payload as is for anything else.
func dumpNoTimes(t *testing.T, raw string) string {
	if !strings.HasPrefix(raw, "$") || raw == "$-1\r\n" {
		return raw
	}
	p := bulkOf(t, raw)
	v, err := rdb.ParsePayload([]byte(p), keyspace.DefaultEncodingConfig())
	if err != nil {
		t.Fatalf("DUMP payload does not parse: %v", err)
	}
	s, ok := v.(*keyspace.Stream)
	if !ok {
		return raw
	}
	s.Groups(func(g *keyspace.StreamCG) bool {
		g.PELRange(keyspace.StreamID{}, func(_ keyspace.StreamID, n *keyspace.StreamNACK) bool {
			n.DeliveryTime = 0
			return true
		})
		g.ConsumersRange(func(c *keyspace.StreamConsumer) bool {
			c.SeenTime = 0
			return true
		})
		return true
	})
	return string(rdb.DumpPayload(s, false))
}

func testStreamGroupDifferentialRandom(t *testing.T, seed uint64) {
	h := newDiffHarness(t, nil)
	ts := h.ts
	conns := []*diffSide{h.side(2), h.side(3)}
	rng := rand.New(rand.NewPCG(2028, seed))
	h.keep = 5000

	h.begin(conns[0])
	both := h.both
	h.configBoth(conns[0], "stream-node-max-entries", strconv.Itoa(3+rng.IntN(6)))
	keys := []string{"q1", "q2", "s"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	qkey := func() string { return keys[rng.IntN(2)] }
	group := func() string { return "g" + strconv.Itoa(rng.IntN(3)) }
	consumer := func() string { return "c" + strconv.Itoa(rng.IntN(4)) }
	ms := func() int { return rng.IntN(30) }
	id := func() string {
		switch rng.IntN(25) {
		case 0:
			return []string{"x", "-", "+", "0-0", "0"}[rng.IntN(5)]
		case 1:
			return strconv.Itoa(ms())
		}
		return strconv.Itoa(ms()) + "-" + strconv.Itoa(rng.IntN(3))
	}
	idle := func() string { return []string{"0", "0", "3600000", "-5", "x"}[rng.IntN(5)] }
	gen := func() ([]string, bool) {
		switch rng.IntN(26) {
		case 0, 1, 2, 3, 4:
			args := []string{"XADD", key()}
			if rng.IntN(8) == 0 {
				args = append(args, "MAXLEN", strconv.Itoa(rng.IntN(8)))
			}
			return append(args, strconv.Itoa(ms())+"-*", "f", strconv.Itoa(rng.IntN(100))), true
		case 5:
			return []string{"XDEL", key(), id(), id()}, true
		case 6:
			if rng.IntN(2) == 0 {
				return []string{"XTRIM", key(), "MAXLEN", strconv.Itoa(rng.IntN(8))}, true
			}
			return []string{"XSETID", key(), id()}, true
		case 7, 8:
			args := []string{"XGROUP", "CREATE", key(), group()}
			if rng.IntN(3) == 0 {
				args = append(args, "$")
			} else {
				args = append(args, id())
			}
			if rng.IntN(3) == 0 {
				args = append(args, "MKSTREAM")
			}
			if rng.IntN(4) == 0 {
				args = append(args, "ENTRIESREAD", strconv.Itoa(rng.IntN(12)-2))
			}
			return args, true
		case 9:
			args := []string{"XGROUP", "SETID", key(), group()}
			if rng.IntN(3) == 0 {
				args = append(args, "$")
			} else {
				args = append(args, id())
			}
			if rng.IntN(3) == 0 {
				args = append(args, "ENTRIESREAD", strconv.Itoa(rng.IntN(12)-2))
			}
			return args, true
		case 10:
			switch rng.IntN(3) {
			case 0:
				return []string{"XGROUP", "DESTROY", key(), group()}, true
			case 1:
				return []string{"XGROUP", "CREATECONSUMER", key(), group(), consumer()}, true
			}
			return []string{"XGROUP", "DELCONSUMER", key(), group(), consumer()}, true
		case 11, 12, 13, 14:
			args := []string{"XREADGROUP", "GROUP", group(), consumer()}
			if rng.IntN(3) == 0 {
				args = append(args, "COUNT", strconv.Itoa(rng.IntN(4)))
			}
			if rng.IntN(4) == 0 {
				args = append(args, "NOACK")
			}
			n := 1 + rng.IntN(2)
			args = append(args, "STREAMS")
			for i := 0; i < n; i++ {
				args = append(args, key())
			}
			for i := 0; i < n; i++ {
				if rng.IntN(4) == 0 {
					args = append(args, id())
				} else {
					args = append(args, ">")
				}
			}
			return args, true
		case 15, 16:
			return []string{"XACK", key(), group(), id(), id()}, true
		case 17:
			return []string{"XPENDING", key(), group()}, false
		case 18, 19:
			args := []string{"XCLAIM", key(), group(), consumer(), idle(), id()}
			if rng.IntN(2) == 0 {
				args = append(args, id())
			}
			for _, o := range [][]string{{"FORCE"}, {"JUSTID"}, {"RETRYCOUNT", strconv.Itoa(rng.IntN(5))}, {"LASTID", id()}, {"IDLE", "0"}, {"TIME", "5"}} {
				if rng.IntN(5) == 0 {
					args = append(args, o...)
				}
			}
			return args, true
		case 20, 21:
			args := []string{"XAUTOCLAIM", key(), group(), consumer(), idle(), id()}
			if rng.IntN(2) == 0 {
				args = append(args, "COUNT", strconv.Itoa(rng.IntN(4)))
			}
			if rng.IntN(3) == 0 {
				args = append(args, "JUSTID")
			}
			return args, true
		case 22:
			switch rng.IntN(4) {
			case 0:
				return []string{"XINFO", "CONSUMERS", key(), group()}, false
			case 1:
				args := []string{"XINFO", "STREAM", key(), "FULL"}
				if rng.IntN(2) == 0 {
					args = append(args, "COUNT", strconv.Itoa(rng.IntN(4)))
				}
				return args, false
			case 2:
				args := []string{"XPENDING", key(), group()}
				if rng.IntN(3) == 0 {
					args = append(args, "IDLE", "0")
				}
				args = append(args, "-", "+", strconv.Itoa(rng.IntN(5)))
				if rng.IntN(2) == 0 {
					args = append(args, consumer())
				}
				return args, false
			}
			return []string{"XINFO", "GROUPS", key()}, false
		case 23:
			return []string{"XINFO", "STREAM", key()}, false
		case 24:
			switch rng.IntN(3) {
			case 0:
				return []string{"DEL", qkey()}, true
			case 1:
				return []string{"SET", "s", "v"}, true
			}
			return []string{"COPY", qkey(), qkey(), "REPLACE"}, true
		}
		return []string{"XRANGE", key(), "-", "+"}, false
	}
	compare := func(p *diffSide, args []string, r, v string, i int) {
		if r != v && noClocks(r) != noClocks(v) {
			h.fatalf("command %d %q (RESP%d):\n vigil: %q\n redis: %q", i, args, p.proto, v, r)
		}
	}
	checkKey := func(p *diffSide, key string, i int) {
		r, v := both(p, "DUMP", key)
		if dumpNoTimes(t, r) != dumpNoTimes(t, v) {
			h.fatalf("after command %d, DUMP %s (times zeroed): vigil %q, redis %q", i, key, v, r)
		}
		if err := ts.s.ks.Check(); err != nil {
			h.fatalf("after command %d: keyspace.Check: %v", i, err)
		}
	}
	keyOf := func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "XGROUP":
			return args[2]
		case "XREADGROUP":
			for j, a := range args {
				if a == "STREAMS" {
					return args[j+1]
				}
			}
		}
		return args[1]
	}
	compared := h.run(3000, diffRun{conns: conns, rng: rng, gen: gen, compare: compare,
		written: func(p *diffSide, args []string, i int) {
			checkKey(p, keyOf(args), i)
			if os.Getenv("VIGIL_STREAM_AOF_EACH") != "" && i > 20 {
				h.checkAOF()
			}
		}})
	h.checkAOF()
	for _, k := range keys {
		checkKey(conns[0], k, -1)
	}
	t.Logf("%d random stream group commands answered as redis-server does", compared)
}
