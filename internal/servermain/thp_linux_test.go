//go:build linux

package servermain

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/configs"
)

// TestDisableTHP: with THP "always", the process turns it off for itself
// when disable-thp is yes and logs Redis's warning when it is no or the
// prctl fails; with "madvise", "never" or no file it does nothing
// (linuxMemoryWarnings, checkTHPEnabled, THPDisable).
func TestDisableTHP(t *testing.T) {
	dir := t.TempDir()
	old := thpPath
	t.Cleanup(func() { thpPath = old })
	for _, tc := range []struct {
		mode      string // "" : no file
		disable   bool
		prctlErr  error
		wantCall  bool
		wantWarns bool
	}{
		{"[always] madvise never\n", true, nil, true, false},
		{"[always] madvise never\n", true, errors.New("EINVAL"), true, true},
		{"[always] madvise never\n", false, nil, false, true},
		{"always [madvise] never\n", true, nil, false, false},
		{"always madvise [never]\n", false, nil, false, false},
		{"", true, nil, false, false},
	} {
		thpPath = filepath.Join(dir, "missing")
		if tc.mode != "" {
			thpPath = filepath.Join(dir, "enabled")
			if err := os.WriteFile(thpPath, []byte(tc.mode), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		called := false
		w := disableTHP(tc.disable, func() error { called = true; return tc.prctlErr })
		if called != tc.wantCall || (w != "") != tc.wantWarns {
			t.Errorf("mode %q disable %v prctl err %v: called %v, warning %q", tc.mode, tc.disable, tc.prctlErr, called, w)
		}
		if w != "" && !strings.HasPrefix(w, "WARNING You have Transparent Huge Pages (THP) support enabled") {
			t.Errorf("warning %q", w)
		}
	}
	// The real prctl takes effect on this process.
	if err := prctlTHPDisable(); err != nil {
		t.Skipf("PR_SET_THP_DISABLE: %v", err)
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "THP_enabled:") && !strings.Contains(s, "THP_enabled:\t0") {
		t.Errorf("THP still enabled after the prctl:\n%s", s[strings.Index(s, "THP_enabled:"):][:20])
	}
	// disable-thp's default is yes, as Redis's.
	cfg := configs.Default()
	if v, ok := cfg.Value("disable-thp"); !ok || v != "yes" {
		t.Errorf("disable-thp default %q %v", v, ok)
	}
}
