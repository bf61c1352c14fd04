package sentinel_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/sentinel/internal/sim"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the scenario output")

func runScenario(t *testing.T, name string) *sim.Sim {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".script"))
	if err != nil {
		t.Fatal(err)
	}
	a := sim.RunScript(string(src))
	b := sim.RunScript(string(src))
	if a.Output() != b.Output() {
		t.Fatalf("%s: two runs of the same script differ", name)
	}
	for _, e := range a.Errors {
		t.Errorf("%s: %s", name, e)
	}
	golden := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(golden, []byte(a.Output()), 0o644); err != nil {
			t.Fatal(err)
		}
		return a
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := a.Output(); got != string(want) {
		t.Errorf("%s: output differs from %s (run with -update after review):\n%s", name, golden, diff(string(want), got))
	}
	return a
}

// diff returns the first differing lines, enough to locate the change.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + itoa(i+1) + ":\n- " + wl + "\n+ " + gl
		}
	}
	return ""
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			break
		}
	}
	return string(b[n:])
}

// failoverFacts checks what every completed failover must show: exactly one
// elected leader, whose epoch all votes it got carry, exactly one
// +switch-master per listed sentinel to the chosen replica, and a single
// SLAVEOF NO ONE sent to that replica.
func failoverFacts(t *testing.T, s *sim.Sim, sentinels []string, promoted string, epoch string) {
	t.Helper()
	failoverFactsVotes(t, s, sentinels, promoted, epoch, 2)
}

func failoverFactsVotes(t *testing.T, s *sim.Sim, sentinels []string, promoted string, epoch string, minVotes int) {
	t.Helper()
	elected := s.Events("*", "+elected-leader")
	if len(elected) != 1 {
		t.Fatalf("want exactly one +elected-leader, got %d", len(elected))
	}
	leader := elected[0].Node
	leaderID := strings.Repeat(leader[1:], 40)
	votes := 0
	for _, v := range s.Events("*", "+vote-for-leader") {
		if strings.HasPrefix(v.Message, leaderID+" ") {
			if got := strings.TrimPrefix(v.Message, leaderID+" "); got != epoch {
				t.Errorf("%s voted for the leader in epoch %s, want %s", v.Node, got, epoch)
			}
			votes++
		}
	}
	if votes < minVotes {
		t.Errorf("leader %s got %d votes in epoch %s, want a majority", leader, votes, epoch)
	}
	addr := s.Nodes[promoted].Addr
	for _, name := range sentinels {
		sw := s.Events(name, "+switch-master")
		if len(sw) != 1 {
			t.Errorf("%s: want exactly one +switch-master, got %d", name, len(sw))
			continue
		}
		if want := addr.IP + " " + itoa(addr.Port); !strings.HasSuffix(sw[0].Message, want) {
			t.Errorf("%s: +switch-master %q, want new address %s", name, sw[0].Message, want)
		}
	}
	sel := s.Events(leader, "+selected-slave")
	if len(sel) != 1 || !strings.Contains(sel[0].Message, addr.String()) {
		t.Errorf("leader %s selected %v, want %s", leader, sel, addr)
	}
	noone := 0
	for _, l := range s.Events("*", "slaveof") {
		if strings.HasSuffix(l.Message, "NO ONE") {
			noone++
			if l.Node != leader || !strings.HasPrefix(l.Message, promoted+" ") {
				t.Errorf("unexpected %s slaveof %s", l.Node, l.Message)
			}
		}
	}
	if noone != 1 {
		t.Errorf("want one SLAVEOF NO ONE, got %d", noone)
	}
}

func noFailover(t *testing.T, s *sim.Sim) {
	t.Helper()
	for _, typ := range []string{"+elected-leader", "+switch-master", "+promoted-slave"} {
		if n := s.Count("*", typ); n != 0 {
			t.Errorf("want no %s, got %d", typ, n)
		}
	}
	if n := len(s.Events("*", "slaveof")); n != 0 {
		t.Errorf("want no SLAVEOF, got %d", n)
	}
}

var three = []string{"s1", "s2", "s3"}

func TestScenarioPlainFailover(t *testing.T) {
	s := runScenario(t, "plain_failover")
	failoverFacts(t, s, three, "r1", "1")
	// Vigil's target: the promoted replica is advertised (RECONF_SLAVES)
	// within down-after + 1 s of the first SDOWN... measured from the kill
	// at 15 s with down-after 5 s.
	p := s.Events("*", "+promoted-slave")
	if len(p) != 1 || p[0].At > 15000+5000+1000 {
		t.Errorf("promotion at %v, want before 21 s", p)
	}
}

