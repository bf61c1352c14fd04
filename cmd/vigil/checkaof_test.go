package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

func writeAOFDir(t *testing.T) (dir string, incr []byte) {
	dir = t.TempDir()
	base := resp.AppendCommandStrings(nil, "SELECT", "0")
	base = resp.AppendCommandStrings(base, "SET", "a", "1")
	incr = resp.AppendCommandStrings(nil, "SELECT", "0")
	incr = resp.AppendCommandStrings(incr, "MULTI")
	incr = resp.AppendCommandStrings(incr, "SET", "b", "2")
	incr = resp.AppendCommandStrings(incr, "EXEC")
	os.WriteFile(filepath.Join(dir, "appendonly.aof.1.base.aof"), base, 0o644)
	os.WriteFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"), incr, 0o644)
	os.WriteFile(filepath.Join(dir, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
	return dir, incr
}

func TestCheckAOF(t *testing.T) {
	dir, incr := writeAOFDir(t)
	man := filepath.Join(dir, "appendonly.aof.manifest")
	var out, errOut bytes.Buffer
	if code := run([]string{"vigil", "check-aof", man}, &out, &errOut); code != 0 {
		t.Fatalf("valid dir: code %d\n%s%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "All AOF files and manifest are valid") {
		t.Fatal(out.String())
	}
	// Cut inside the transaction: invalid; --fix truncates to before MULTI.
	incrPath := filepath.Join(dir, "appendonly.aof.1.incr.aof")
	os.WriteFile(incrPath, incr[:len(incr)-5], 0o644)
	out.Reset()
	if code := run([]string{"vigil", "check-aof", man}, &out, &errOut); code == 0 || !strings.Contains(out.String(), "--fix") {
		t.Fatalf("truncated: code %d\n%s", code, out.String())
	}
	out.Reset()
	if code := run([]string{"vigil", "check-aof", "--fix", man}, &out, &errOut); code != 0 {
		t.Fatalf("--fix: code %d\n%s", code, out.String())
	}
	fixed, _ := os.ReadFile(incrPath)
	if want := resp.AppendCommandStrings(nil, "SELECT", "0"); !bytes.Equal(fixed, want) {
		t.Fatalf("fixed to %q, want %q", fixed, want)
	}
	// redis-check-aof agrees the fixed directory is valid.
	if _, err := exec.LookPath("redis-check-aof"); err == nil {
		b, err := exec.Command("redis-check-aof", man).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-check-aof: %v\n%s", err, b)
		}
	}
	// A broken manifest is refused with Redis's message.
	os.WriteFile(man, []byte("file x seq 1 type z\n"), 0o644)
	out.Reset()
	if code := run([]string{"vigil", "check-aof", man}, &out, &errOut); code == 0 || !strings.Contains(out.String(), "Unknown AOF file type") {
		t.Fatalf("bad manifest: code %d\n%s", code, out.String())
	}
}

// TestCheckAOFTruncateToTimestamp is aof.tcl's "Truncate AOF to specific
// timestamp": an incremental file with "#TS:" annotations is cut at the
// first annotation later than the timestamp, again and again, until
// nothing would be left before it (refused, "aborting"). Each step's file
// and exit status are compared with Debian's redis-check-aof on a copy.
func TestCheckAOFTruncateToTimestamp(t *testing.T) {
	incr := []byte("#TS:1628217470\r\n")
	incr = resp.AppendCommandStrings(incr, "SET", "foo1", "bar1")
	incr = append(incr, "#TS:1628217471\r\n"...)
	incr = resp.AppendCommandStrings(incr, "SET", "foo2", "bar2")
	incr = append(incr, "#TS:1628217472\r\n#TS:1628217473\r\n"...)
	incr = resp.AppendCommandStrings(incr, "SET", "foo3", "bar3")
	incr = append(incr, "#TS:1628217474\r\n"...)
	mkdir := func() string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "appendonly.aof.1.base.aof"), resp.AppendCommandStrings(nil, "SELECT", "0"), 0o644)
		os.WriteFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"), incr, 0o644)
		os.WriteFile(filepath.Join(dir, "appendonly.aof.manifest"), []byte("file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
		return dir
	}
	ours := mkdir()
	_, haveRedis := exec.LookPath("redis-check-aof")
	theirs := mkdir()
	for _, step := range []struct {
		ts       string
		ok       bool
		out, end string // a line of the report; what the file ends with
	}{
		{"1628217473", true, "Successfully truncated AOF appendonly.aof.1.incr.aof to timestamp 1628217473", "bar3\r\n"},
		{"1628217471", true, "Successfully truncated AOF appendonly.aof.1.incr.aof to timestamp 1628217471", "bar2\r\n"},
		{"1628217470", true, "Successfully truncated AOF appendonly.aof.1.incr.aof to timestamp 1628217470", "bar1\r\n"},
		{"1628217469", false, "/appendonly.aof.1.incr.aof has nothing before timestamp 1628217469, aborting...", "bar1\r\n"},
	} {
		var out, errOut bytes.Buffer
		code := run([]string{"vigil", "check-aof", "--truncate-to-timestamp", step.ts, filepath.Join(ours, "appendonly.aof.manifest")}, &out, &errOut)
		if (code == 0) != step.ok || !strings.Contains(out.String(), step.out) {
			t.Fatalf("--truncate-to-timestamp %s: exit %d, want ok=%v and %q:\n%s%s", step.ts, code, step.ok, step.out, out.String(), errOut.String())
		}
		got, _ := os.ReadFile(filepath.Join(ours, "appendonly.aof.1.incr.aof"))
		if !bytes.HasSuffix(got, []byte(step.end)) {
			t.Fatalf("after %s the file is %q", step.ts, got)
		}
		if haveRedis == nil {
			b, err := exec.Command("redis-check-aof", "--truncate-to-timestamp", step.ts, filepath.Join(theirs, "appendonly.aof.manifest")).CombinedOutput()
			if (err == nil) != step.ok || !strings.Contains(string(b), step.out) {
				t.Fatalf("redis-check-aof --truncate-to-timestamp %s: %v, want ok=%v and %q:\n%s", step.ts, err, step.ok, step.out, b)
			}
			want, _ := os.ReadFile(filepath.Join(theirs, "appendonly.aof.1.incr.aof"))
			if !bytes.Equal(got, want) {
				t.Fatalf("after %s: ours %q, redis-check-aof's %q", step.ts, got, want)
			}
		}
	}
}

// TestCheckAOFTruncateToTimestampNotLast is aof.tcl's "Test
// redis-check-aof only truncates the last file for Multi Part AOF in
// truncate-to-timestamp mode": an annotation past the timestamp in an
// earlier file is refused, nothing is truncated, as redis-check-aof does.
func TestCheckAOFTruncateToTimestampNotLast(t *testing.T) {
	dir := t.TempDir()
	first := resp.AppendCommandStrings(nil, "SET", "foo1", "bar1")
	first = append(first, "#TS:1628217474\r\n"...)
	first = resp.AppendCommandStrings(first, "SET", "foo2", "bar2")
	second := resp.AppendCommandStrings(nil, "SET", "foo3", "bar3")
	os.WriteFile(filepath.Join(dir, "appendonly.aof.1.incr.aof"), first, 0o644)
	os.WriteFile(filepath.Join(dir, "appendonly.aof.2.incr.aof"), second, 0o644)
	man := filepath.Join(dir, "appendonly.aof.manifest")
	os.WriteFile(man, []byte("file appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n"), 0o644)
	want := "because it is not the last file"
	var out, errOut bytes.Buffer
	if code := run([]string{"vigil", "check-aof", "--truncate-to-timestamp", "1628217473", man}, &out, &errOut); code == 0 || !strings.Contains(out.String(), want) {
		t.Fatalf("exit %d, want a refusal with %q:\n%s", code, want, out.String())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "appendonly.aof.1.incr.aof")); !bytes.Equal(got, first) {
		t.Fatalf("the first file changed: %q", got)
	}
	if _, err := exec.LookPath("redis-check-aof"); err == nil {
		b, err := exec.Command("redis-check-aof", "--truncate-to-timestamp", "1628217473", man).CombinedOutput()
		if err == nil || !strings.Contains(string(b), want) {
			t.Fatalf("redis-check-aof: %v\n%s", err, b)
		}
	}
}
