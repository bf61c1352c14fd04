// Package servermain is the vigil-server program: argument splitting as
// redis-server does it, configuration loading and its fatal error block,
// logging setup, the logo, the pid file and signals, around server.Run.
//
// It lives outside cmd so that both cmd/vigil-server and the hidden
// `vigil server` subcommand of cmd/vigil (which `vigil up` spawns, so a machine
// with nothing but Go can run a deployment) run exactly the same program.
// It is part of the command layer: it may import server, configs,
// internal/logging, internal/metrics (the /metrics endpoint) and the
// chosen libraries (urfave/cli, zerolog); only cmd imports it.
package servermain
