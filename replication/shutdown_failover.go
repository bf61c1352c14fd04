package replication

import "strconv"

// BestFailoverReplica picks the replica SHUTDOWN FAILOVER (Vigil) hands
// over to: an online replica with the largest acknowledged offset, the
// first listed on a tie. ok is false when no replica is online.
func BestFailoverReplica(rs []FailoverReplica) (FailoverReplica, bool) {
	var best FailoverReplica
	ok := false
	for _, r := range rs {
		if !r.Online {
			continue
		}
		if !ok || r.AckOffset > best.AckOffset {
			best, ok = r, true
		}
	}
	return best, ok
}

// ShutdownFailoverArgs is the FAILOVER command SHUTDOWN FAILOVER runs:
// FAILOVER TO <best replica> TIMEOUT <timeoutMs>. ok is false when no
// replica is online (the shutdown is refused).
func ShutdownFailoverArgs(rs []FailoverReplica, timeoutMs int64) ([][]byte, bool) {
	r, ok := BestFailoverReplica(rs)
	if !ok {
		return nil, false
	}
	if timeoutMs <= 0 {
		timeoutMs = 10000
	}
	return [][]byte{[]byte("FAILOVER"), []byte("TO"), []byte(r.Host), []byte(strconv.Itoa(r.Port)),
		[]byte("TIMEOUT"), []byte(strconv.FormatInt(timeoutMs, 10))}, true
}
