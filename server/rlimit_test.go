//go:build unix

package server

import (
	"regexp"
	"strconv"
	"syscall"
	"testing"
)

// TestMaxclientsOpenFilesLimit (interop): CONFIG SET maxclients beyond what
// the open files limit can be raised to fails as on redis-server 7.0.15
// (updateMaxclients: "try with" the maxclients the limit it got allows, the
// same number on both, which run under the same limits), leaving
// maxclients as it was; one within the limit is taken; and a server
// started with too many clients for the limit runs with maxclients reduced
// to the limit's (adjustOpenFilesLimit at startup).
func TestMaxclientsOpenFilesLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	d := newListDiff(t) // list_diff_helper_test.go: Vigil's test server beside redis-server
	same := d.same
	// 4M: beyond fs.nr_open's default (1M), the most a hard limit can be
	// raised to (Redis tries every 16th value down to the limit: a far
	// larger number takes it seconds).
	got := same("CONFIG", "SET", "maxclients", "4194304")
	m := regexp.MustCompile(`^-ERR CONFIG SET failed \(possibly related to argument 'maxclients'\) - The operating system is not able to handle the specified number of clients, try with (\d+)\r\n$`).FindStringSubmatch(got)
	if m == nil {
		t.Skipf("CONFIG SET maxclients 4194304: %q (a system that allows that many files)", got)
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if n, _ := strconv.ParseUint(m[1], 10, 64); n != lim.Cur-minReservedFDs {
		t.Errorf("try with %d, the limit is now %d", n, lim.Cur)
	}
	same("CONFIG", "GET", "maxclients")
	same("CONFIG", "SET", "maxclients", "1000")
	same("CONFIG", "GET", "maxclients")
	same("CONFIG", "SET", "maxclients", "10000")

	l := startLive(t, "--maxclients", "4194304")
	if got := l.dial(t).do("CONFIG", "GET", "maxclients"); got != `["maxclients", "`+m[1]+`"]` {
		t.Errorf("started with maxclients 4194304: %q, want %s", got, m[1])
	}
}
