// Package metrics holds the Ginkgo suite of the Prometheus endpoint: it
// builds vigil-server and vigil-sentinel, starts a master, a replica and a
// sentinel with metrics-port set, scrapes /metrics of each, parses it with
// the Prometheus text parser (github.com/prometheus/common/expfmt), and
// checks that every series redis_exporter also exports is there with its
// type and labels, and that the values agree with INFO and SENTINEL
// MASTERS read around the scrape (a value that moved between the two reads
// is read again). A failover then checks the sentinel's failover series.
package metrics
