package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestReplicaGeneratedReplyDisconnects is replication.tcl's "replica do
// not write the reply to the replication link": a command a replica sends
// on its link after SYNC or PSYNC that produces a reply (PING, XINFO HELP,
// a rejected GET) makes the master drop the replica and log "Replica
// generated a reply to command '<name>', disconnecting it", where Vigil
// dropped the reply and kept the link. Compared with redis-server 7.0.15:
// the connection ends without a reply byte, and the log line names the
// command.
func TestReplicaGeneratedReplyDisconnects(t *testing.T) {
	testutil.NeedRedis(t)
	type step struct{ sync, cmd []string }
	steps := []step{
		{[]string{"SYNC"}, []string{"PING"}},
		{[]string{"SYNC"}, []string{"XINFO", "HELP"}},
		{[]string{"PSYNC", "replicationid", "-1"}, []string{"GET", "foo"}},
		{[]string{"PSYNC", "replicationid", "-1"}, []string{"SLOWLOG", "GET"}},
	}
	scenario := func(dial func() *rconn, logs func() string) []string {
		var out []string
		for _, st := range steps {
			r := dial()
			r.send(st.sync...)
			if st.sync[0] == "PSYNC" {
				if got := r.read(); !strings.HasPrefix(got, "+FULLRESYNC") {
					t.Fatalf("PSYNC: %s", got)
				}
			}
			r.send(st.cmd...)
			// SYNC's payload (a newline while the save waits, then the
			// RDB) may come first; no reply to the command after it.
			closed := r.closedAfterPayload()
			name := strings.ToLower(st.cmd[0])
			if len(st.cmd) > 1 && name != "get" {
				name += "|" + strings.ToLower(st.cmd[1])
			}
			want := fmt.Sprintf("Replica generated a reply to command '%s', disconnecting it: ", name)
			eventually(t, "the log line "+want, func() bool { return strings.Contains(logs(), want) })
			out = append(out, fmt.Sprintf("%s %s: closed %v", st.sync[0], name, closed))
		}
		return out
	}
	replLogScenario(t, "a replica's command that replies", []string{
		"SYNC ping: closed true", "SYNC xinfo|help: closed true", "PSYNC get: closed true", "PSYNC slowlog|get: closed true"}, scenario)
}

// closedAfterPayload reports whether the server closes the connection
// within 5 seconds, whatever bytes (a sync's newlines or payload) it sends
// first.
func (r *rconn) closedAfterPayload() bool {
	r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, r.br)
	return err == nil || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset")
}
