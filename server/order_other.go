//go:build !linux

package server

// Arrival order (order.go) needs FIONREAD on the socket: elsewhere no
// connection is waited for.

func sockInq(fd int) int64 { return 0 }

func ordFD(r *rawReader) int { return 0 }
