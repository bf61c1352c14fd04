//go:build !linux

package servermain

// dropStartupPages is a no-op where /proc/self/smaps does not exist.
func dropStartupPages() int64 { return 0 }
