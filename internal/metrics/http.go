package metrics

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vigil-kv/vigil/internal/netshell"
)

// Path is where the series are served.
const Path = "/metrics"

// Endpoint is the HTTP listener of /metrics: one listener per bind address,
// kept apart from the RESP port.
type Endpoint struct {
	srv *http.Server
	ls  []net.Listener
}

// NewRegistry is a registry holding c and the Go runtime and process
// collectors (go_*, process_*).
func NewRegistry(c prometheus.Collector) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// Listen opens port on each of the bind addresses, with the rules of the
// RESP port (netshell.Listen, Redis's listenToPort): no bind means "*" and
// "-::*", a leading "-" makes an address optional. Port 0 is an error: the
// caller does not call Listen when metrics-port is 0 (off).
func Listen(binds []string, port int) (*Endpoint, error) {
	if port <= 0 || port > 65535 {
		return nil, fmt.Errorf("metrics-port %d: out of range", port)
	}
	ls, err := netshell.ListenTCP(binds, port, "metrics")
	if err != nil {
		return nil, err
	}
	e := &Endpoint{ls: ls}
	if len(e.ls) == 0 {
		return nil, fmt.Errorf("Could not create metrics TCP listening socket on port %d: no bind address could be used", port)
	}
	return e, nil
}

// Serve serves reg's series on Path on every listener, in the background,
// until Close. Scrape errors are reported in the reply (ContinueOnError:
// the series that could be gathered are still served).
func (e *Endpoint) Serve(reg *prometheus.Registry) {
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<html><body><a href=%q>%s</a></body></html>\n", Path, Path)
	})
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	for _, l := range e.ls {
		go func(l net.Listener) { _ = e.srv.Serve(l) }(l) // ends with Close
	}
}

// Addrs are the addresses listened on.
func (e *Endpoint) Addrs() []net.Addr {
	out := make([]net.Addr, len(e.ls))
	for i, l := range e.ls {
		out[i] = l.Addr()
	}
	return out
}

// Close stops serving and closes the listeners.
func (e *Endpoint) Close() {
	if e == nil {
		return
	}
	if e.srv != nil {
		_ = e.srv.Close()
	}
	for _, l := range e.ls {
		_ = l.Close()
	}
}
