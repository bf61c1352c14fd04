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
