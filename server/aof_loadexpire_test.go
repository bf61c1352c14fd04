package server

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestAOFLoadKeepsPastTTLKeys is aof.tcl's "AOF+EXPIRE: List should be
// empty" (external:skip), on Vigil and redis-server 7.0.15 loading the
// same AOF: nothing expires while the AOF loads (checkAlreadyExpired and
// keyIsExpired return 0 while loading), so a PEXPIREAT in the past keeps
// the key, with its TTL, for the commands after it. Here RPUSH appends to
// it and PERSIST keeps it: [foo bar]. Vigil deleted the key at the
// PEXPIREAT, so the RPUSH made a new list [bar].
func TestAOFLoadKeepsPastTTLKeys(t *testing.T) {
	testutil.NeedRedis(t)
	var aofText []byte
	for _, argv := range [][]string{
		{"SELECT", "0"},
		{"RPUSH", "list", "foo"}, {"PEXPIREAT", "list", "1000"}, {"RPUSH", "list", "bar"}, {"PERSIST", "list"},
		{"RPUSH", "l2", "x"}, {"PEXPIREAT", "l2", "1000"}, {"RPUSH", "l2", "y"},
	} {
		aofText = resp.AppendCommandStrings(aofText, argv...)
	}
	mkdir := func() string {
		d := t.TempDir()
		ad := filepath.Join(d, "appendonlydir")
		if err := os.Mkdir(ad, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.1.incr.aof"), aofText, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ad, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	scenario := func(c *rconn) []string {
		return []string{c.do("LRANGE", "list", "0", "-1"), c.do("TTL", "list"), c.do("EXISTS", "l2")}
	}
	r := testutil.StartRedis(t, testutil.RedisOptions{Dir: mkdir(), WaitLoaded: true, Args: []string{"--appendonly", "yes"}})
	rc := r.Dial(t)
	t.Cleanup(func() { rc.Close() })
	redis := scenario(&rconn{t: t, c: rc, br: bufio.NewReader(rc)})
	l := startLive(t, "--dir", mkdir(), "--appendonly", "yes")
	vigil := scenario(l.dial(t))
	sameAsRedis(t, "a past PEXPIREAT in the AOF", redis, vigil, []string{`["foo", "bar"]`, "(integer) -1", "(integer) 0"})
}
