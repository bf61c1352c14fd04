package server

import (
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestTrackingDifferentialRandom runs a seeded random stream of reads,
// writes, transactions, flushes and CLIENT TRACKING/CACHING changes on
// five connections of redis-server 7.0.15 and of Vigil, and compares what
// every connection receives after each step, byte for byte: a RESP3
// tracking client (default, OPTIN, OPTOUT, NOLOOP in turn), a RESP2 one
// redirecting to a __redis__:invalidate subscriber, a RESP3 BCAST client
// and a writer. VIGIL_DIFF_SEEDS / VIGIL_DIFF_SEED as the other
// randomized differentials; VIGIL_RANDOM_COMMANDS sets the stream's length.
func TestTrackingDifferentialRandom(t *testing.T) {
	forDiffSeeds(t, 0, testTrackingDifferentialRandom)
}

// trackingStep is one step: a connection and the commands it sends in
// one write.
type trackingStep struct {
	conn int
	cmds [][]string
}

const (
	tdSub = iota // RESP2, subscribed to __redis__:invalidate
	tdR3         // RESP3 tracking client
	tdR2         // RESP2 tracking client redirecting to tdSub
	tdBC         // RESP3 BCAST
	tdW          // RESP2 writer
	tdConns
)

func trackingRandomSteps(seed uint64, n int) []trackingStep {
	rng := rand.New(rand.NewPCG(seed, 0x7261636b))
	key := func() string { return "k" + strconv.Itoa(rng.IntN(6)) }
	read := func() []string {
		switch rng.IntN(4) {
		case 0:
			return []string{"MGET", key(), key()}
		case 1:
			return []string{"STRLEN", key()}
		case 2:
			return []string{"EXISTS", key()}
		}
		return []string{"GET", key()}
	}
	write := func() []string {
		switch rng.IntN(6) {
		case 0:
			return []string{"DEL", key(), key()}
		case 1:
			return []string{"MSET", key(), "1", key(), "2"}
		case 2:
			return []string{"APPEND", key(), "x"}
		case 3:
			return []string{"INCR", key()}
		case 4:
			if rng.IntN(8) == 0 {
				return []string{"FLUSHDB"}
			}
		}
		return []string{"SET", key(), strconv.Itoa(rng.IntN(10))}
	}
	var steps []trackingStep
	for len(steps) < n {
		conn := []int{tdR3, tdR2, tdBC, tdW}[rng.IntN(4)]
		var cmds [][]string
		switch r := rng.IntN(20); {
		case r == 0 && conn == tdR3:
			opts := [][]string{nil, {"OPTIN"}, {"OPTOUT"}, {"NOLOOP"}}[rng.IntN(4)]
			cmds = [][]string{{"CLIENT", "TRACKING", "OFF"}, append([]string{"CLIENT", "TRACKING", "ON"}, opts...)}
		case r == 0 && conn == tdR2:
			cmds = [][]string{{"CLIENT", "TRACKING", "ON", "REDIRECT", "@sub"}}
			if rng.IntN(2) == 0 {
				cmds[0] = append(cmds[0], "NOLOOP")
			}
		case r == 1:
			cmds = [][]string{{"CLIENT", "CACHING", []string{"YES", "NO"}[rng.IntN(2)]}, read()}
		case r == 2:
			cmds = [][]string{{"MULTI"}, read(), write(), read(), {"EXEC"}}
		case r == 3:
			cmds = [][]string{{"EVAL", "return redis.call('get',KEYS[1])", "1", key()}}
		case r < 11:
			cmds = [][]string{read()}
		default:
			cmds = [][]string{write()}
		}
		steps = append(steps, trackingStep{conn, cmds})
	}
	return steps
}

// trackingRunSteps runs steps on connections made by dial and returns,
// per step, what each connection received.
func trackingRunSteps(t *testing.T, dial func() net.Conn, steps []trackingStep) []string {
	conns := make([]net.Conn, tdConns)
	pending := make([][]byte, tdConns)
	ids := make([]string, tdConns)
	send := func(i int, cmds ...[]string) string {
		var b []byte
		for _, c := range cmds {
			c = append([]string(nil), c...)
			for j, a := range c {
				if a == "@sub" {
					c[j] = ids[tdSub]
				}
			}
			b = resp.AppendCommandStrings(b, c...)
		}
		conns[i].Write(b)
		return fenced(t, conns[i], &pending[i])
	}
	for i := range conns {
		conns[i] = dial()
		t.Cleanup(func() { conns[i].Close() })
		ids[i] = strings.TrimSuffix(strings.TrimPrefix(send(i, []string{"CLIENT", "ID"}), ":"), "\r\n")
	}
	send(tdSub, []string{"SUBSCRIBE", "__redis__:invalidate"})
	send(tdR3, []string{"HELLO", "3"})
	send(tdBC, []string{"HELLO", "3"})
	send(tdR3, []string{"CLIENT", "TRACKING", "ON"})
	send(tdR2, []string{"CLIENT", "TRACKING", "ON", "REDIRECT", "@sub"})
	send(tdBC, []string{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "k1", "PREFIX", "k2", "NOLOOP"})
	out := make([]string, len(steps))
	for n, st := range steps {
		var line strings.Builder
		line.WriteString(strconv.Quote(send(st.conn, st.cmds...)))
		for i := range conns {
			if i != st.conn {
				line.WriteString(" | " + strconv.Quote(fenced(t, conns[i], &pending[i])))
			}
		}
		out[n] = line.String()
	}
	return out
}

func testTrackingDifferentialRandom(t *testing.T, seed uint64) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	testutil.NeedRedis(t)
	_, n := randomDiffSeeds(1, 300)
	steps := trackingRandomSteps(seed, n)
	r := testutil.StartRedis(t, testutil.RedisOptions{})
	want := trackingRunSteps(t, func() net.Conn { return r.Dial(t) }, steps)
	l := startLive(t)
	got := trackingRunSteps(t, func() net.Conn {
		c, err := net.Dial("unix", l.sock)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, steps)
	for i := range want {
		if got[i] != want[i] {
			var hist []string
			for j := max(0, i-15); j <= i; j++ {
				hist = append(hist, strconv.Itoa(steps[j].conn)+": "+strings.TrimSpace(strings.Join(func() []string {
					var s []string
					for _, c := range steps[j].cmds {
						s = append(s, strings.Join(c, " "))
					}
					return s
				}(), "; ")))
			}
			t.Fatalf("seed %d step %d (conns: sub r3 r2 bcast w)\nsteps:\n  %s\nvigil: %s\nredis: %s", seed, i,
				strings.Join(hist, "\n  "), got[i], want[i])
		}
	}
	inval := 0
	for _, w := range want {
		inval += strings.Count(w, "invalidate")
	}
	t.Logf("seed %d: %d steps, %d invalidation messages, identical", seed, len(steps), inval)
}
