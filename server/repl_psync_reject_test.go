package server

import (
	"bufio"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// replLogScenario runs fn against redis-server (loglevel verbose) and against Vigil, each
// with its log, and compares what fn returns.
func replLogScenario(t *testing.T, what string, want []string, fn func(dial func() *rconn, logs func() string) []string) {
	t.Helper()
	testutil.NeedRedis(t)
	rs := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--repl-diskless-sync", "no", "--loglevel", "verbose"}})
	redis := fn(func() *rconn {
		rc := rs.Dial(t)
		t.Cleanup(func() { rc.Close() })
		return &rconn{t: t, c: rc, br: bufio.NewReader(rc)}
	}, rs.Log)
	logs := &testutil.LockedBuffer{}
	l := startLiveAfter(t, func(s *Server) { s.log = zerolog.New(logs) }, "--repl-diskless-sync", "no")
	vigil := fn(func() *rconn { return l.dial(t) }, logs.String)
	sameAsRedis(t, what, redis, vigil, want)
}

// TestReplicaKeyspaceCommandRejected is processCommand's "Replica can't
// interact with the keyspace": a client made a replica by PSYNC that sends
// a command reading, writing or that may replicate (GET) is refused, the
// error logged by afterErrorReply as "== CRITICAL == This master is sending
// an error to its replica", and the replica dropped for the reply
// (replication.tcl's "replica do not write the reply to the replication
// link - PSYNC (_addReplyToBufferOrList)"). Vigil ran the GET, so neither
// the refusal nor the CRITICAL line was logged.
func TestReplicaKeyspaceCommandRejected(t *testing.T) {
	const critical = "== CRITICAL == This master is sending an error to its replica: '"
	const refusal = "Replica can't interact with the keyspace' after processing the command 'get'"
	replLogScenario(t, "a replica's GET", []string{"PSYNC get: closed true, critical logged true"},
		func(dial func() *rconn, logs func() string) []string {
			r := dial()
			r.send("PSYNC", "replicationid", "-1")
			if got := r.read(); !strings.HasPrefix(got, "+FULLRESYNC") {
				t.Fatalf("PSYNC: %s", got)
			}
			r.send("GET", "foo")
			closed := r.closedAfterPayload()
			logged := false
			eventually(t, "the CRITICAL log line", func() bool {
				l := logs()
				logged = strings.Contains(l, critical) && strings.Contains(l, refusal)
				return logged
			})
			return []string{"PSYNC get: closed " + strconv.FormatBool(closed) + ", critical logged " + strconv.FormatBool(logged)}
		})
}

// TestPsyncWrongOffsetLogged is syncCommand's PSYNC whose offset is not an
// integer: the error reply, and the warning "Replica <ip>:<port> asks for
// synchronization but with a wrong offset" naming the replica as
// replicationGetSlaveName does (its REPLCONF ip-address and listening-port),
// which replication.tcl's "PSYNC with wrong offset should throw error"
// looks for. Vigil replied but logged nothing. The connection stays a
// normal client.
func TestPsyncWrongOffsetLogged(t *testing.T) {
	const line = "Replica 10.1.2.3:4321 asks for synchronization but with a wrong offset"
	replLogScenario(t, "PSYNC with a wrong offset", []string{
		"-ERR value is not an integer or out of range", "+PONG", "logged true"},
		func(dial func() *rconn, logs func() string) []string {
			r := dial()
			if got := r.do("REPLCONF", "listening-port", "4321", "ip-address", "10.1.2.3"); got != "+OK" {
				t.Fatalf("REPLCONF: %s", got)
			}
			out := []string{r.do("PSYNC", "replicationid", "offset_str"), r.do("PING")}
			logged := false
			eventually(t, "the log line "+line, func() bool {
				logged = strings.Contains(logs(), line)
				return logged
			})
			return append(out, "logged "+strconv.FormatBool(logged))
		})
}
