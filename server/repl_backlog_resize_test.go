package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestReplBacklogResizeAtOnce: CONFIG SET repl-backlog-size applies at once
// (config.c's updateReplBacklogSize calls resizeReplicationBacklog), on
// Vigil and, when it is installed, on redis-server 7.0.15, step by step.
// A master whose backlog holds about 2.5 MB in blocks of 20440 bytes (16
// KB writes, each block jemalloc's 20480 with its 40-byte header; 20504 of
// memory with the list node) is shrunk to 16 KB: an INFO pipelined after
// the CONFIG SET (same read, no event loop turn between) already shows the
// new size and exactly 64 blocks trimmed (incrementalTrimReplicationBacklog
// (REPL_BACKLOG_TRIM_BLOCKS_PER_CALL)); the next INFO, after beforeSleep's
// ten times as many, shows the history within a block of the size. A
// CONFIG SET under 16 KB is floored (CONFIG GET shows it too); growing
// keeps the history.
func TestReplBacklogResizeAtOnce(t *testing.T) {
	args := []string{"--repl-backlog-size", "4mb", "--repl-diskless-sync", "no", "--save", ""}
	want := []string{
		"size 4194304",
		"size 16384, trimmed 1308160 bytes and 1312256 of memory",
		"size 16384, history within a block of it",
		"config 16384",
		"config 16384 after 1, size 16384",
		"size 1048576, history kept",
	}
	l := startLive(t, args...)
	vigil := backlogResizeScenario(t, func() *rconn { return l.dial(t) })
	for i := range want {
		if i >= len(vigil) || vigil[i] != want[i] {
			t.Fatalf("vigil:\n%q\nwant\n%q", vigil, want)
		}
	}
	if _, err := os.Stat(testutil.RedisBin); err != nil {
		t.Log("redis-server not installed: Vigil's steps only")
		return
	}
	rs := testutil.StartRedis(t, testutil.RedisOptions{Args: args})
	redis := backlogResizeScenario(t, func() *rconn { return rawConn(t, rs.Dial(t)) })
	sameAsRedis(t, "CONFIG SET repl-backlog-size", redis, vigil, want)
}

