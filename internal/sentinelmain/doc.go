// Package sentinelmain is the vigil-sentinel program: argument handling as
// redis-sentinel does it, configuration loading, logging setup, the pid file
// and signals, around sentinel/daemon.
//
// It lives outside cmd so that both cmd/vigil-sentinel and the hidden
// `vigil sentinel` subcommand of cmd/vigil run exactly the same program.
// It is part of the command layer: it may import sentinel/daemon, configs,
// internal/logging, internal/metrics (the /metrics endpoint) and the
// chosen libraries (urfave/cli, zerolog); only cmd imports it.
package sentinelmain
