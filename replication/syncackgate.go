package replication

import (
	"maps"
	"slices"
	"strings"
)

// AckGate is the master's half of the sync-ack membership rule (Vigil;
// sentinel/doc.go "Sync-ack mode", docs/safety.md): in sync-ack mode a
// replica's acknowledgements count toward min-replicas-ack (held writes and
// held reads) only once every sentinel the master knows has recorded that
// replica as one of its ack members, so that whichever sentinel leads a
// failover counts it in the rule's set A.
//
// How the master knows: each INFO it generates in the mode carries a
// number (sync_ack_info_seq, NextInfo) and lists every replica attached at
// that moment. A vigil-sentinel that processed such an INFO of the master
// it monitors, marked every listed replica an ack member and persisted its
// config, answers REPLCONF sentinel-seen <seq> sentinel-id <runid> (Seen).
// A replica attached when the counter was at a (Attach) was listed by
// every INFO numbered above a for as long as its connection lasts; so it
// counts once, for every known sentinel key k, Seen(k) > a (Counted). A
// reconnection is a new attachment: it waits for fresh confirmations.
//
// The known sentinels are the master's (Fence: learned from hellos and
// persisted as master-known-sentinels); with none known (the master is not
// monitored) every replica counts. Pure: no clock, no I/O.
//
// Only sentinels that ever confirmed (Confirmers, persisted as
// master-sync-ack-sentinels) are waited for: a redis-sentinel never
// confirms, so a vigil-server in sync-ack mode monitored by redis-sentinels
// counts every replica, as before.
type AckGate struct {
	seq        uint64            // the last INFO number given out
	seen       map[string]uint64 // sentinel key -> highest INFO number it confirmed
	confirmers map[string]bool   // keys that ever confirmed
}

// Start sets the numbering's base (the server's start time in
// microseconds): numbers stay increasing across restarts, so a
// confirmation of a previous run's INFO is never taken for this run's.
func (g *AckGate) Start(base uint64) {
	if base > g.seq {
		g.seq = base
	}
}

// Confirmers are the keys that ever confirmed, sorted and space-separated
// (master-sync-ack-sentinels).
func (g *AckGate) Confirmers() string {
	return strings.Join(slices.Sorted(maps.Keys(g.confirmers)), " ")
}

// RestoreConfirmers replaces the confirmers with the keys of s
// (Confirmers' form).
func (g *AckGate) RestoreConfirmers(s string) {
	g.confirmers = nil
	for _, k := range strings.Fields(s) {
		if g.confirmers == nil {
			g.confirmers = map[string]bool{}
		}
		g.confirmers[k] = true
	}
}

// NextInfo numbers an INFO being generated (it lists every replica
// attached now).
func (g *AckGate) NextInfo() uint64 {
	g.seq++
	return g.seq
}

// Attach returns the number a replica attaching now is tagged with: the
// INFOs numbered above it list the replica.
func (g *AckGate) Attach() uint64 { return g.seq }

// Seen records that the sentinel with key (SentinelKey) confirmed the INFO
// numbered seq; a number never given out is ignored. It reports whether
// the sentinel's confirmation moved or it became a confirmer (counts may
// have changed).
func (g *AckGate) Seen(key string, seq uint64) bool {
	if key == "" || seq == 0 || seq > g.seq {
		return false
	}
	newKey := !g.confirmers[key]
	if newKey {
		if g.confirmers == nil {
			g.confirmers = map[string]bool{}
		}
		g.confirmers[key] = true
	}
	if seq <= g.seen[key] {
		return newKey
	}
	if g.seen == nil {
		g.seen = map[string]uint64{}
	}
	g.seen[key] = seq
	return true
}

// Counted reports whether a replica tagged attach (Attach) counts, given
// the keys of the known sentinels (none: every replica counts); of those,
// only confirmers are waited for.
func (g *AckGate) Counted(attach uint64, known []string) bool {
	for _, k := range known {
		if g.confirmers[k] && g.seen[k] <= attach {
			return false
		}
	}
	return true
}

// Missing lists the known sentinels that have not yet confirmed a replica
// tagged attach (sorted), for INFO and errors.
func (g *AckGate) Missing(attach uint64, known []string) []string {
	var out []string
	for _, k := range known {
		if g.confirmers[k] && g.seen[k] <= attach {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