func backlogResizeScenario(t *testing.T, dial func() *rconn) []string {
	const block, blockMem = 20440, 20504
	admin := dial()
	info := func() map[string]int64 {
		t.Helper()
		admin.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		v, err := resp.ReadValue(admin.br, resp.DefaultReplyLimits)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for _, line := range strings.Split(v.Str, "\r\n") {
			if k, val, ok := strings.Cut(line, ":"); ok {
				if n, err := strconv.ParseInt(val, 10, 64); err == nil {
					m[k] = n
				}
			}
		}
		// The history ends at master_repl_offset.
		if m["repl_backlog_first_byte_offset"]+m["repl_backlog_histlen"]-1 != m["master_repl_offset"] {
			t.Fatalf("first byte %d, histlen %d, master_repl_offset %d", m["repl_backlog_first_byte_offset"],
				m["repl_backlog_histlen"], m["master_repl_offset"])
		}
		return m
	}
	get := func() map[string]int64 { admin.send("INFO", "everything"); return info() }
	config := func() string {
		t.Helper()
		admin.send("CONFIG", "GET", "repl-backlog-size")
		admin.c.SetReadDeadline(time.Now().Add(5 * time.Second))
		v, err := resp.ReadValue(admin.br, resp.DefaultReplyLimits)
		if err != nil || len(v.Elems) != 2 {
			t.Fatalf("CONFIG GET: %v %v", renderValue(v), err)
		}
		return v.Elems[1].Str
	}
	var steps []string

	// A backlog: a replica syncs, then leaves (the backlog stays).
	rep, got := psyncOn(t, dial(), "?", -1)
	if got != "+FULLRESYNC" {
		t.Fatalf("PSYNC: %s", got)
	}
	rep.r.c.Close()
	if !testutil.PollUntil(10*time.Second, func() bool { return get()["connected_slaves"] == 0 }) {
		t.Fatal("the replica is still connected")
	}
	val := strings.Repeat("x", 16000)
	for i := 0; i < 160; i += 16 {
		for j := i; j < i+16; j++ {
			admin.send("SET", "k"+strconv.Itoa(j), val)
		}
		for j := i; j < i+16; j++ {
			if got := admin.read(); got != "+OK" {
				t.Fatalf("SET: %s", got)
			}
		}
	}
	before := get()
	if h := before["repl_backlog_histlen"]; h < 16384+100*block {
		t.Fatalf("histlen %d: too short for the test", h)
	}
	steps = append(steps, fmt.Sprintf("size %d", before["repl_backlog_size"]))

	// CONFIG SET and INFO in one write: the INFO runs before the event
	// loop's next beforeSleep.
	b := resp.AppendCommandStrings(nil, "CONFIG", "SET", "repl-backlog-size", "16384")
	b = resp.AppendCommandStrings(b, "INFO", "everything")
	if _, err := admin.c.Write(b); err != nil {
		t.Fatal(err)
	}
	if got := admin.read(); got != "+OK" {
		t.Fatalf("CONFIG SET: %s", got)
	}
	at := info()
	steps = append(steps, fmt.Sprintf("size %d, trimmed %d bytes and %d of memory", at["repl_backlog_size"],
		before["repl_backlog_histlen"]-at["repl_backlog_histlen"],
		before["mem_total_replication_buffers"]-at["mem_total_replication_buffers"]))

	after := get()
	h := after["repl_backlog_histlen"]
	if h > 16384 && h-block <= 16384 && after["mem_total_replication_buffers"]%blockMem == 0 {
		steps = append(steps, fmt.Sprintf("size %d, history within a block of it", after["repl_backlog_size"]))
	} else {
		steps = append(steps, fmt.Sprintf("size %d, histlen %d, mem %d", after["repl_backlog_size"], h,
			after["mem_total_replication_buffers"]))
	}
	steps = append(steps, "config "+config())

	if got := admin.do("CONFIG", "SET", "repl-backlog-size", "1"); got != "+OK" {
		t.Fatalf("CONFIG SET 1: %s", got)
	}
	c := config()
	steps = append(steps, fmt.Sprintf("config %s after 1, size %d", c, get()["repl_backlog_size"]))

	if got := admin.do("CONFIG", "SET", "repl-backlog-size", "1mb"); got != "+OK" {
		t.Fatalf("CONFIG SET 1mb: %s", got)
	}
	grown := get()
	if grown["repl_backlog_histlen"] == h {
		steps = append(steps, fmt.Sprintf("size %d, history kept", grown["repl_backlog_size"]))
	} else {
		steps = append(steps, fmt.Sprintf("size %d, histlen %d (was %d)", grown["repl_backlog_size"], grown["repl_backlog_histlen"], h))
	}
	return steps
}

// TestReplBacklogSizeFromConfigStands: repl-backlog-size under 16 KB from
// the command line is not floored (createReplicationBacklog uses
// server.repl_backlog_size as loaded; only CONFIG SET's
// resizeReplicationBacklog floors it): INFO shows 100 before and after a
// replica creates the backlog, on Vigil and on redis-server 7.0.15.
func TestReplBacklogSizeFromConfigStands(t *testing.T) {
	args := []string{"--repl-backlog-size", "100", "--repl-diskless-sync", "no", "--save", ""}
	scenario := func(dial func() *rconn) []string {
		admin := dial()
		steps := []string{liveInfoField(t, admin, "replication", "repl_backlog_size")}
		if _, got := psyncOn(t, dial(), "?", -1); got != "+FULLRESYNC" {
			t.Fatalf("PSYNC: %s", got)
		}
		return append(steps, liveInfoField(t, admin, "replication", "repl_backlog_active")+" "+
			liveInfoField(t, admin, "replication", "repl_backlog_size"))
	}
	want := []string{"100", "1 100"}
	l := startLive(t, args...)
	vigil := scenario(func() *rconn { return l.dial(t) })
	if strings.Join(vigil, ",") != strings.Join(want, ",") {
		t.Fatalf("vigil %q, want %q", vigil, want)
	}
	if _, err := os.Stat(testutil.RedisBin); err != nil {
		t.Log("redis-server not installed: Vigil's steps only")
		return
	}
	rs := testutil.StartRedis(t, testutil.RedisOptions{Args: args})
	redis := scenario(func() *rconn { return rawConn(t, rs.Dial(t)) })
	sameAsRedis(t, "repl-backlog-size 100", redis, vigil, want)
}
