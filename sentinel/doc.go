// Package sentinel is the pure failover core of vigil-sentinel:
// Core.Step(now, Event) []Action. It implements SDOWN/ODOWN, epochs, leader
// votes, replica ranking and the failover state machine named after sentinel.c.
// It performs no I/O, reads no clock and takes randomness from a seeded source.
//
// It imports the standard library only.
package sentinel
