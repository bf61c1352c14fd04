package server

// CommandLatency is one command's latency histogram as LATENCY HISTOGRAM
// keeps it: Buckets[k] counts the calls that took at most 1024<<k ns (and
// more than the bucket before).
type CommandLatency struct {
	Cmd     string // commandstats' name: "get", "config|get"
	Buckets []uint64
}

// MetricsSnapshot is what the Prometheus endpoint (internal/metrics)
// reads at scrape time: the text of INFO everything and the per-command
// latency histograms, taken at one moment under the execution lock, so the
// series agree with INFO and the command path pays nothing for them.
func (s *Server) MetricsSnapshot() (info string, latency []CommandLatency) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setNow() // as a command would see it (INFO's uptime, lags)
	info = s.genInfo([]string{"everything"})
	for _, cmd := range allCommands {
		h := s.histogramOf(cmd)
		if h == nil {
			continue
		}
		b := make([]uint64, len(h.counts))
		for k, n := range h.counts {
			b[k] = uint64(n)
		}
		latency = append(latency, CommandLatency{Cmd: cmd.FullName(), Buckets: b})
	}
	return info, latency
}
