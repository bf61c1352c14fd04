package server

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startLiveAt starts a live server on 127.0.0.1:port; stop ends it and
// waits (it may be called twice).
func startLiveAt(t *testing.T, port int, directives ...string) (l *liveServer, stop func()) {
	t.Helper()
	return startLiveAtAfter(t, port, nil, directives...)
}

// startLiveAtAfter is startLiveAt with before (if not nil) run on the
// server before it listens, as startLiveAfter.
func startLiveAtAfter(t *testing.T, port int, before func(*Server), directives ...string) (l *liveServer, stop func()) {
	t.Helper()
	sock := t.TempDir() + "/v.sock"
	ts := newTestServer(t, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--unixsocket", sock, "--save", ""}, directives...)...)
	if before != nil {
		before(ts.s)
	}
	var err error
	for attempt := 0; attempt < 50; attempt++ { // the old listener's port may take a moment
		if err = ts.s.Listen(); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	l = runLive(t, ts, sock)
	return l, func() { l.stop(t) }
}

// A master that restarts empty (a new process on the same address, no
// files: a new replication ID, a dataset begun empty and one key written
// since) must not full-sync its replica into (near) emptiness: the replica
// keeps its keys, says so in INFO and retries; an operator's REPLICAOF
// naming that master clears the guard and the next sync loads the master's
// dataset. For both load modes: to disk
// (the temp RDB is inspected) and swapdb (the temporary keyspace is).
func TestEmptyRestartGuard(t *testing.T) {
	for _, load := range []string{"disabled", "swapdb"} {
		t.Run(load, func(t *testing.T) {
			probe, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			port := probe.Addr().(*net.TCPAddr).Port
			probe.Close()
			m1, stop1 := startLiveAt(t, port, "--repl-diskless-sync", "no")
			mc := m1.dial(t)
			for i := 0; i < 3; i++ {
				if got := mc.do("SET", "k"+strconv.Itoa(i), "v"); got != "+OK" {
					t.Fatalf("SET: %s", got)
				}
			}
			r, _ := startLiveTCP(t, "--repl-diskless-load", load)
			rc := r.dial(t)
			if got := rc.do("CONFIG", "GET", "replica-refuse-empty-sync"); !strings.Contains(got, "yes") {
				t.Fatalf("CONFIG GET replica-refuse-empty-sync: %s", got)
			}
			if got := rc.do("REPLICAOF", "127.0.0.1", strconv.Itoa(port)); got != "+OK" {
				t.Fatalf("REPLICAOF: %s", got)
			}
			eventually(t, "the replica to sync", func() bool {
				return liveInfoField(t, rc, "replication", "master_link_status") == "up" && rc.do("DBSIZE") == "(integer) 3"
			})
			if got := liveInfoField(t, rc, "replication", "master_sync_refused_empty"); got != "" {
				t.Fatalf("master_sync_refused_empty %q while synced", got)
			}

			stop1()
			m2, _ := startLiveAt(t, port, "--repl-diskless-sync", "no")
			m2c := m2.dial(t)
			// Clients write to the restarted master at once: its payload is
			// not empty, but it says its history began empty at its start.
			if got := m2c.do("SET", "new", "1"); got != "+OK" {
				t.Fatalf("SET on the restarted master: %s", got)
			}
			eventually(t, "the guard to refuse the empty master", func() bool {
				return liveInfoField(t, rc, "replication", "master_sync_refused_empty") == "1"
			})
			keepsKeys(t, rc, "while the guard holds")
			if why := liveInfoField(t, rc, "replication", "master_sync_refused_reason"); !strings.Contains(why, "127.0.0.1:"+strconv.Itoa(port)) || !strings.Contains(why, "3 keys") {
				t.Fatalf("master_sync_refused_reason %q", why)
			}
			if got := liveInfoField(t, rc, "replication", "master_link_status"); got != "down" {
				t.Fatalf("master_link_status %q while the guard holds", got)
			}
			// The refused replica must not ACK: while it retries, the master
			// may list it (connected_slaves counts a sync in progress, and a
			// disk sync is online once sent), but never with an offset.
			if line := liveInfoField(t, m2c, "replication", "slave0"); line != "" && !strings.Contains(line, ",offset=0,") {
				t.Fatalf("the empty master lists the refused replica with an acknowledged offset: %s", line)
			}
			// Still refused on the retries (the link retries every second).
			first := liveInfoField(t, m2c, "stats", "sync_full")
			eventually(t, "a retry", func() bool { return liveInfoField(t, m2c, "stats", "sync_full") != first })
			keepsKeys(t, rc, "after a retry")

			// The operator's explicit REPLICAOF of that master is obeyed.
			if got := rc.do("REPLICAOF", "127.0.0.1", strconv.Itoa(port)); got != "+OK Already connected to specified master" {
				t.Fatalf("REPLICAOF: %s", got)
			}
			eventually(t, "the replica to load the restarted master's dataset", func() bool {
				return liveInfoField(t, rc, "replication", "master_link_status") == "up" && rc.do("DBSIZE") == "(integer) 1"
			})
			if got := liveInfoField(t, rc, "replication", "master_sync_refused_empty"); got != "" {
				t.Fatalf("master_sync_refused_empty %q after the override", got)
			}
		})
	}
}

// keepsKeys checks that the refused replica still holds its 3 keys. A
// retry's payload may be loading at that moment: the restarted master has a
// new replication ID, so even swapdb loads synchronously (Redis 7.0's
// readSyncBulkPayload uses async loading only for the same replid) and
// DBSIZE answers -LOADING until the guard refuses; any other answer fails.
func keepsKeys(t *testing.T, rc *rconn, when string) {
	t.Helper()
	eventually(t, "DBSIZE 3 "+when, func() bool {
		got := rc.do("DBSIZE")
		if got != "(integer) 3" && !strings.HasPrefix(got, "-LOADING") {
			t.Fatalf("DBSIZE %s: %s", when, got)
		}
		return got == "(integer) 3"
	})
}

// With replica-refuse-empty-sync no, the replica loads the empty dataset,
// as Redis does.
func TestEmptyRestartGuardOff(t *testing.T) {
	probe, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	m1, stop1 := startLiveAt(t, port, "--repl-diskless-sync", "no")
	if got := m1.dial(t).do("SET", "k", "v"); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	r, _ := startLiveTCP(t)
	rc := r.dial(t)
	if got := rc.do("CONFIG", "SET", "replica-refuse-empty-sync", "no"); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	if got := rc.do("REPLICAOF", "127.0.0.1", strconv.Itoa(port)); got != "+OK" {
		t.Fatalf("REPLICAOF: %s", got)
	}
	eventually(t, "the replica to sync", func() bool { return rc.do("DBSIZE") == "(integer) 1" })
	stop1()
	startLiveAt(t, port, "--repl-diskless-sync", "no")
	eventually(t, "the replica to load the empty dataset", func() bool {
		return liveInfoField(t, rc, "replication", "master_link_status") == "up" && rc.do("DBSIZE") == "(integer) 0"
	})
}
