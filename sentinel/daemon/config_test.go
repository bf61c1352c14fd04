package daemon

import (
	"errors"
	"flag"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/sentinel"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func writeConf(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sentinel.conf")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The texts and line numbers are redis-sentinel 7.0.15's.
func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		body   string
		line   int
		reason string
	}{
		{"port 26998\n# c\nsentinel foo bar\n", 3, "Unrecognized sentinel configuration statement."},
		{"port 26998\n# c\nsentinel down-after-milliseconds nosuch 100\n", 3, "No such master with specified name."},
		{"port 26998\n# c\nsentinel monitor m 127.0.0.1 1 0\n", 3, "Quorum must be 1 or greater."},
		{"port 26998\n# c\nsentinel myid abc\n", 3, "Malformed Sentinel id in myid option."},
		{"port 26998\n# c\nsentinel monitor m 127.0.0.1 1\n", 3, "Unrecognized sentinel configuration statement."},
		{"sentinel monitor m 127.0.0.1 1 1\nsentinel monitor m 127.0.0.1 2 1\n", 2, "Duplicate master name."},
		{"sentinel monitor m 127.0.0.1 1 1\nsentinel down-after-milliseconds m 0\n", 2, "negative or zero time parameter."},
		{"sentinel deny-scripts-reconfig maybe\n", 1, "Please specify yes or no for the deny-scripts-reconfig options."},
		{"sentinel monitor m 127.0.0.1 1 1\nsentinel notification-script m /nonexistent/script\n", 2,
			"Notification script seems non existing or non executable."},
		{"sentinel monitor m 127.0.0.1 1 1\nsentinel rename-command m a b\nsentinel rename-command m A c\n", 3,
			"Same command renamed multiple times with rename-command."},
		{"port 1\nunknown-thing yes\n", 2, "Bad directive or wrong number of arguments"},
		{"port 1\nrename-command nosuch foo\n", 2, "No such command in rename-command"},
		{"port 1\nsentinel monitor m foo.invalid 1 2\n", 2, "Can't resolve instance hostname."},
		{"port 1\nsentinel monitor m 127.0.0.1 70000 2\n", 2, "Invalid port number."},
		{"sentinel monitor m 127.0.0.1 1 2\nsentinel known-replica m bad 1\n", 2, "Can't resolve instance hostname."},
		{"sentinel monitor m 127.0.0.1 1 2\nsentinel known-sync-ack m -1\n", 2, "min-replicas-ack must be 0 or greater."},
		{"sentinel known-sync-ack m 1\n", 1, "No such master with specified name."},
		{"sentinel monitor m 127.0.0.1 1 2\nsentinel forget-after-milliseconds m -5\n", 2, "negative time parameter."},
		{"sentinel forget-after-milliseconds m 1000\n", 1, "No such master with specified name."},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.reason, " ", "_"), func(t *testing.T) {
			_, err := LoadConfig(writeConf(t, tt.body), nil)
			var ce *configs.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a ConfigError", err)
			}
			if ce.Line != tt.line || ce.Reason != tt.reason {
				t.Fatalf("line %d %q, want line %d %q", ce.Line, ce.Reason, tt.line, tt.reason)
			}
			if strings.Contains(err.Error(), "at line "+strconv.Itoa(tt.line)+" (") {
				t.Fatalf("the message names a file, redis-sentinel does not: %q", err.Error())
			}
		})
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	st, err := LoadConfig(writeConf(t, "sentinel monitor mym 127.0.0.1 6379 2\n"), []string{"--loglevel", "warning"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Server.Port != DefaultPort || st.Server.ProtectedMode || st.Server.LogLevel != "warning" {
		t.Fatalf("port %d protected-mode %v loglevel %q", st.Server.Port, st.Server.ProtectedMode, st.Server.LogLevel)
	}
	if len(st.Sentinel.Masters) != 1 || st.Sentinel.Masters[0].Quorum != 2 || !st.Sentinel.DenyScriptsReconfig {
		t.Fatalf("sentinel config %+v", st.Sentinel)
	}
	if _, err := LoadConfig("", nil); !errors.Is(err, ErrNoConfigFile) {
		t.Fatalf("no file: %v", err)
	}
	_, err = LoadConfig("/nonexistent/sentinel.conf", nil)
	if err == nil || err.Error() != "Fatal error, can't open config file '/nonexistent/sentinel.conf': No such file or directory" {
		t.Fatalf("missing file: %v", err)
	}
}

// TestRewriteGolden loads each testdata/rewrite/*.conf, applies it to a
// core (plus the runtime change its name asks for) and compares the
// rewritten file with the .golden next to it. Run with -update to record.
func TestRewriteGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/rewrite/*.conf")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".conf")
		t.Run(name, func(t *testing.T) {
			old, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			st, err := LoadConfig(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			st.Server.Dir = tmp
			core := sentinel.New(sentinel.Options{Port: st.Server.Port}, rand.New(rand.NewSource(1)))
			for _, a := range core.Step(1000, sentinel.ConfigLoaded{Config: st.Sentinel}) {
				if r, ok := a.(sentinel.Reply); ok && r.Kind == sentinel.ReplyError {
					t.Fatal(r.Text)
				}
			}
			if name == "removed" {
				core.Step(1001, sentinel.RemoveRequested{Name: "gone"})
			}
			real := RewriteContent(old, st.Server, core.Config(), core.Tunables())
			// The golden files show dir as /var/lib/vigil, whatever the machine.
			got := []byte(strings.ReplaceAll(string(real), tmp, "/var/lib/vigil"))
			golden := strings.TrimSuffix(f, ".conf") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to record)", err)
			}
			if string(got) != string(want) {
				t.Fatalf("rewrite of %s:\n%s\nwant:\n%s", f, got, want)
			}
			// The result loads back to the same state.
			st2, err := LoadConfig(writeConf(t, string(real)), nil)
			if err != nil {
				t.Fatalf("rewritten file does not load: %v", err)
			}
			core2 := sentinel.New(sentinel.Options{Port: st2.Server.Port}, rand.New(rand.NewSource(1)))
			core2.Step(1000, sentinel.ConfigLoaded{Config: st2.Sentinel})
			st2.Server.Dir = st.Server.Dir
			// As with Redis, the file's trailing newline becomes a blank line
			// on the next rewrite; from then on a rewrite changes nothing.
			again := RewriteContent(real, st2.Server, core2.Config(), core2.Tunables())
			third := RewriteContent(again, st2.Server, core2.Config(), core2.Tunables())
			if string(third) != string(again) || strings.TrimRight(string(again), "\n") != strings.TrimRight(string(real), "\n") {
				t.Fatalf("rewrite is not stable:\n%s\nthen:\n%s", real, again)
			}
		})
	}
}

func TestWriteAtomicKeepsMode(t *testing.T) {
	path := writeConf(t, "port 26999\nsentinel myid d5a972b813353f7f35707c5b2beb33f97aa10696\n")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Rewrite(st.Sentinel, sentinel.DefaultTunables()); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after rewrite: %v %v", fi.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "sentinel myid d5a972b813353f7f35707c5b2beb33f97aa10696\n") {
		t.Fatalf("rewritten:\n%s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

// TestLoadConfigInclude: sentinel lines in an included file are queued and
// applied like the main file's, and an error in one names its line in that
// file, as redis-sentinel 7.0.15 does.
func TestLoadConfigInclude(t *testing.T) {
	inc := writeConf(t, "sentinel monitor inc 127.0.0.1 7599 2\nsentinel down-after-milliseconds inc 1234\n")
	st, err := LoadConfig(writeConf(t, "port 26998\ninclude "+inc+"\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Sentinel.Masters) != 1 || st.Sentinel.Masters[0].Name != "inc" || st.Sentinel.Masters[0].DownAfter != 1234 {
		t.Fatalf("masters %+v, want inc with down-after 1234", st.Sentinel.Masters)
	}

	bad := writeConf(t, "\n\nsentinel bogus x\n")
	_, err = LoadConfig(writeConf(t, "port 26998\ninclude "+bad+"\n"), nil)
	var ce *configs.ConfigError
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Text != "sentinel bogus x" || ce.Reason != "Unrecognized sentinel configuration statement." {
		t.Fatalf("err = %v, want line 3 'sentinel bogus x' Unrecognized sentinel configuration statement.", err)
	}
}

// TestLoadConfigScriptsFromDir: the sentinel lines are handled after the
// whole file was read, so after every "dir" line chdir()ed (redis-sentinel
// 7.0.15 accepts a relative script found only under dir, even when the
// script line comes before the dir line); the checks do not depend on the
// process's working directory.
func TestLoadConfigScriptsFromDir(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "s0")
	if err := os.MkdirAll(filepath.Join(root, "helpers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nexit 0\n"
	for _, p := range []string{filepath.Join(sub, "n.sh"), filepath.Join(root, "helpers", "notify.sh")} {
		if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, body := range []string{
		"sentinel monitor m 127.0.0.1 1 1\nsentinel notification-script m ./n.sh\ndir " + sub + "\n",
		"dir " + sub + "\nsentinel monitor m 127.0.0.1 1 1\nsentinel notification-script m n.sh\n" +
			"sentinel client-reconfig-script m ../helpers/notify.sh\n",
		// a relative dir is relative to the file's directory only by
		// accident: here it is relative to the previous dir.
		"dir " + root + "\ndir s0\nsentinel monitor m 127.0.0.1 1 1\nsentinel notification-script m ../helpers/notify.sh\n",
	} {
		st, err := LoadConfig(writeConf(t, body), nil)
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if st.Server.Dir != sub {
			t.Errorf("%q: dir %q, want %q", body, st.Server.Dir, sub)
		}
	}
	// Not found from dir: Redis's error, at the script's line.
	_, err := LoadConfig(writeConf(t, "dir "+root+"\nsentinel monitor m 127.0.0.1 1 1\nsentinel notification-script m n.sh\n"), nil)
	var ce *configs.ConfigError
	if !errors.As(err, &ce) || ce.Line != 3 || ce.Reason != "Notification script seems non existing or non executable." {
		t.Fatalf("err = %v, want line 3 Notification script seems non existing or non executable.", err)
	}
}

// A command-line `sentinel monitor` for a master the file already monitors
// is left out: the file holds what the sentinel saved since (a container
// restarted with the command line it was created with).
func TestLoadConfigCommandLineMonitorSeed(t *testing.T) {
	args := []string{"--sentinel", "monitor", "m", "10.0.0.1", "6379", "2", "--sentinel", "down-after-milliseconds", "m", "2000"}

	// First start: an empty file, the command line monitors.
	st, err := LoadConfig(writeConf(t, ""), args)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Sentinel.Masters) != 1 || st.Sentinel.Masters[0].IP != "10.0.0.1" || len(st.Notes) != 0 {
		t.Fatalf("first start: %+v, notes %q", st.Sentinel.Masters, st.Notes)
	}

	// Restarted: the file (as rewritten after a failover) wins; the other
	// command-line lines still apply.
	saved := "port 26379\nsentinel monitor m 10.0.0.2 6379 2\nsentinel down-after-milliseconds m 5000\nsentinel known-replica m 10.0.0.1 6379\n"
	st, err = LoadConfig(writeConf(t, saved), args)
	if err != nil {
		t.Fatal(err)
	}
	m := st.Sentinel.Masters
	if len(m) != 1 || m[0].IP != "10.0.0.2" || m[0].DownAfter != 2000 || len(m[0].KnownReplicas) != 1 {
		t.Errorf("restart: %+v", m)
	}
	if len(st.Notes) != 1 || !strings.Contains(st.Notes[0], "'sentinel monitor m 10.0.0.1 6379 2' ignored") ||
		!strings.Contains(st.Notes[0], "(10.0.0.2 6379 2)") {
		t.Errorf("notes %q", st.Notes)
	}
	// Without a trailing newline in the file, the same.
	st, err = LoadConfig(writeConf(t, strings.TrimSuffix(saved, "\n")), args)
	if err != nil || st.Sentinel.Masters[0].IP != "10.0.0.2" {
		t.Errorf("no trailing newline: %v %+v", err, st)
	}

	// Another master on the command line is added; twice on the command
	// line, or twice in the file, is still Redis's error.
	st, err = LoadConfig(writeConf(t, saved), []string{"--sentinel", "monitor", "n", "10.0.0.3", "6379", "1"})
	if err != nil || len(st.Sentinel.Masters) != 2 {
		t.Errorf("another master: %v %+v", err, st)
	}
	for _, tc := range []struct {
		file string
		args []string
	}{
		{"", append(args[:6:6], args[:6]...)},
		{"sentinel monitor m 10.0.0.1 6379 2\nsentinel monitor m 10.0.0.2 6379 2\n", nil},
	} {
		var ce *configs.ConfigError
		if _, err := LoadConfig(writeConf(t, tc.file), tc.args); !errors.As(err, &ce) || ce.Reason != "Duplicate master name." {
			t.Errorf("file %q args %q: err %v, want Duplicate master name.", tc.file, tc.args, err)
		}
	}
}
