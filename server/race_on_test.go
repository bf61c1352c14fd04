//go:build race

package server

// raceEnabled: built with -race, where Go's scheduler randomises the order
// it runs ready goroutines in (runtime.randomizeScheduler), so tests of the
// wake-up order cannot hold.
const raceEnabled = true
