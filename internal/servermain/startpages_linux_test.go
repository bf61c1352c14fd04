package servermain

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mappingRSS is the Rss of the mapping starting at b's first byte, in
// bytes, from /proc/self/smaps.
func mappingRSS(t *testing.T, b []byte) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if strings.HasPrefix(f[0], start) {
			in = true
			continue
		}
		if in && f[0] == "Rss:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n << 10
		}
	}
	t.Fatalf("no mapping at %s", start)
	return 0
}

func mapFile(t *testing.T, content []byte, prot int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := unix.Mmap(int(f.Fd()), 0, len(content), prot, unix.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Munmap(b) })
	return b
}

// TestDropStartupPages: a read-only private file mapping loses its resident
// pages and still reads the file; a read-only mapping holding copied-on-write
// pages (written while writable) and a writable one keep theirs and their
// data.
func TestDropStartupPages(t *testing.T) {
	const size = 1 << 20
	content := bytes.Repeat([]byte("vigil-pages!"), size/12+1)[:size]
	ro := mapFile(t, content, unix.PROT_READ)
	cow := mapFile(t, content, unix.PROT_READ|unix.PROT_WRITE)
	rw := mapFile(t, content, unix.PROT_READ|unix.PROT_WRITE)
	sum, want := 0, 0
	for i := 0; i < size; i += 4096 {
		sum += int(ro[i])
		want += int(content[i])
		cow[i] = 'x'
		rw[i] = 'y'
	}
	if sum != want { // also keeps the reads
		t.Fatalf("read %d, want %d", sum, want)
	}
	if err := unix.Mprotect(cow, unix.PROT_READ); err != nil {
		t.Fatal(err)
	}
	if got := mappingRSS(t, ro); got < size/2 {
		t.Fatalf("read-only mapping: %d bytes resident after reading it, want most of %d", got, size)
	}
	if dropped := dropStartupPages(); dropped < size/2 {
		t.Errorf("dropStartupPages reported %d bytes, want at least the mapping's", dropped)
	}
	if got := mappingRSS(t, ro); got != 0 {
		t.Errorf("read-only mapping: %d bytes resident after the drop, want 0", got)
	}
	if !bytes.Equal(ro, content) {
		t.Error("read-only mapping no longer reads the file")
	}
	for i := 0; i < size; i += 4096 {
		if cow[i] != 'x' || rw[i] != 'y' {
			t.Fatalf("written page %d lost its data: %q %q", i/4096, cow[i], rw[i])
		}
	}
	if got := mappingRSS(t, cow); got < size/2 {
		t.Errorf("mapping with copied-on-write pages: %d bytes resident, want them kept", got)
	}
}
