package replication

import (
	"strings"
	"testing"
)

func TestBestFailoverReplica(t *testing.T) {
	rs := []FailoverReplica{
		{Host: "10.0.0.1", Port: 1, Online: false, AckOffset: 900},
		{Host: "10.0.0.2", Port: 2, Online: true, AckOffset: 500},
		{Host: "10.0.0.3", Port: 3, Online: true, AckOffset: 700},
		{Host: "10.0.0.4", Port: 4, Online: true, AckOffset: 700},
	}
	r, ok := BestFailoverReplica(rs)
	if !ok || r.Port != 3 {
		t.Fatalf("best = %+v %v, want the first online replica with the largest offset (port 3)", r, ok)
	}
	if _, ok := BestFailoverReplica(rs[:1]); ok {
		t.Fatal("an offline replica was chosen")
	}
	args, ok := ShutdownFailoverArgs(rs, 0)
	var parts []string
	for _, a := range args {
		parts = append(parts, string(a))
	}
	if got := strings.Join(parts, " "); !ok || got != "FAILOVER TO 10.0.0.3 3 TIMEOUT 10000" {
		t.Fatalf("args %q %v", got, ok)
	}
	// The arguments pass FAILOVER's own checks.
	d := DecideFailoverCommand(args, FailoverEnv{Replicas: rs})
	if !d.Start || d.Request.Host != "10.0.0.3" || d.Request.TimeoutMs != 10000 {
		t.Fatalf("DecideFailoverCommand: %+v", d)
	}
	if _, ok := ShutdownFailoverArgs(nil, 5000); ok {
		t.Fatal("args without replicas")
	}
}
