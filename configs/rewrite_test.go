package configs

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testdata is absolute: some tests change the working directory.
var testdata, _ = filepath.Abs("testdata")

// checkGolden compares got with testdata/<name>, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./configs -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./configs -run %s -update to accept):\n--- got\n%s\n--- want\n%s", name, t.Name(), got, want)
	}
}

// TestRewriteGolden replays, step by step, a session run against
// redis-server 7.0.15 (same file, same CONFIG SETs, same lines appended by
// hand); the golden files are Vigil's output, which matches Redis's except
// that the appended lines are in table order (Redis follows its hash table)
// and that Redis also writes its ACL users ("user default on nopass ~* &*
// +@all") where Vigil leaves user lines alone.
func TestRewriteGolden(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	input, err := os.ReadFile("testdata/rewrite/input.conf")
	if err != nil {
		t.Fatal(err)
	}
	conf := writeFile(t, dir, "redis.conf", string(input))
	writeFile(t, dir, "inc.conf", "hz 20\nmaxclients 100\n")
	t.Chdir(dir) // include inc.conf is relative to the working directory
	c, err := Load(LoadOptions{ConfigFile: conf, Args: []string{"--logfile", "/tmp/rt/a.log", "--unixsocket", "/tmp/rt/r.sock"}})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		before func(t *testing.T)
		reload bool
	}{
		// Nothing changed: comments and layout stay, values from the include
		// and the command line are appended after the signature.
		{"step1", nil, true},
		// Lines updated in place, the second save line and requirepass
		// removed, new directives appended after the earlier ones.
		{"step2", func(t *testing.T) {
			for _, pairs := range [][][2]string{
				{{"maxmemory", "0"}, {"loglevel", "notice"}, {"save", ""}, {"appendonly", "no"}, {"port", "16401"},
					{"maxclients", "10000"}, {"hz", "10"}, {"requirepass", ""}},
				{{"slave-priority", "50"}},
				{{"maxmemory-policy", "allkeys-lru"}},
			} {
				if err := c.Set(pairs...); err != nil {
					t.Fatal(err)
				}
			}
		}, true},
		// Lines added to the file by hand: unknown and unparsable ones are
		// commented out, duplicates removed, sentinel and loadmodule kept.
		{"step3", func(t *testing.T) {
			f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString("bogus-thing 1 2\nport \"unbalanced\nsentinel monitor x\nloadmodule /x.so\nSLAVE-PRIORITY 3\nslave-priority 4\nmaxmemory-policy allkeys-lru\n")
			f.Close()
		}, false},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before(t)
		}
		if err := c.Rewrite(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		got, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		checkGolden(t, "rewrite/"+st.name+".golden", bytes.ReplaceAll(got, []byte(dir), []byte("$DIR")))
		if !st.reload {
			continue
		}
		// The rewritten file gives back the same configuration.
		again, err := Load(LoadOptions{ConfigFile: conf})
		if err != nil {
			t.Fatalf("%s: reloading: %v", st.name, err)
		}
		if a, b := c.Get("*"), again.Get("*"); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: reloaded configuration differs", st.name)
			for i := 0; i < len(a) && i < len(b); i += 2 {
				if a[i+1] != b[i+1] {
					t.Errorf("  %s: %q, reloaded %q", a[i], a[i+1], b[i+1])
				}
			}
		}
	}
}

