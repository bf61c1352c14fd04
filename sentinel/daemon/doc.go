// Package daemon is the shell around the sentinel core: timers, links to
// instances, hello pub/sub, execution of Actions, the SENTINEL command set and
// the config file. It may import sentinel, internal/resp, internal/clock,
// configs and the chosen libraries.
package daemon
