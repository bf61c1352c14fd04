package server

import (
	"bufio"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// silentPsyncMaster listens on a loopback port as a master that answers
// the handshake (PING, AUTH, REPLCONF) and never answers PSYNC, as a
// master waiting for its diskless sync delay and then stuck (DEBUG SLEEP).
func silentPsyncMaster(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
					if err != nil || len(v.Elems) == 0 {
						return
					}
					switch strings.ToUpper(v.Elems[0].Str) {
					case "PING":
						c.Write([]byte("+PONG\r\n"))
					case "PSYNC", "SYNC":
					default:
						c.Write([]byte("+OK\r\n"))
					}
				}
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestReplicaHandshakeTimeoutLogged is replication.tcl's "Slave is able to
// detect timeout during handshake" (external:skip), on Vigil and
// redis-server 7.0.15 replicas of a master that never answers PSYNC: after
// repl-timeout the replica drops the connection and logs "Timeout
// connecting to the MASTER..." (replicationCron). Vigil's read deadline
// ended the connection first, and nothing was logged.
func TestReplicaHandshakeTimeoutLogged(t *testing.T) {
	testutil.NeedRedis(t)
	const want = "Timeout connecting to the MASTER..."
	port := strconv.Itoa(silentPsyncMaster(t))
	r := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--repl-timeout", "1"}})
	rc := r.Dial(t)
	t.Cleanup(func() { rc.Close() })
	if got := (&rconn{t: t, c: rc, br: bufio.NewReader(rc)}).do("REPLICAOF", "127.0.0.1", port); got != "+OK" {
		t.Fatalf("redis REPLICAOF: %s", got)
	}
	if !testutil.PollUntil(20*time.Second, func() bool { return strings.Contains(r.Log(), want) }) {
		t.Fatalf("redis-server did not log %q:\n%s", want, r.Log())
	}

	var logs testutil.LockedBuffer
	ts := newTestServerLog(t, zerolog.New(&logs).Level(zerolog.InfoLevel), "--repl-timeout", "1")
	c := ts.client()
	if got := ts.do(c, "REPLICAOF", "127.0.0.1", port); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF: %q", got)
	}
	t.Cleanup(func() { ts.do(c, "REPLICAOF", "NO", "ONE") })
	if !testutil.PollUntil(20*time.Second, func() bool { return strings.Contains(logs.String(), want) }) {
		t.Fatalf("vigil did not log %q:\n%s", want, logs.String())
	}
}
