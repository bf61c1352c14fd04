package server

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// readSyncPayload reads the RDB a SYNC sent (keepalive newlines skipped)
// and describes it: the framing ("eof" for $EOF:<mark>, "bulk" for
// $<len>), the keys and the libraries it holds.
func readSyncPayload(r *rconn) string {
	r.t.Helper()
	r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var line string
	for {
		l, err := r.br.ReadString('\n')
		if err != nil {
			r.t.Fatalf("payload header: %v", err)
		}
		if l != "\n" {
			line = strings.TrimSuffix(l, "\r\n")
			break
		}
	}
	var body []byte
	framing := "bulk"
	switch {
	case strings.HasPrefix(line, "$EOF:"):
		framing = "eof"
		mark := []byte(line[5:])
		for !bytes.HasSuffix(body, mark) || len(body) < len(mark) {
			b, err := r.br.ReadByte()
			if err != nil {
				r.t.Fatalf("payload: %v", err)
			}
			body = append(body, b)
		}
		body = body[:len(body)-len(mark)]
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			r.t.Fatalf("payload header %q", line)
		}
		body = make([]byte, n)
		if _, err := ioReadFull(r, body); err != nil {
			r.t.Fatalf("payload: %v", err)
		}
	default:
		return "reply " + line
	}
	info, err := rdb.Load(bytes.NewReader(body), rdb.LoadOptions{Databases: 16, Enc: keyspace.DefaultEncodingConfig()}, func(rdb.Record) error { return nil })
	if err != nil {
		r.t.Fatalf("payload RDB: %v", err)
	}
	libs := []string{}
	for _, src := range info.Functions {
		if m := regexp.MustCompile(`name=(\S+)`).FindStringSubmatch(src); m != nil {
			libs = append(libs, m[1])
		}
	}
	return fmt.Sprintf("%s keys=%d libs=%v", framing, info.Keys, libs)
}

func ioReadFull(r *rconn, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.br.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestReplconfRDBFilterOnlySync is integration/redis-cli.tcl's "Dumping an
// RDB - functions only" at the protocol level, on redis-server 7.0.15 and
// on Vigil, with a disk-based and a diskless master: redis-cli
// --functions-rdb (capa eof, rdb-only 1, rdb-filter-only functions) gets
// an RDB of the libraries only, over the socket even when the master
// syncs to disk, and is disconnected after it, never a replica; --rdb
// gets everything; --replica (rdb-filter-only "") gets an empty RDB and
// then the stream, as a replica; a filtered SYNC without capa eof is
// refused; a rejected filter still leaves the client's RDB filtered, as
// Redis sets the bits first. CONFIG RESETSTAT clears sync_full.
func TestReplconfRDBFilterOnlySync(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	scenario := func(dial func() *rconn, diskless string) []string {
		var out []string
		ctl := dial()
		step := func(s string) { out = append(out, s) }
		for _, cmd := range [][]string{
			{"CONFIG", "SET", "repl-diskless-sync", diskless},
			{"CONFIG", "SET", "repl-diskless-sync-delay", "0"},
			{"FLUSHALL"}, {"FUNCTION", "FLUSH"},
			{"SET", "a", "1"}, {"SET", "b", "2"},
			{"FUNCTION", "LOAD", "#!lua name=lib1\nredis.register_function('func1', function() return 123 end)"},
		} {
			step(ctl.do(cmd...))
		}
		info := func() string {
			v, _ := strconv.Unquote(ctl.do("INFO", "replication"))
			return v
		}
		replicas := func() string {
			v := info()
			for _, f := range strings.Split(v, "\r\n") {
				if strings.HasPrefix(f, "connected_slaves:") {
					return f
				}
			}
			return v
		}
		waitNoReplicas := func() {
			if !testutil.PollUntil(10*time.Second, func() bool { return replicas() == "connected_slaves:0" }) {
				t.Fatalf("replica still listed: %s", replicas())
			}
			step(replicas())
		}
		sync := func(conf ...[]string) *rconn {
			r := dial()
			for _, c := range conf {
				step(r.do(append([]string{"REPLCONF"}, c...)...))
			}
			r.send("SYNC")
			step(readSyncPayload(r))
			return r
		}
		// redis-cli --functions-rdb, then --rdb.
		for _, filter := range [][]string{{"rdb-filter-only", "functions"}, nil} {
			conf := [][]string{{"capa", "eof"}, {"rdb-only", "1"}}
			if filter != nil {
				conf = append(conf, filter)
			}
			r := sync(conf...)
			step("closed " + strconv.FormatBool(r.closed()))
			waitNoReplicas()
		}
		// A rejected filter leaves the RDB filtered (both parts out).
		r := sync([]string{"capa", "eof"}, []string{"rdb-only", "1"}, []string{"rdb-filter-only", "functions foo"})
		step("closed " + strconv.FormatBool(r.closed()))
		waitNoReplicas()
		// No EOF capability: refused, the connection stays.
		r = dial()
		step(r.do("REPLCONF", "rdb-filter-only", "functions"))
		step(r.do("SYNC"))
		step(r.do("PING"))
		// redis-cli --replica: an empty RDB, then the stream.
		r = sync([]string{"capa", "eof"}, []string{"rdb-filter-only", ""})
		// The ACK that starts the stream after an EOF-marked RDB goes once
		// the master has the replica online (redis-cli sleeps a second
		// for that).
		if !testutil.PollUntil(10*time.Second, func() bool { return strings.Contains(info(), "state=online") }) {
			t.Fatalf("--replica not online: %s", info())
		}
		r.send("REPLCONF", "ACK", "0")
		step(replicas())
		step(ctl.do("SET", "c", "3"))
		for {
			v := r.read()
			if strings.Contains(v, "SET") {
				step(v)
				break
			}
		}
		r.c.Close()
		waitNoReplicas()
		// The sync counters, and CONFIG RESETSTAT clears them.
		stats := func() string {
			return liveInfoField(t, ctl, "stats", "sync_full") + " " + liveInfoField(t, ctl, "stats", "sync_partial_err")
		}
		step(stats())
		step(ctl.do("CONFIG", "RESETSTAT"))
		step(stats())
		return out
	}
	for _, diskless := range []string{"no", "yes"} {
		redis := scenario(dialRedis, diskless)
		vigil := scenario(func() *rconn { return l.dial(t) }, diskless)
		if strings.Join(redis, "\n") != strings.Join(vigil, "\n") {
			t.Errorf("repl-diskless-sync %s:\nredis:\n%s\nvigil:\n%s", diskless, strings.Join(redis, "\n"), strings.Join(vigil, "\n"))
		}
		for _, want := range []string{"eof keys=0 libs=[lib1]", "eof keys=0 libs=[]", "-ERR Filtered replica requires EOF capability"} {
			if !strings.Contains(strings.Join(redis, "\n"), want) {
				t.Errorf("redis-server's steps lack %q:\n%s", want, strings.Join(redis, "\n"))
			}
		}
	}
}
