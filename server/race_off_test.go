//go:build !race

package server

// raceEnabled: built with -race (see race_on_test.go).
const raceEnabled = false
