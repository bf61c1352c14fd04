package aof

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadAOF feeds truncated and bit-flipped command streams to the
// loader: it must return an error or load, never panic or allocate what
// a length field claims.
func FuzzLoadAOF(f *testing.F) {
	f.Add(cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"MULTI"}, []string{"RPUSH", "l", "x", "y"}, []string{"EXEC"}))
	f.Add([]byte("*1\r\n$4294967296\r\n"))
	f.Add([]byte("*99999999999\r\n$1\r\na\r\n"))
	f.Add([]byte("#annotation\r\n*1\r\n$4\r\nPING\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f.aof")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n := 0
		o := &Options{LoadTruncated: true, Apply: func(argv [][]byte) error { n++; return nil }}
		_, _, size, err := LoadFile(p, o, true)
		if err == nil && size > int64(len(data)) {
			t.Fatalf("size %d > %d", size, len(data))
		}
	})
}

// FuzzParseManifest: any bytes give a manifest or a ManifestError; a
// parsed manifest writes back to bytes that parse to the same files.
func FuzzParseManifest(f *testing.F) {
	f.Add([]byte("file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n"))
	f.Add([]byte("# c\nfile \"a\\x00b\" seq 3 type h\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(bytes.NewReader(data))
		if err != nil {
			return
		}
		if len(m.Files())+len(m.History) == 0 {
			return
		}
		m2, err := ParseManifest(bytes.NewReader(m.Bytes()))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", m.Bytes(), err)
		}
		if !bytes.Equal(m2.Bytes(), m.Bytes()) {
			t.Fatalf("round trip %q != %q", m2.Bytes(), m.Bytes())
		}
	})
}
