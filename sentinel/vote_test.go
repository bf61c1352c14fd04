package sentinel

import (
	"fmt"
	"testing"
)

// TestVoteRule is sentinelVoteLeader's table: one vote per epoch, adopt
// greater epochs, never vote for an epoch older than the current one.
func TestVoteRule(t *testing.T) {
	tests := []struct {
		name                   string
		current, leaderEpoch   uint64
		leader                 string
		reqEpoch               uint64
		reqRunID               string
		wantLeader             string
		wantEpoch, wantCurrent uint64
		wantEvents             []string
	}{
		{"first vote in a new epoch", 0, 0, "", 1, idB, idB, 1, 1,
			[]string{"+new-epoch 1", "+vote-for-leader " + idB + " 1"}},
		{"vote at the current epoch", 3, 2, idC, 3, idB, idB, 3, 3,
			[]string{"+vote-for-leader " + idB + " 3"}},
		{"already voted in this epoch", 3, 3, idC, 3, idB, idC, 3, 3, nil},
		{"request for an old epoch", 5, 2, idC, 4, idB, idC, 2, 5, nil},
		{"greater epoch after a vote", 3, 3, idC, 4, idB, idB, 4, 4,
			[]string{"+new-epoch 4", "+vote-for-leader " + idB + " 4"}},
		{"no vote and nothing to report", 5, 0, "", 3, idB, "", 0, 5, nil},
		{"vote for ourselves", 1, 1, idC, 2, idA, idA, 2, 2,
			[]string{"+new-epoch 2", "+vote-for-leader " + idA + " 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t)
			m := c.masters["mymaster"]
			c.currentEpoch, m.leaderEpoch, m.leader = tc.current, tc.leaderEpoch, tc.leader
			acts := c.Step(t0+1000, IsMasterDownAsked{IP: "127.0.0.1", Port: 6379, Epoch: tc.reqEpoch, RunID: tc.reqRunID})
			reply, ok := last(acts).(MasterDownReply)
			if !ok {
				t.Fatalf("last action %#v", last(acts))
			}
			wantLeader := tc.wantLeader
			if wantLeader == "" {
				wantLeader = "*"
			}
			if reply.Leader != wantLeader || reply.LeaderEpoch != tc.wantEpoch || c.currentEpoch != tc.wantCurrent {
				t.Errorf("reply %+v current %d", reply, c.currentEpoch)
			}
			if got := notifies(acts); fmt.Sprint(got) != fmt.Sprint(tc.wantEvents) {
				t.Errorf("events %q, want %q", got, tc.wantEvents)
			}
			// A vote is on disk before it is sent: RewriteConfig comes first.
			if len(tc.wantEvents) > 0 {
				if _, ok := acts[len(acts)-2].(RewriteConfig); !ok {
					t.Errorf("RewriteConfig must precede the reply: %#v", acts)
				}
			}
			// Voting for another sentinel delays our own failover.
			if tc.wantLeader == idB && tc.wantEpoch == tc.reqEpoch && m.failoverStartTime < t0+1000 {
				t.Errorf("failover_start_time not pushed: %d", m.failoverStartTime)
			}
		})
	}
}

func TestIsMasterDownAnswer(t *testing.T) {
	c := newCore(t)
	m := c.masters["mymaster"]
	ask := IsMasterDownAsked{IP: "127.0.0.1", Port: 6379, Epoch: 0, RunID: "*"}
	if r := last(c.Step(t0+1, ask)).(MasterDownReply); r != (MasterDownReply{false, "*", 0}) {
		t.Errorf("up master: %+v", r)
	}
	m.flags |= fSDown
	if r := last(c.Step(t0+2, ask)).(MasterDownReply); r != (MasterDownReply{true, "*", 0}) {
		t.Errorf("sdown master: %+v", r)
	}
	// Unknown address, or an invalid one: not down, no vote.
	for _, a := range []IsMasterDownAsked{{IP: "127.0.0.1", Port: 6390, Epoch: 9, RunID: idB}, {IP: "nope", Port: 6379, Epoch: 9, RunID: idB}} {
		if r := last(c.Step(t0+3, a)).(MasterDownReply); r != (MasterDownReply{false, "*", 0}) || c.currentEpoch != 0 {
			t.Errorf("%+v: %+v", a, r)
		}
	}
	// In TILT: down is always 0, but the vote is still cast.
	c.tilt, c.tiltStart = true, t0
	r := last(c.Step(t0+4, IsMasterDownAsked{IP: "127.0.0.1", Port: 6379, Epoch: 1, RunID: idB})).(MasterDownReply)
	if r != (MasterDownReply{false, idB, 1}) {
		t.Errorf("tilt: %+v", r)
	}
}

// TestGetLeader is sentinelGetLeader's table: the winner needs
// max(quorum, voters/2+1) votes among the votes of the current epoch.
func TestGetLeader(t *testing.T) {
	ids := []string{idB, idC, "dddddddddddddddddddddddddddddddddddddddd", "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"}
	tests := []struct {
		name   string
		others int      // other sentinels known
		votes  []string // their votes in the current epoch ("" = none)
		stale  []bool   // vote from an older epoch
		quorum int
		myVote string // existing vote of ours in this epoch ("" = none yet)
		want   string
	}{
		{"alone, quorum 1", 0, nil, nil, 1, "", idA},
		{"3 sentinels, 2 votes for us", 2, []string{idA, ""}, nil, 2, "", idA},
		{"3 sentinels, nobody voted for us", 2, []string{"", ""}, nil, 2, "", ""},
		{"3 sentinels, both voted B: we vote B too", 2, []string{idB, idB}, nil, 2, "", idB},
		{"stale votes do not count", 2, []string{idA, idA}, []bool{true, true}, 2, "", ""},
		{"5 known, 2 votes: no majority", 4, []string{idA, "", "", ""}, nil, 2, "", ""},
		{"5 known, 3 votes", 4, []string{idA, idA, "", ""}, nil, 2, "", idA},
		{"quorum above majority", 2, []string{idA, ""}, nil, 3, "", ""},
		{"quorum reached", 2, []string{idA, idA}, nil, 3, "", idA},
		{"split 2-2 of 4", 3, []string{idA, idB, idB}, nil, 2, idA, ""},
		{"we already voted for C: our vote stays", 2, []string{idB, ""}, nil, 2, idC, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(t)
			m := c.masters["mymaster"]
			m.quorum = tc.quorum
			c.currentEpoch = 7
			m.failoverEpoch = 7
			m.flags |= fODown | fFailoverInProgress
			if tc.myVote != "" {
				m.leader, m.leaderEpoch = tc.myVote, 7
			}
			for i := 0; i < tc.others; i++ {
				s, err := c.createInstance(ids[i], fSentinel, "127.0.0.1", 26380+i, m.quorum, m)
				if err != "" {
					t.Fatal(err)
				}
				s.runID = ids[i]
				if i < len(tc.votes) && tc.votes[i] != "" {
					s.leader, s.leaderEpoch = tc.votes[i], 7
					if i < len(tc.stale) && tc.stale[i] {
						s.leaderEpoch = 6
					}
				}
			}
			if got := c.getLeader(m, 7); got != tc.want {
				t.Errorf("leader %q, want %q", got, tc.want)
			}
		})
	}
}
