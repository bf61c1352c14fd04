// Package metrics is the Prometheus side both binaries share: the HTTP
// listener of /metrics (the metrics-port directive, on the bind addresses of
// the RESP port), the registry, and the mapping from what INFO and SENTINEL
// MASTERS report to series.
//
// Series that oliver006/redis_exporter also exports keep its names, label
// names and types (the redis_ prefix), so its dashboards and alerts work on
// Vigil scraped directly; each table below names the redis_exporter file it
// follows. Series of Vigil's own have the vigil_ prefix.
//
// The collectors read a snapshot at scrape time (the INFO text the INFO
// command would return, taken under the binary's own lock, plus a few
// structures of the same moment), so the values agree with INFO and the
// command path pays nothing for metrics.
//
// It may import internal/netshell (for the bind address rules), the
// standard library and github.com/prometheus/client_golang; the binaries'
// packages (server, sentinel/daemon) do not import it: the command layer
// (internal/servermain, internal/sentinelmain) wires their snapshots in.
package metrics
