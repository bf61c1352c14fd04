package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigShorthandIPv4: sentinel.conf takes the numeric forms
// redis-sentinel 7.0.15 takes (getaddrinfo AI_NUMERICHOST) and the
// rewrite writes them as it does (checked with redis-sentinel: same lines).
func TestConfigShorthandIPv4(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sentinel.conf")
	conf := "port 0\nsentinel monitor m1 127.1 7000 1\nsentinel known-replica m1 0x7f.0.0.2 7001\nsentinel monitor m2 ::0:1 7002 1\n"
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := LoadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(Options{Settings: st})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sentinel monitor m1 127.0.0.1 7000 1", "sentinel known-replica m1 127.0.0.2 7001",
		"sentinel monitor m2 ::1 7002 1"} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("rewritten config lacks %q:\n%s", want, b)
		}
	}
	for _, bad := range []string{"127.0.0.1.", "1.2.3.256", "localhost"} {
		if err := os.WriteFile(path, []byte("port 0\nsentinel monitor m "+bad+" 7000 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadConfig(path, nil); err == nil || !strings.Contains(err.Error(), "Can't resolve instance hostname.") {
			t.Errorf("sentinel monitor m %s: %v, want Can't resolve instance hostname.", bad, err)
		}
	}
}
