package server

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
)

// helloMsg is a sentinel hello naming ip:port the master at epoch.
func helloMsg(runID, ip, port, epoch string) string {
	return "127.0.0.1,26379," + runID + ",9,mymaster," + ip + "," + port + "," + epoch
}

const (
	sentA = "aaaaaaaa00000000000000000000000000000001"
	sentB = "bbbbbbbb00000000000000000000000000000002"
	sentC = "cccccccc00000000000000000000000000000003"
)

func replField(ts *testServer, c *Client, field string) string {
	raw := ts.do(c, "INFO", "replication")
	for _, l := range strings.Split(raw, "\r\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			return v
		}
	}
	return ""
}

// TestFenceByHello: a master (this test client's connection arrives on
// 127.0.0.1:6379) that receives a hello of a higher config epoch naming
// another master refuses writes at once, with READONLY naming the new
// master, until REPLICAOF, CONFIG SET master-fence "" or a stamp lifts it.
func TestFenceByHello(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	if got := ts.do(c, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
	// Never monitored: INFO is redis-server's.
	if strings.Contains(ts.do(c, "INFO", "replication"), "master_config_epoch") {
		t.Fatal("fencing fields on a server never monitored")
	}
	// Epoch 0, naming this server: monitored, nothing else.
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentA, "127.0.0.1", "6379", "0"))
	if got := replField(ts, c, "master_fenced"); got != "0" {
		t.Fatalf("master_fenced = %q", got)
	}
	if got := replField(ts, c, "master_sentinels_known"); got != "1" {
		t.Fatalf("master_sentinels_known = %q", got)
	}
	// Epoch 2 names 10.9.9.9:7001.
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentB, "10.9.9.9", "7001", "2"))
	want := "-READONLY You can't write against a read only replica. This master is fenced: config epoch 2 made 10.9.9.9:7001 the master.\r\n"
	if got := ts.do(c, "SET", "k", "w"); got != want {
		t.Fatalf("SET while fenced: %q", got)
	}
	if got := ts.do(c, "GET", "k"); got != "$1\r\nv\r\n" {
		t.Fatalf("GET while fenced: %q", got)
	}
	if got := ts.do(c, "EVAL", "return redis.call('set','k','x')", "0"); !strings.Contains(got, "This master is fenced") {
		t.Fatalf("EVAL while fenced: %q", got)
	}
	ts.do(c, "MULTI")
	ts.do(c, "INCR", "n")
	if got := ts.do(c, "EXEC"); !strings.HasPrefix(got, "-EXECABORT") {
		t.Fatalf("EXEC while fenced: %q", got)
	}
	for f, v := range map[string]string{"master_fenced": "1", "master_fenced_reason": "epoch", "master_fenced_epoch": "2",
		"master_fenced_by": "10.9.9.9:7001", "master_config_epoch": "0", "master_config_epoch_seen": "2"} {
		if got := replField(ts, c, f); got != v {
			t.Errorf("INFO %s = %q, want %q", f, got, v)
		}
	}
	if got := ts.do(c, "CONFIG", "GET", "master-fence"); !strings.Contains(got, "2 10.9.9.9 7001") {
		t.Fatalf("CONFIG GET master-fence: %q", got)
	}
	// An older or equal hello changes nothing.
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentA, "127.0.0.1", "6379", "1"))
	if got := ts.do(c, "SET", "k", "w"); got != want {
		t.Fatalf("SET after an older hello: %q", got)
	}
	// REPLICAOF NO ONE (an operator's) lifts it and adopts epoch 2.
	if got := ts.do(c, "REPLICAOF", "NO", "ONE"); got != "+OK\r\n" {
		t.Fatalf("REPLICAOF NO ONE: %q", got)
	}
	if got := ts.do(c, "SET", "k", "w"); got != "+OK\r\n" {
		t.Fatalf("SET after REPLICAOF NO ONE: %q", got)
	}
	if got := replField(ts, c, "master_config_epoch"); got != "2" {
		t.Fatalf("master_config_epoch = %q", got)
	}
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentB, "10.9.9.9", "7001", "2"))
	if got := ts.do(c, "SET", "k", "w"); got != "+OK\r\n" {
		t.Fatalf("SET after the same epoch's hello: %q", got)
	}
	// Epoch 3: fenced again; CONFIG SET master-fence "" lifts it.
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentB, "10.9.9.9", "7002", "3"))
	if got := ts.do(c, "SET", "k", "w"); !strings.Contains(got, "config epoch 3 made 10.9.9.9:7002") {
		t.Fatalf("SET after epoch 3: %q", got)
	}
	if got := ts.do(c, "CONFIG", "SET", "master-fence", ""); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET master-fence: %q", got)
	}
	if got := ts.do(c, "SET", "k", "w"); got != "+OK\r\n" {
		t.Fatalf("SET after clearing: %q", got)
	}
	// Epoch 5: fenced; vigil-sentinel's stamp (CONFIG SET
	// master-config-epoch 5) lifts it.
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentB, "10.9.9.9", "7002", "5"))
	if got := ts.do(c, "SET", "k", "w"); !strings.HasPrefix(got, "-READONLY") {
		t.Fatalf("SET after epoch 5: %q", got)
	}
	if got := ts.do(c, "CONFIG", "SET", "master-config-epoch", "5"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET master-config-epoch: %q", got)
	}
	if got := ts.do(c, "SET", "k", "w"); got != "+OK\r\n" {
		t.Fatalf("SET after the stamp: %q", got)
	}
	// A hello that names this server at a higher epoch is adopted (a
	// redis-sentinel promotion, which does not stamp).
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentB, "127.0.0.1", "6379", "6"))
	if got := replField(ts, c, "master_config_epoch"); got != "6" {
		t.Fatalf("master_config_epoch after a hello naming this server = %q", got)
	}
	if got := ts.do(c, "CONFIG", "SET", "master-fence", "x"); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("CONFIG SET master-fence x: %q", got)
	}
	// Malformed hellos are ignored.
	for _, m := range []string{"", "a,b", helloMsg(sentB, "10.9.9.9", "port", "9")} {
		ts.do(c, "PUBLISH", "__sentinel__:hello", m)
	}
	if got := ts.do(c, "SET", "k", "w"); got != "+OK\r\n" {
		t.Fatalf("SET after malformed hellos: %q", got)
	}
}

