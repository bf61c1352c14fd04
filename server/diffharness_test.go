package server

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The randomized differential tests (*_random_diff_test.go) share this
// harness: the seeds they run (forDiffSeeds, randomDiffSeeds), and a
// diffHarness per stream: the oracle (a redis-server 7.0.15 writing its
// AOF, aof_oracle_test.go), Vigil's test server, connection pairs to both
// (diffSide), the history of the last commands for failure messages and
// the comparison of the propagated streams. Each test brings its command
// generator, drawn from its own seeded *rand.Rand: the harness draws from
// it only in run (which side, whether a transaction and its length), in
// the same order every time, so a seed's stream depends on the test's
// code only, and a failed seed replays.

// forDiffSeeds runs a randomized differential test (f, a stream seeded by
// seed) over the seeds the environment asks for:
//
//   - by default, only def: the seed CI runs;
//   - VIGIL_DIFF_SEEDS=N: def and N-1 more, VIGIL_DIFF_SEED_BASE+1,
//     VIGIL_DIFF_SEED_BASE+2, ... (base 1000 by default), each a subtest
//     named seed=S (`just nightly` sets these);
//   - VIGIL_DIFF_SEED=S: S only, to replay the stream of a failed subtest.
func forDiffSeeds(t *testing.T, def uint64, f func(t *testing.T, seed uint64)) {
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_DIFF_SEED"), 10, 64); err == nil {
		f(t, v)
		return
	}
	n, err := strconv.Atoi(os.Getenv("VIGIL_DIFF_SEEDS"))
	if err != nil || n <= 1 {
		f(t, def)
		return
	}
	base := uint64(1000)
	if v, err := strconv.ParseUint(os.Getenv("VIGIL_DIFF_SEED_BASE"), 10, 64); err == nil {
		base = v
	}
	seeds := []uint64{def}
	for i := 1; i < n; i++ {
		seeds = append(seeds, base+uint64(i))
	}
	for _, seed := range seeds {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) { f(t, seed) })
	}
}

// randomDiffSeeds is how many seeds (1, 2, ... seeds) and how many
// commands each the tests that run a range of seeds run: seeds and n, or
// VIGIL_RANDOM_SEEDS and VIGIL_RANDOM_COMMANDS (`just nightly` sets the
// first).
func randomDiffSeeds(seeds, n int) (int, int) {
	if v, err := strconv.Atoi(os.Getenv("VIGIL_RANDOM_SEEDS")); err == nil {
		seeds = v
	}
	if v, err := strconv.Atoi(os.Getenv("VIGIL_RANDOM_COMMANDS")); err == nil {
		n = v
	}
	return seeds, n
}

// diffHarness is one randomized differential stream's pair of servers.
type diffHarness struct {
	t    *testing.T
	ts   *testServer
	aof  *aofOracle
	dial func(proto int) (net.Conn, *bufio.Reader)
	mark aofMark
	// keep is how many commands the history keeps (30 unless set).
	keep    int
	history []string
}

// diffSide is a connection to the oracle and a client of Vigil's test
// server that get the same commands.
type diffSide struct {
	rc    net.Conn
	rbr   *bufio.Reader
	vc    *Client
	proto int
}

// newDiffHarness starts the oracle and a test server (ts, or a new one
// when nil), or skips the test with -short or without redis-server.
func newDiffHarness(t *testing.T, ts *testServer) *diffHarness {
	t.Helper()
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	return newDiffHarnessOn(t, dial, aof, ts)
}

// newDiffHarnessOn is newDiffHarness on an oracle already running (one
// oracle for several subtests).
func newDiffHarnessOn(t *testing.T, dial func(proto int) (net.Conn, *bufio.Reader), aof *aofOracle, ts *testServer) *diffHarness {
	if ts == nil {
		ts = newTestServer(t)
	}
	return &diffHarness{t: t, ts: ts, aof: aof, dial: dial, keep: 30}
}

// side opens a connection pair; with proto 3 both sides have said
// HELLO 3.
func (h *diffHarness) side(proto int) *diffSide {
	rc, rbr := h.dial(proto)
	vc := h.ts.client()
	if proto == 3 {
		h.ts.do(vc, "HELLO", "3")
	}
	return &diffSide{rc: rc, rbr: rbr, vc: vc, proto: proto}
}