// TestRewriteDebian rewrites Debian's stock redis.conf after a few CONFIG
// SETs: the 2000 lines of comments stay, the changed lines are updated in
// place.
func TestRewriteDebian(t *testing.T) {
	path, dir := debianConf(t)
	c, err := Load(LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set([2]string{"maxmemory", "100mb"}, [2]string{"maxmemory-policy", "allkeys-lru"},
		[2]string{"client-output-buffer-limit", "replica 512mb 128mb 120"}, [2]string{"appendonly", "yes"},
		[2]string{"save", "900 1 300 10"}, [2]string{"requirepass", "foobared"}, [2]string{"notify-keyspace-events", "Ex"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "rewrite/debian.golden", bytes.ReplaceAll(got, []byte(dir), []byte("$DIR")))
	again, err := Load(LoadOptions{ConfigFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := c.Get("*"), again.Get("*"); !reflect.DeepEqual(a, b) {
		t.Error("reloaded configuration differs")
	}
}

func TestRewriteMissingFile(t *testing.T) {
	// A file that disappeared is written from scratch, as Redis does.
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	c := Default()
	c.File = filepath.Join(dir, "new.conf")
	c.Dir = dir
	c.Port = 7000
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(c.File)
	want := "# Generated by CONFIG REWRITE\nport 7000\ndir \"" + dir + "\"\nsave 3600 1\nsave 300 100\nsave 60 10000\nlatency-tracking-info-percentiles 50 99 99.9\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if fi, err := os.Stat(c.File); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
}

// TestRewriteAtomic checks that the new content is complete in a temporary
// file of the same directory before it is renamed over the old file, and
// that a failed rename leaves the old file and no temporary file.
func TestRewriteAtomic(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "redis.conf", "# mine\nport 7000\n")
	if err := os.Chmod(conf, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(LoadOptions{ConfigFile: conf})
	if err != nil {
		t.Fatal(err)
	}
	c.Port = 7001
	defer func() { renameFile = os.Rename }()
	var tmp string
	renameFile = func(from, to string) error {
		tmp = from
		if filepath.Dir(from) != filepath.Dir(to) || to != conf {
			t.Errorf("rename %s -> %s: not in the same directory", from, to)
		}
		data, err := os.ReadFile(from)
		if err != nil || !strings.Contains(string(data), "port 7001") {
			t.Errorf("temporary file not complete before the rename: %q %v", data, err)
		}
		if old, _ := os.ReadFile(to); !strings.Contains(string(old), "port 7000") {
			t.Error("old file changed before the rename")
		}
		return os.Rename(from, to)
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	if tmp == "" || !strings.HasPrefix(filepath.Base(tmp), "redis.conf.") {
		t.Errorf("temporary file %q", tmp)
	}
	if fi, _ := os.Stat(conf); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the old file's 0600", fi.Mode().Perm())
	}

	renameFile = func(from, to string) error {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EXDEV}
	}
	c.Port = 7002
	err = c.Rewrite()
	if err == nil || err.Error() != "ERR Rewriting config file: Invalid cross-device link" {
		t.Errorf("Rewrite = %v", err)
	}
	data, _ := os.ReadFile(conf)
	if !strings.Contains(string(data), "port 7001") {
		t.Errorf("failed rewrite changed the file: %q", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary file left behind: %v", entries)
	}
}

func TestRewriteState(t *testing.T) {
	old := "# c\nsentinel monitor m 1.2.3.4 6379 2\nsentinel down-after-milliseconds m 100\nsentinel known-replica m 1.2.3.5 6379\nsentinel known-replica m 1.2.3.6 6379\nport 26379\nbogus\n"
	key := func(args []string) (string, bool) {
		if args[0] == "sentinel" && len(args) > 1 {
			return "sentinel " + strings.ToLower(args[1]), true
		}
		return args[0], args[0] == "port"
	}
	s := NewRewriteState([]byte(old), key)
	s.RewriteLine("sentinel monitor", "sentinel monitor m 1.2.3.9 6379 2", true)
	s.RewriteLine("sentinel known-replica", "sentinel known-replica m 1.2.3.4 6379", true)
	s.MarkProcessed("sentinel known-replica")
	s.RewriteLine("sentinel current-epoch", "sentinel current-epoch 1", true)
	s.RewriteLine("port", "port 26379", false)
	want := "# c\nsentinel monitor m 1.2.3.9 6379 2\nsentinel down-after-milliseconds m 100\nsentinel known-replica m 1.2.3.4 6379\n\nport 26379\n# ??? bogus\n\n" +
		RewriteSignature + "\nsentinel current-epoch 1\n"
	if got := string(s.Content()); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if !errors.Is(Default().Rewrite(), ErrNoConfigFile) {
		t.Error("Rewrite without a file")
	}
}