// TestScenarioEagerFailover: the same failover with Redis 7.0's timers
// only (tunables redis) reaches the same outcome, and Vigil's EagerFailover
// and INFO periods get every sentinel to +switch-master earlier, in
// simulated time.
func TestScenarioEagerFailover(t *testing.T) {
	redis := runScenario(t, "plain_failover_redis_timers")
	failoverFacts(t, redis, three, "r1", "1")
	vigil := runScenario(t, "plain_failover")
	for _, n := range three {
		r, v := redis.Events(n, "+switch-master"), vigil.Events(n, "+switch-master")
		if len(r) != 1 || len(v) != 1 {
			t.Fatalf("%s: +switch-master redis %v, vigil %v", n, r, v)
		}
		if v[0].At >= r[0].At {
			t.Errorf("%s: +switch-master at %d ms with Vigil's tunables, not before Redis's %d ms", n, v[0].At, r[0].At)
		}
	}
}

func TestScenarioAssertions(t *testing.T) {
	t.Run("no_quorum", func(t *testing.T) {
		s := runScenario(t, "no_quorum")
		noFailover(t, s)
		if s.Count("*", "+odown") != 0 {
			t.Error("ODOWN without quorum")
		}
	})
	t.Run("no_majority", func(t *testing.T) {
		s := runScenario(t, "no_majority")
		noFailover(t, s)
		aborts := s.Events("*", "-failover-abort-not-elected")
		if len(aborts) < 2 {
			t.Errorf("want repeated -failover-abort-not-elected, got %d", len(aborts))
		}
		// Attempts by the same sentinel are at least 2 x failover-timeout apart.
		last := map[string]int64{}
		for _, l := range s.Events("*", "+try-failover") {
			if prev, ok := last[l.Node]; ok && l.At-prev < 2*6000 {
				t.Errorf("%s retried after %d ms", l.Node, l.At-prev)
			}
			last[l.Node] = l.At
		}
	})
	t.Run("split_votes", func(t *testing.T) {
		s := runScenario(t, "split_votes")
		if n := s.Count("*", "-failover-abort-not-elected"); n < 2 {
			t.Errorf("want both halves to abort, got %d aborts", n)
		}
		failoverFacts(t, s, []string{"s1", "s2", "s3", "s4"}, "r1", "2")
	})
	t.Run("minority_partition", func(t *testing.T) {
		s := runScenario(t, "minority_partition")
		noFailover(t, s)
		if s.Count("s3", "+sdown") == 0 || s.Count("*", "+odown") != 0 {
			t.Error("the isolated sentinel must see SDOWN but never ODOWN")
		}
	})
	t.Run("replica_selection", func(t *testing.T) {
		s := runScenario(t, "replica_selection")
		failoverFacts(t, s, three, "r5", "1")
	})
	t.Run("replica_runid_tiebreak", func(t *testing.T) {
		s := runScenario(t, "replica_runid_tiebreak")
		failoverFacts(t, s, three, "r2", "1")
	})
	t.Run("old_master_returns", func(t *testing.T) {
		s := runScenario(t, "old_master_returns")
		failoverFacts(t, s, three, "r1", "1")
		c := s.Events("*", "+convert-to-slave")
		if len(c) != 1 || !strings.Contains(c[0].Message, "127.0.0.1:6379") {
			t.Errorf("want one +convert-to-slave of the old master, got %v", c)
		}
	})
	t.Run("config_propagation", func(t *testing.T) {
		s := runScenario(t, "config_propagation")
		failoverFacts(t, s, three, "r1", "1")
		if s.Count("s3", "+config-update-from") != 1 || s.Count("s3", "+elected-leader") != 0 {
			t.Error("s3 must learn the new config from a hello, not by electing itself")
		}
	})
	t.Run("tilt", func(t *testing.T) {
		s := runScenario(t, "tilt")
		failoverFacts(t, s, three, "r1", "1")
		in, out := s.Events("s1", "+tilt"), s.Events("s1", "-tilt")
		if len(in) != 1 || len(out) != 1 || out[0].At-in[0].At < 30000 {
			t.Fatalf("TILT in %v out %v", in, out)
		}
		for _, l := range s.Events("s1", "+sdown") {
			if l.At < out[0].At {
				t.Errorf("SDOWN judged during TILT: %v", l)
			}
		}
	})
	t.Run("forced_failover", func(t *testing.T) {
		s := runScenario(t, "forced_failover")
		// A forced failover skips the election: only our own vote.
		failoverFactsVotes(t, s, three, "r1", "1", 1)
		var replies []string
		for _, l := range s.Events("s1", "reply") {
			replies = append(replies, l.Message)
		}
		want := "+OK|-INPROG Failover already in progress|-NOGOODSLAVE No suitable replica to promote|-ERR No such master with that name"
		if got := strings.Join(replies, "|"); got != want {
			t.Errorf("replies %q, want %q", got, want)
		}
	})
	t.Run("reset", func(t *testing.T) {
		s := runScenario(t, "reset")
		noFailover(t, s)
	})
	t.Run("reconf_timeout", func(t *testing.T) {
		s := runScenario(t, "reconf_timeout")
		failoverFacts(t, s, three, "r1", "1")
	})
	t.Run("failover_end_timeout", func(t *testing.T) {
		s := runScenario(t, "failover_end_timeout")
		failoverFacts(t, s, three, "r1", "1")
	})
	t.Run("no_good_replica", func(t *testing.T) {
		s := runScenario(t, "no_good_replica")
		if s.Count("*", "+selected-slave") != 0 || s.Count("*", "+switch-master") != 0 || len(s.Events("*", "slaveof")) != 0 {
			t.Error("a replica was selected although all have priority 0")
		}
	})
	t.Run("promotion_timeout", func(t *testing.T) {
		s := runScenario(t, "promotion_timeout")
		if n := s.Count("*", "+switch-master"); n != 0 {
			t.Errorf("switch-master after an aborted promotion: %d", n)
		}
	})
	t.Run("coordinated_failover", func(t *testing.T) {
		s := runScenario(t, "coordinated_failover")
		for _, n := range three {
			sw := s.Events(n, "+switch-master")
			if len(sw) == 0 || !strings.HasSuffix(sw[0].Message, " 127.0.0.1 6380") {
				t.Errorf("%s: first +switch-master %v, want to r1 (6380)", n, sw)
			}
		}
		// The only SLAVEOF NO ONE is the transaction that persists r1's new
		// role (SLAVEOF NO ONE + CONFIG REWRITE), sent once r1 reports
		// role:master: the promotion itself is the master's FAILOVER.
		var noone []sim.Line
		for _, l := range s.Events("*", "slaveof") {
			if strings.HasSuffix(l.Message, "NO ONE") {
				noone = append(noone, l)
			}
		}
		end := s.Events("s1", "+coordinated-failover-end")
		if len(noone) != 1 || noone[0].Node != "s1" || noone[0].Message != "r1 NO ONE" {
			t.Errorf("SLAVEOF NO ONE sent %v, want once, by s1 to r1", noone)
		} else if len(end) != 1 || noone[0].At < end[0].At {
			t.Errorf("SLAVEOF NO ONE at %d, before +coordinated-failover-end %v", noone[0].At, end)
		}
		if n := len(s.Events("s1", "failover")); n != 1 {
			t.Errorf("FAILOVER sent %d times, want 1", n)
		}
		var replies []string
		for _, l := range s.Events("*", "reply") {
			replies = append(replies, l.Message)
		}
		want := "+OK|-INPROG Failover already in progress|-NOGOODMASTER The master is down: a coordinated failover needs it up"
		if got := strings.Join(replies, "|"); got != want {
			t.Errorf("replies %q, want %q", got, want)
		}
	})
	t.Run("coordinated_timeout", func(t *testing.T) {
		s := runScenario(t, "coordinated_timeout")
		if n := s.Count("*", "+switch-master") + s.Count("*", "+promoted-slave"); n != 0 {
			t.Errorf("promotion or switch after a timed-out coordinated failover: %d", n)
		}
		if n := len(s.Events("*", "slaveof")); n != 0 {
			t.Errorf("SLAVEOF sent after a timed-out coordinated failover: %d", n)
		}
	})
	t.Run("master_reboot", func(t *testing.T) {
		s := runScenario(t, "master_reboot")
		failoverFacts(t, s, three, "r1", "1")
	})
	t.Run("empty_restart", func(t *testing.T) {
		s := runScenario(t, "empty_restart")
		failoverFacts(t, s, three, "r1", "1")
	})
	t.Run("empty_restart_late", func(t *testing.T) {
		s := runScenario(t, "empty_restart_late")
		failoverFacts(t, s, three, "r1", "1")
	})

	// Sync-ack mode (syncack.go): each case of the rule.
	t.Run("syncack_promote_max", func(t *testing.T) {
		s := runScenario(t, "syncack_promote_max")
		failoverFacts(t, s, three, "r2", "1")
	})
	t.Run("syncack_two_of_three", func(t *testing.T) {
		s := runScenario(t, "syncack_two_of_three")
		failoverFacts(t, s, three, "r3", "1")
	})
	t.Run("syncack_empty_restart", func(t *testing.T) {
		s := runScenario(t, "syncack_empty_restart")
		failoverFacts(t, s, three, "r1", "1")
		if n := s.Count("*", "+no-ack-quorum"); n != 0 {
			t.Errorf("+no-ack-quorum: %d", n)
		}
	})
	t.Run("syncack_off", func(t *testing.T) {
		s := runScenario(t, "syncack_off")
		failoverFacts(t, s, three, "r1", "1")
		if n := s.Count("*", "+no-ack-quorum"); n != 0 {
			t.Errorf("+no-ack-quorum with the mode off: %d", n)
		}
	})
	t.Run("syncack_no_quorum", func(t *testing.T) {
		s := runScenario(t, "syncack_no_quorum")
		failoverFacts(t, s, three, "r2", "1")
		syncAckBlockedUntil(t, s, "+selected-slave")
	})
	t.Run("syncack_priority_zero", func(t *testing.T) {
		s := runScenario(t, "syncack_priority_zero")
		failoverFacts(t, s, three, "r2", "1")
		syncAckBlockedUntil(t, s, "+selected-slave")
		for _, l := range s.Events("*", "+no-ack-quorum") {
			if !strings.Contains(l.Message, "127.0.0.1:6381 priority-zero") {
				t.Errorf("%s: reason %q does not name r2's priority", l.Node, l.Message)
			}
		}
	})
	t.Run("syncack_restart", func(t *testing.T) {
		s := runScenario(t, "syncack_restart")
		failoverFacts(t, s, three, "r2", "1")
		syncAckBlockedUntil(t, s, "+selected-slave")
	})
	t.Run("syncack_joined_unseen", func(t *testing.T) {
		s := runScenario(t, "syncack_joined_unseen")
		// The failover away from the killed m, then none during the split.
		for _, n := range []string{"s1", "s2", "s3"} {
			if c := s.Count(n, "+switch-master"); c != 1 {
				t.Errorf("%s: %d +switch-master, want 1 (before the split only)", n, c)
			}
		}
		if n := s.Count("*", "+no-ack-quorum"); n == 0 {
			t.Error("no +no-ack-quorum during the split")
		}
	})
	t.Run("syncack_gate_unseen", func(t *testing.T) {
		// The script's expect-acks-count lines are the assertions (r3's
		// acks never counted, r4's once the sentinels saw it); then one
		// failover, which r3 (unknown to every sentinel) does not block.
		s := runScenario(t, "syncack_gate_unseen")
		for _, n := range []string{"s1", "s2", "s3"} {
			if c := s.Count(n, "+switch-master"); c != 1 {
				t.Errorf("%s: %d +switch-master, want 1", n, c)
			}
		}
	})
	t.Run("syncack_linked", func(t *testing.T) {
		s := runScenario(t, "syncack_linked")
		noFailover(t, s)
		replies := s.Events("s1", "reply")
		if len(replies) != 1 || !strings.HasPrefix(replies[0].Message, "-NOGOODSLAVE No replica proves") {
			t.Errorf("SENTINEL FAILOVER replied %v, want -NOGOODSLAVE", replies)
		}
	})

}

// syncAckBlockedUntil: every sentinel announced +no-ack-quorum, and nothing
// of the failover (no +try-failover) happened before the last of the
// -no-ack-quorum that lifted a block, and the event typ came after it.
func syncAckBlockedUntil(t *testing.T, s *sim.Sim, typ string) {
	t.Helper()
	for _, n := range three {
		if len(s.Events(n, "+no-ack-quorum")) == 0 {
			t.Errorf("%s: no +no-ack-quorum", n)
		}
	}
	lifted := s.Events("*", "-no-ack-quorum")
	if len(lifted) == 0 {
		t.Fatal("the block never lifted")
	}
	first := lifted[0].At
	for _, l := range s.Events("*", "+try-failover") {
		if l.At < first {
			t.Errorf("+try-failover at %d ms, before the block lifted at %d ms", l.At, first)
		}
	}
	if ev := s.Events("*", typ); len(ev) == 0 || ev[0].At < first {
		t.Errorf("%s %v, want after %d ms", typ, ev, first)
	}
}

// TestScenarioForget: forget-after-milliseconds (forget.go).
func TestScenarioForget(t *testing.T) {
	runScenario(t, "forget")
}
