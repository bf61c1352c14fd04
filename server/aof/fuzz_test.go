package aof

import (
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
