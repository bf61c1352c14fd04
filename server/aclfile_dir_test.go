package server

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestRelativeACLFileInDir is acl.tcl's servers started with "aclfile
// user.acl" and their dir (external:skip): Redis chdirs to dir, so a
// relative aclfile is read (at startup and by ACL LOAD) and written (ACL
// SAVE) there. Vigil opened it relative to its own working directory, and
// failed to start ("opening file 'user.acl': No such file or directory").
func TestRelativeACLFileInDir(t *testing.T) {
	testutil.NeedRedis(t)
	const users = "user alice on allcommands allkeys &* >alice\nuser default on nopass ~* &* +@all\n"
	mkdir := func() string {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "user.acl"), []byte(users), 0o644); err != nil {
			t.Fatal(err)
		}
		return d
	}
	scenario := func(c *rconn, dir string) []string {
		out := []string{c.do("ACL", "USERS"), c.do("ACL", "SETUSER", "carol", "on"), c.do("ACL", "SAVE")}
		b, _ := os.ReadFile(filepath.Join(dir, "user.acl"))
		out = append(out, strconv.Itoa(strings.Count(string(b), "user carol")))
		out = append(out, c.do("ACL", "LOAD"), c.do("ACL", "USERS"))
		return out
	}
	rdir := mkdir()
	r := testutil.StartRedis(t, testutil.RedisOptions{Dir: rdir, Args: []string{"--aclfile", "user.acl"}})
	rc := r.Dial(t)
	t.Cleanup(func() { rc.Close() })
	redis := scenario(&rconn{t: t, c: rc, br: bufio.NewReader(rc)}, rdir)
	vdir := mkdir()
	l := startLive(t, "--dir", vdir, "--aclfile", "user.acl")
	vigil := scenario(l.dial(t), vdir)
	want := []string{`["alice", "default"]`, "+OK", "+OK", "1", "+OK", `["alice", "carol", "default"]`}
	sameAsRedis(t, "a relative aclfile", redis, vigil, want)
}