// begin starts the comparison of the propagated streams (aofOracle.begin:
// FLUSHALL on both through s).
func (h *diffHarness) begin(s *diffSide) {
	h.t.Helper()
	h.mark = h.aof.begin(h.t, h.ts, s.rc, s.rbr, s.vc)
}

// record adds a line to the history.
func (h *diffHarness) record(line string) {
	h.history = append(h.history, line)
	if len(h.history) > h.keep {
		h.history = h.history[len(h.history)-h.keep:]
	}
}

// both records args and sends them to both servers through s, returning
// the raw replies.
func (h *diffHarness) both(s *diffSide, args ...string) (redis, vigil string) {
	h.t.Helper()
	h.record(strings.Join(args, " "))
	return h.redis(s, args...), h.vigil(s, args...)
}

// redis and vigil send args to one server only, unrecorded.
func (h *diffHarness) redis(s *diffSide, args ...string) string {
	h.t.Helper()
	return rawDo(h.t, s.rc, s.rbr, args...)
}

func (h *diffHarness) vigil(s *diffSide, args ...string) string {
	return h.ts.do(s.vc, args...)
}

// fatalf fails the test with the history appended.
func (h *diffHarness) fatalf(format string, a ...any) {
	h.t.Helper()
	h.t.Fatalf("%s\nlast commands:\n%s", fmt.Sprintf(format, a...), strings.Join(h.history, "\n"))
}

// checkAOF compares what both servers propagated since begin.
func (h *diffHarness) checkAOF() {
	h.t.Helper()
	h.aof.check(h.t, h.ts, h.mark, h.history)
}

// configBoth sets each name, value pair with CONFIG SET on both servers
// through s; both must answer +OK.
func (h *diffHarness) configBoth(s *diffSide, pairs ...string) {
	h.t.Helper()
	for i := 0; i+1 < len(pairs); i += 2 {
		r, v := h.both(s, "CONFIG", "SET", pairs[i], pairs[i+1])
		if r != "+OK\r\n" || v != r {
			h.t.Fatalf("CONFIG SET %s %s: redis %q vigil %q", pairs[i], pairs[i+1], r, v)
		}
	}
}

// diffRun is a randomized stream's main loop (diffHarness.run): where the
// commands come from and what follows each.
type diffRun struct {
	conns []*diffSide
	rng   *rand.Rand
	// gen draws the next command and says whether it writes.
	gen func() (args []string, write bool)
	// compare checks one pair of replies to args, sent through p as the
	// i-th command.
	compare func(p *diffSide, args []string, r, v string, i int)
	// queued, when set, rewrites a command before it is queued inside
	// MULTI (for replies a transaction cannot compare as compare does).
	queued func(args []string) []string
	// written, when set, runs after each write sent outside MULTI.
	written func(p *diffSide, args []string, i int)
}

// run sends n commands, each through a side drawn from d.rng; one in 40 is
// a transaction (MULTI, 1 to 4 generated commands, EXEC). Every reply goes
// to d.compare. It returns how many were compared, a transaction counting
// as one.
func (h *diffHarness) run(n int, d diffRun) int {
	h.t.Helper()
	compared := 0
	for i := 0; i < n; i++ {
		p := d.conns[d.rng.IntN(len(d.conns))]
		if d.rng.IntN(40) == 0 {
			r, v := h.both(p, "MULTI")
			d.compare(p, []string{"MULTI"}, r, v, i)
			for k := 1 + d.rng.IntN(4); k > 0; k-- {
				args, _ := d.gen()
				if d.queued != nil {
					args = d.queued(args)
				}
				r, v := h.both(p, args...)
				d.compare(p, args, r, v, i)
			}
			r, v = h.both(p, "EXEC")
			d.compare(p, []string{"EXEC"}, r, v, i)
			compared++
			continue
		}
		args, write := d.gen()
		r, v := h.both(p, args...)
		d.compare(p, args, r, v, i)
		compared++
		if write && d.written != nil {
			d.written(p, args, i)
		}
	}
	return compared
}