// TestFenceReplicaAdopts: a replica records the epoch and is never fenced.
func TestFenceReplicaAdopts(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	ts.do(c, "REPLICAOF", "127.0.0.1", "1") // nothing listens: the link stays down
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentA, "10.9.9.9", "7001", "4"))
	if got := replField(ts, c, "master_config_epoch"); got != "4" {
		t.Fatalf("replica's master_config_epoch = %q", got)
	}
	if got := replField(ts, c, "master_fenced"); got != "0" {
		t.Fatalf("replica's master_fenced = %q", got)
	}
	ts.do(c, "REPLICAOF", "NO", "ONE")
	if got := ts.do(c, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET: %q", got)
	}
}

// TestFenceIsolation: a monitored master that hears from neither a
// majority of its sentinels nor a replica for master-isolation-timeout
// refuses writes, and accepts them again once a majority is heard.
func TestFenceIsolation(t *testing.T) {
	ts := newTestServer(t, "--master-isolation-timeout", "2000")
	c := ts.client()
	// Never monitored: never fenced, however long.
	ts.clk.Advance(time.Hour)
	if got := ts.do(c, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET on an unmonitored master: %q", got)
	}
	for _, id := range []string{sentA, sentB, sentC} {
		ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(id, "127.0.0.1", "6379", "0"))
	}
	ts.clk.Advance(1999 * time.Millisecond)
	if got := ts.do(c, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET within the bound: %q", got)
	}
	ts.clk.Advance(time.Millisecond)
	want := "-READONLY You can't write against a read only replica. This master is isolated: no contact with a majority of its 3 sentinels nor with 1 replica(s) for 2000 ms (master-isolation-timeout).\r\n"
	if got := ts.do(c, "SET", "k", "v"); got != want {
		t.Fatalf("SET at the bound: %q", got)
	}
	if got := replField(ts, c, "master_fenced_reason"); got != "isolated" {
		t.Fatalf("master_fenced_reason = %q", got)
	}
	// One sentinel's PING (its command connection): not a majority.
	a, b := ts.client(), ts.client()
	ts.do(a, "CLIENT", "SETNAME", "sentinel-aaaaaaaa-cmd")
	ts.do(b, "CLIENT", "SETNAME", "sentinel-bbbbbbbb-cmd")
	ts.do(a, "PING")
	if got := ts.do(c, "SET", "k", "v"); got != want {
		t.Fatalf("SET with 1 of 3 sentinels: %q", got)
	}
	ts.do(b, "PING")
	if got := ts.do(c, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET with 2 of 3 sentinels: %q", got)
	}
	if got := replField(ts, c, "master_fenced"); got != "0" {
		t.Fatalf("master_fenced = %q", got)
	}
	// A shorter timeout applies at once (the cached verdict is dropped).
	ts.do(c, "CONFIG", "SET", "master-isolation-timeout", "10")
	ts.clk.Advance(10 * time.Millisecond)
	if got := ts.do(c, "SET", "k", "v"); !strings.Contains(got, "for 10 ms") {
		t.Fatalf("SET after lowering the timeout: %q", got)
	}
	// Off at runtime: never isolated.
	ts.do(c, "CONFIG", "SET", "master-isolation-timeout", "0")
	ts.clk.Advance(time.Hour)
	if got := ts.do(c, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET with the rule off: %q", got)
	}
}

