package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mattn/go-isatty"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// sampleRDB is an RDB with aux fields, two databases, strings (one
// compressible), a TTL and a hash.
func sampleRDB(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := rdb.NewEncoder(&buf, rdb.EncodeOptions{Compress: true, Checksum: true,
		Aux: []rdb.AuxField{{Key: "redis-ver", Value: "7.0.15"}, {Key: "redis-bits", Value: "64"}}})
	if err != nil {
		t.Fatal(err)
	}
	h := keyspace.NewHash()
	for i := 0; i < 50; i++ {
		h.Set([]byte(fmt.Sprint("f", i)), fmt.Sprint("v", i), keyspace.DefaultEncodingConfig())
	}
	items := []keyspace.Item{
		{DB: 0, Key: "a", Value: keyspace.NewString([]byte("1"), keyspace.StringAuto)},
		{DB: 0, Key: "long", Value: keyspace.NewString(bytes.Repeat([]byte("abcdefgh"), 100), keyspace.StringAuto)},
		{DB: 0, Key: "ttl", Value: keyspace.NewString([]byte("x"), keyspace.StringAuto), ExpireAt: 1 << 42},
		{DB: 3, Key: "h", Value: h},
	}
	for _, it := range items {
		if err := e.WriteItem(it); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func runVigil(args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := run(append([]string{"vigil"}, args...), &out, &errOut)
	return code, out.String() + errOut.String()
}

func TestCheckRDB(t *testing.T) {
	dir := t.TempDir()
	data := sampleRDB(t)
	p := filepath.Join(dir, "dump.rdb")
	os.WriteFile(p, data, 0o644)
	code, out := runVigil("check-rdb", p)
	if code != 0 {
		t.Fatalf("valid file: code %d\n%s", code, out)
	}
	for _, want := range []string{
		"[offset 0] Checking RDB file " + p,
		"AUX FIELD redis-ver = '7.0.15'",
		"Selecting DB ID 3",
		fmt.Sprintf("[offset %d] Checksum OK", len(data)),
		fmt.Sprintf("[offset %d] \\o/ RDB looks OK! \\o/", len(data)),
		"[info] 4 keys read",
		"[info] 1 expires",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("missing %q in\n%s", want, out)
		}
	}
	// Every truncation is an error with Redis's EOF wording, never a panic.
	for n := 0; n < len(data); n++ {
		os.WriteFile(p, data[:n], 0o644)
		code, out := runVigil("check-rdb", p)
		if code == 0 || !strings.Contains(out, "--- RDB ERROR DETECTED ---") {
			t.Fatalf("cut at %d: code %d\n%s", n, code, out)
		}
		if n >= 9 && !strings.Contains(out, "Unexpected EOF reading RDB file") {
			t.Fatalf("cut at %d: no EOF reason\n%s", n, out)
		}
	}
	// A flipped byte in the payload is caught (by the checksum at least).
	bad := bytes.Clone(data)
	bad[len(bad)-20] ^= 0x40
	os.WriteFile(p, bad, 0o644)
	if code, out := runVigil("check-rdb", p); code == 0 || !strings.Contains(out, "--- RDB ERROR DETECTED ---") {
		t.Fatalf("bit flip: code %d\n%s", code, out)
	}
	// A missing file.
	if code, _ := runVigil("check-rdb", filepath.Join(dir, "nope.rdb")); code == 0 {
		t.Fatal("missing file accepted")
	}
}

// TestCheckRDBAgreesWithRedis: on the valid file, its truncations and
// bit flips, vigil check-rdb and redis-check-rdb give the same verdict.
func TestCheckRDBAgreesWithRedis(t *testing.T) {
	if _, err := exec.LookPath("redis-check-rdb"); err != nil {
		t.Skip("redis-check-rdb not installed: apt-get install -y redis-server redis-tools")
	}
	dir := t.TempDir()
	data := sampleRDB(t)
	p := filepath.Join(dir, "dump.rdb")
	files := [][]byte{data}
	for _, n := range []int{0, 5, 9, 20, len(data) / 2, len(data) - 9, len(data) - 1} {
		files = append(files, data[:n])
	}
	for _, i := range []int{3, 12, len(data) / 3, len(data) - 3} {
		b := bytes.Clone(data)
		b[i] ^= 0x04
		files = append(files, b)
	}
	for i, f := range files {
		os.WriteFile(p, f, 0o644)
		code, out := runVigil("check-rdb", p)
		theirs, err := exec.Command("redis-check-rdb", p).CombinedOutput()
		if (code == 0) != (err == nil) {
			t.Fatalf("file %d: vigil ok=%v, redis-check-rdb ok=%v\nvigil:\n%s\nredis:\n%s", i, code == 0, err == nil, out, theirs)
		}
	}
}

// TestCheckAOFPreamble: an RDB-preamble base is validated in full, then
// its AOF tail; redis-check-aof agrees.
func TestCheckAOFPreamble(t *testing.T) {
	dir := t.TempDir()
	data := sampleRDB(t)
	tail := resp.AppendCommandStrings(nil, "SET", "after", "1")
	base := filepath.Join(dir, "appendonly.aof.1.base.rdb")
	incr := filepath.Join(dir, "appendonly.aof.1.incr.aof")
	man := filepath.Join(dir, "appendonly.aof.manifest")
	os.WriteFile(incr, resp.AppendCommandStrings(nil, "SET", "b", "2"), 0o644)
	os.WriteFile(man, []byte("file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"), 0o644)
	_, haveRedis := exec.LookPath("redis-check-aof")
	cases := []struct {
		name  string
		base  []byte
		valid bool
	}{
		{"valid", append(bytes.Clone(data), tail...), true},
		{"bad checksum", func() []byte { b := bytes.Clone(data); b[len(b)-30] ^= 1; return b }(), false},
		{"cut rdb", data[:len(data)-12], false},
		{"bad tail", append(bytes.Clone(data), "*2\r\n$3\r\nGET\r\nxx"...), false},
	}
	for _, c := range cases {
		os.WriteFile(base, c.base, 0o644)
		code, out := runVigil("check-aof", man)
		if (code == 0) != c.valid {
			t.Fatalf("%s: code %d\n%s", c.name, code, out)
		}
		if !strings.Contains(out, "Checking the RDB preamble to start") {
			t.Fatalf("%s: preamble not checked\n%s", c.name, out)
		}
		if c.valid && !strings.Contains(out, "RDB preamble is OK, proceeding with AOF tail") {
			t.Fatalf("%s:\n%s", c.name, out)
		}
		if haveRedis == nil {
			theirs, err := exec.Command("redis-check-aof", man).CombinedOutput()
			if (err == nil) != c.valid {
				t.Fatalf("%s: redis-check-aof disagrees (ok=%v)\n%s\nvigil:\n%s", c.name, err == nil, theirs, out)
			}
		}
	}
}

// TestProgress: the bar is drawn only on a terminal for large files;
// when drawn it reaches 100%.
func TestProgress(t *testing.T) {
	p := newProgress(bytes.NewReader(make([]byte, 100)), progressMin+1, "x")
	if p.bar != nil && !isatty.IsTerminal(os.Stderr.Fd()) {
		t.Fatal("bar drawn while stderr is not a terminal")
	}
	var bar bytes.Buffer
	p = &progressReader{r: bytes.NewReader(make([]byte, 1000)), size: 1000, bar: &bar, shown: -1}
	buf := make([]byte, 7)
	for {
		if _, err := p.Read(buf); err != nil {
			break
		}
	}
	p.done()
	if !strings.Contains(bar.String(), "] 100%") || !strings.Contains(bar.String(), "]   0%") {
		t.Fatalf("bar: %q", bar.String())
	}
}
