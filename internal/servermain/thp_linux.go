//go:build linux

package servermain

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// thpWarning is syscheck.c's checkTHPEnabled message (Redis 7.0.15), logged
// after "WARNING " when transparent huge pages are always on and the
// process could not turn them off for itself.
const thpWarning = "You have Transparent Huge Pages (THP) support enabled in your kernel. " +
	"This will create latency and memory usage issues with Redis. " +
	"To fix this issue run the command 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled' as root, " +
	"and add it to your /etc/rc.local in order to retain the setting after a reboot. " +
	"Redis must be restarted after THP is disabled (set to 'madvise' or 'never')."

// thpPath is the kernel's THP mode (a variable for the tests).
var thpPath = "/sys/kernel/mm/transparent_hugepage/enabled"

// thpAlways reports whether the kernel's THP mode is "always"
// (checkTHPEnabled: "[always]" in the file; unreadable: no).
func thpAlways() bool {
	b, err := os.ReadFile(thpPath)
	return err == nil && strings.Contains(string(b), "[always]")
}

// disableTHP is linuxMemoryWarnings' THP part: with THP always on, the
// process turns it off for itself (prctl PR_SET_THP_DISABLE, THPDisable)
// when disable-thp is yes (the default), else the warning is logged. A Go
// heap under THP "always" is backed by 2 MB pages as soon as a region is
// touched, and khugepaged collapses partly used ones: RSS grows with
// memory the server does not use. It reports the warning to log, "" for
// none.
func disableTHP(disable bool, prctl func() error) string {
	if !thpAlways() {
		return ""
	}
	if disable && prctl() == nil {
		return ""
	}
	return "WARNING " + thpWarning
}

func prctlTHPDisable() error { return unix.Prctl(unix.PR_SET_THP_DISABLE, 1, 0, 0, 0) }