// confServer writes conf to a config file and returns its path and a
// function that starts a server (fake clock) from it, as a restart does.
func confServer(t *testing.T, conf string) (string, func() *testServer) {
	t.Helper()
	path := t.TempDir() + "/vigil.conf"
	if err := writeFile(path, conf); err != nil {
		t.Fatal(err)
	}
	return path, func() *testServer {
		cfg, err := configs.Load(configs.LoadOptions{ConfigFile: path, Args: []string{"--dir", t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		clk := clock.NewFake(time.Unix(1700000000, 0))
		s, err := New(cfg, zerolog.Nop(), WithClock(clk))
		if err != nil {
			t.Fatal(err)
		}
		return &testServer{s: s, clk: clk}
	}
}

// TestFencePersisted: a raised fence is written to the config file at once
// (a deposed master restarted while cut off stays fenced); REPLICAOF
// removes it.
func TestFencePersisted(t *testing.T) {
	path, load := confServer(t, "port 0\n")
	ts := load()
	c := ts.client()
	ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(sentA, "10.9.9.9", "7001", "3"))
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `master-fence "3 10.9.9.9 7001"`) {
		t.Fatalf("config file after the fence:\n%s", b)
	}
	// Restarted: still fenced, before any hello.
	ts2 := load()
	c2 := ts2.client()
	if got := ts2.do(c2, "SET", "k", "v"); !strings.Contains(got, "config epoch 3 made 10.9.9.9:7001") {
		t.Fatalf("SET after the restart: %q", got)
	}
	ts2.do(c2, "REPLICAOF", "NO", "ONE")
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), `master-fence "3`) || !strings.Contains(string(b), "master-config-epoch 3") {
		t.Fatalf("config file after REPLICAOF NO ONE:\n%s", b)
	}
}

// TestFenceKnownSentinelsPersisted: the sentinels a master learned from
// hellos are written to the config file as soon as one is learned, so a
// master restarted while cut off from them is monitored at once and
// isolates itself master-isolation-timeout after its start, before any
// hello reaches it; CONFIG SET master-known-sentinels "" forgets them.
func TestFenceKnownSentinelsPersisted(t *testing.T) {
	path, load := confServer(t, "port 0\nmaster-isolation-timeout 2000\n")
	ts := load()
	c := ts.client()
	for _, id := range []string{sentB, sentA, sentC} {
		ts.do(c, "PUBLISH", "__sentinel__:hello", helloMsg(id, "127.0.0.1", "6379", "0"))
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `master-known-sentinels "aaaaaaaa bbbbbbbb cccccccc"`) {
		t.Fatalf("config file after three hellos:\n%s", b)
	}
	if got := ts.do(c, "CONFIG", "GET", "master-known-sentinels"); !strings.Contains(got, "aaaaaaaa bbbbbbbb cccccccc") {
		t.Fatalf("CONFIG GET master-known-sentinels: %q", got)
	}

	// Restarted, no hello since: monitored, 3 sentinels known, writes
	// accepted within the bound from the start and refused at it.
	ts2 := load()
	c2 := ts2.client()
	if got := replField(ts2, c2, "master_sentinels_known"); got != "3" {
		t.Fatalf("master_sentinels_known after the restart = %q", got)
	}
	ts2.clk.Advance(1999 * time.Millisecond)
	if got := ts2.do(c2, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET within the bound after the restart: %q", got)
	}
	ts2.clk.Advance(time.Millisecond)
	if got := ts2.do(c2, "SET", "k", "v"); !strings.Contains(got, "This master is isolated: no contact with a majority of its 3 sentinels") {
		t.Fatalf("SET at the bound after the restart: %q", got)
	}
	// Two of them heard again (command connections): writes resume.
	a, bb := ts2.client(), ts2.client()
	ts2.do(a, "CLIENT", "SETNAME", "sentinel-aaaaaaaa-cmd")
	ts2.do(bb, "CLIENT", "SETNAME", "sentinel-bbbbbbbb-cmd")
	ts2.do(a, "PING")
	ts2.do(bb, "PING")
	if got := ts2.do(c2, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET with 2 of 3 sentinels heard: %q", got)
	}
	// Forgotten: never isolated again until a hello.
	if got := ts2.do(c2, "CONFIG", "SET", "master-known-sentinels", ""); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET master-known-sentinels \"\": %q", got)
	}
	ts2.clk.Advance(time.Hour)
	if got := ts2.do(c2, "SET", "k", "v"); got != "+OK\r\n" {
		t.Fatalf("SET after forgetting the sentinels: %q", got)
	}
	if got := ts2.do(c2, "CONFIG", "SET", "master-known-sentinels", "toolongkey1"); !strings.HasPrefix(got, "-ERR") {
		t.Fatalf("CONFIG SET of a bad value: %q", got)
	}
}
