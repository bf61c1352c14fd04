package replication

import (
	"bytes"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fencing a deposed or isolated master (issue 23; docs/safety.md
// "Fencing"). Pure: every method takes the time as an argument.
//
// Two rules stop a server that acts as master from accepting writes:
//
//   - Epoch fence. The server knows the config epoch it was configured at
//     (Epoch: stamped by vigil-sentinel with CONFIG SET master-config-epoch
//     in its SLAVEOF transaction, adopted from the hellos that name this
//     server, or read from the config file). A sentinel hello (published by
//     vigil-sentinel and redis-sentinel alike on __sentinel__:hello to every
//     instance they monitor) that carries a higher master_config_epoch and
//     names another master means a failover this server did not take part
//     in made that other server the master: writes stop at once and stay
//     stopped until the server is reconfigured (REPLICAOF/SLAVEOF, CONFIG SET
//     master-config-epoch, CONFIG SET master-fence "").
//   - Isolation. A monitored master (one that has received at least one
//     hello) that has heard, within IsolationTimeout, neither from a
//     majority of the sentinels it knows nor from MinReplicas replicas (a
//     REPLCONF ACK) stops accepting writes until contact comes back. A
//     sentinel is heard from by its hello or by a command on its command
//     connection (client name sentinel-<id8>-cmd). The sentinels are keyed
//     by the first 8 characters of their run ID (what the client name
//     carries).

// FenceHello is the part of a sentinel hello fencing reads
// (sentinelProcessHelloMessage's fields: the sentinel's run ID, the master's
// name, ip, port and config epoch).
type FenceHello struct {
	SentinelID string // run ID of the sentinel that published it
	MasterName string
	MasterIP   string
	MasterPort int
	Epoch      uint64 // master_config_epoch
}

// HelloChannel is the channel sentinels publish their hellos on.
const HelloChannel = "__sentinel__:hello"

// ParseHello parses "ip,port,runid,current_epoch,master_name,master_ip,
// master_port,master_config_epoch" (8 fields, as sentinel.c's
// sentinelProcessHelloMessage requires). It never panics.
func ParseHello(b []byte) (FenceHello, bool) {
	var f [8][]byte
	n := 0
	for n < 7 {
		i := bytes.IndexByte(b, ',')
		if i < 0 {
			return FenceHello{}, false
		}
		f[n], b = b[:i], b[i+1:]
		n++
	}
	if bytes.IndexByte(b, ',') >= 0 {
		return FenceHello{}, false
	}
	f[7] = b
	port, err := strconv.Atoi(string(f[6]))
	if err != nil || port <= 0 || port > 65535 || len(f[2]) == 0 {
		return FenceHello{}, false
	}
	epoch, err := strconv.ParseUint(string(f[7]), 10, 64)
	if err != nil {
		return FenceHello{}, false
	}
	return FenceHello{SentinelID: string(f[2]), MasterName: string(f[4]), MasterIP: string(f[5]), MasterPort: port, Epoch: epoch}, true
}

// SentinelKey is the key of a sentinel in the contact table: the first 8
// characters of its run ID.
func SentinelKey(runID string) string {
	if len(runID) > 8 {
		return runID[:8]
	}
	return runID
}

// SentinelClientKey returns the sentinel key of a client named
// "sentinel-<id8>-cmd" (sentinel.c's command connection name), or "".
func SentinelClientKey(name string) string {
	if len(name) == len("sentinel-12345678-cmd") && strings.HasPrefix(name, "sentinel-") && strings.HasSuffix(name, "-cmd") {
		return name[9:17]
	}
	return ""
}

// IsSelf reports whether the master a hello names (ip, port) is this
// server: the hello reached it on a connection whose local address is
// laddr ("ip:port", the address the sentinel dialed), or announceIP /
// announcePort (replica-announce-ip/-port) name it. A hostname matches only
// announceIP (no resolution here).
func IsSelf(ip string, port int, laddr, announceIP string, announcePort int) bool {
	lip, lport := "", 0
	if h, p, err := net.SplitHostPort(laddr); err == nil {
		lip = h
		lport, _ = strconv.Atoi(p)
	}
	portOK := port == lport || announcePort != 0 && port == announcePort
	if !portOK {
		return false
	}
	if announceIP != "" && strings.EqualFold(ip, announceIP) {
		return true
	}
	a, b := net.ParseIP(ip), net.ParseIP(lip)
	return a != nil && b != nil && a.Equal(b)
}

// Fence is a server's fencing state. The zero value is a server that was
// never monitored nor stamped.
type Fence struct {
	// Epoch is the config epoch this server was last configured at
	// (master-config-epoch).
	Epoch uint64
	// FencedEpoch > 0: writes are refused since a hello with this epoch
	// named FencedBy ("ip:port") the master (master-fence).
	FencedEpoch uint64
	FencedBy    string
	// FencedAt is when the epoch fence was raised (zero if restored from
	// the config file).
	FencedAt time.Time
	// HighestEpoch is the highest master_config_epoch heard in a hello.
	HighestEpoch uint64

	sentinels map[string]time.Time // key -> last contact
	// checkAfter: before it, the master is known not to be isolated (the
	// contacts only move later); zero: check.
	checkAfter time.Time
	// Isolated is the last isolation verdict (for INFO and the log).
	Isolated      bool
	IsolatedSince time.Time
}

// HelloResult says what a hello changed.
type HelloResult int

const (
	HelloIgnored HelloResult = iota // nothing but the contact
	HelloAdopted                    // Epoch moved up
	HelloFenced                     // the epoch fence was raised (or moved to a higher epoch)
)

// Hello processes a hello received at now from a sentinel (not relayed by
// a master link). master: this server acts as master (no REPLICAOF);
// self: the hello names this server as the master (IsSelf).
func (f *Fence) Hello(now time.Time, h FenceHello, master, self bool) HelloResult {
	f.contact(now, SentinelKey(h.SentinelID), true)
	if h.Epoch > f.HighestEpoch {
		f.HighestEpoch = h.Epoch
	}
	if h.Epoch <= f.Epoch || h.Epoch <= f.FencedEpoch {
		return HelloIgnored
	}
	if !master || self {
		// A replica follows whoever its sentinels configured; the epoch
		// only records what it has seen. A master named by the hello
		// was promoted at that epoch (redis-sentinel does not stamp).
		f.Stamp(h.Epoch)
		return HelloAdopted
	}
	f.FencedEpoch, f.FencedBy, f.FencedAt = h.Epoch, net.JoinHostPort(h.MasterIP, strconv.Itoa(h.MasterPort)), now
	return HelloFenced
}

// SentinelContact records a command from a known sentinel's command
// connection (key: SentinelClientKey). Unknown keys are ignored: the set
// of sentinels is learned from hellos only.
func (f *Fence) SentinelContact(now time.Time, key string) {
	f.contact(now, key, false)
}

func (f *Fence) contact(now time.Time, key string, learn bool) {
	if key == "" {
		return
	}
	if _, ok := f.sentinels[key]; !ok {
		if !learn {
			return
		}
		if f.sentinels == nil {
			f.sentinels = map[string]time.Time{}
		}
		f.checkAfter = time.Time{} // the majority changed
	}
	if t := f.sentinels[key]; now.After(t) {
		f.sentinels[key] = now
	}
}

// KnownSentinels is the set of sentinels learned from hellos, as the keys
// in order separated by spaces (master-known-sentinels), "" when none.
func (f *Fence) KnownSentinels() string { return strings.Join(f.SentinelKeys(), " ") }

// RestoreSentinels replaces the set of known sentinels with the keys of
// known (KnownSentinels' form; a config file's master-known-sentinels),
// each heard at now: a restarted master is monitored again at once, and
// the isolation rule gives it a full timeout from its start to hear from
// them (or from its replicas). A key already known keeps its contact time.
func (f *Fence) RestoreSentinels(now time.Time, known string) {
	old := f.sentinels
	f.sentinels = nil
	for _, k := range strings.Fields(known) {
		if f.sentinels == nil {
			f.sentinels = map[string]time.Time{}
		}
		if t, ok := old[k]; ok {
			f.sentinels[k] = t
		} else {
			f.sentinels[k] = now
		}
	}
	f.checkAfter = time.Time{}
}

// Recheck drops the cached "not isolated" verdict (the timeout or the
// number of replicas needed changed).
func (f *Fence) Recheck() { f.checkAfter = time.Time{} }

// SentinelKeys are the keys of the known sentinels (AckGate.Counted).
func (f *Fence) SentinelKeys() []string { return slices.Sorted(maps.Keys(f.sentinels)) }

// LearnSentinel records contact with the sentinel key as a hello would
// (a sentinel-seen confirmation: AckGate); it reports whether the key is
// new.
func (f *Fence) LearnSentinel(now time.Time, key string) bool {
	_, had := f.sentinels[key]
	f.contact(now, key, true)
	return !had && key != ""
}

// Sentinels is the number of sentinels learned from hellos.
func (f *Fence) Sentinels() int { return len(f.sentinels) }

// Monitored: at least one hello was received (since the start or the
// restore): only a monitored master can isolate itself.
func (f *Fence) Monitored() bool { return len(f.sentinels) > 0 }

// Reconfigured is REPLICAOF/SLAVEOF (any form that succeeded), or an
// operator's CONFIG SET master-fence "": the fence is lifted and its epoch
// adopted, so the hellos of that epoch do not raise it again.
func (f *Fence) Reconfigured() {
	if f.FencedEpoch > f.Epoch {
		f.Epoch = f.FencedEpoch
	}
	f.FencedEpoch, f.FencedBy, f.FencedAt = 0, "", time.Time{}
}

// Stamp is CONFIG SET master-config-epoch E (vigil-sentinel's stamp, in
// the transaction that reconfigures this server, or an operator's): the
// server is configured at epoch E; a fence of an epoch <= E is lifted.
func (f *Fence) Stamp(epoch uint64) {
	f.Epoch = epoch
	if f.FencedEpoch != 0 && f.FencedEpoch <= epoch {
		f.FencedEpoch, f.FencedBy, f.FencedAt = 0, "", time.Time{}
	}
}

// IsolationInput is what the isolation rule reads at a write.
type IsolationInput struct {
	Timeout time.Duration // master-isolation-timeout; 0: off
	// MinReplicas: max(1, min-replicas-to-write, min-replicas-ack).
	MinReplicas int
	// ReplicaAcks are the times of each replica's last REPLCONF ACK.
	ReplicaAcks []time.Time
}

// IsolatedAt decides whether a monitored master is isolated at now: it has
// heard neither from a majority of its known sentinels nor from
// in.MinReplicas replicas within in.Timeout. It caches the earliest time the
// verdict "not isolated" can change; NeedCheck tells the caller whether it
// must gather in.ReplicaAcks and call again. transition reports a change of
// the verdict (for the log).
func (f *Fence) IsolatedAt(now time.Time, in IsolationInput) (isolated, transition bool) {
	iso, until := isolation(now, f.sentinels, in)
	if iso {
		f.checkAfter = time.Time{}
		if !f.Isolated {
			f.Isolated, f.IsolatedSince = true, now
			return true, true
		}
		return true, false
	}
	f.checkAfter = until
	if f.Isolated {
		f.Isolated, f.IsolatedSince = false, time.Time{}
		return false, true
	}
	return false, false
}

// NeedCheck reports whether IsolatedAt must run for a write at now: the
// rule is on, the master monitored, and the cached "not isolated" verdict
// expired (or the last verdict was isolated).
func (f *Fence) NeedCheck(now time.Time, timeout time.Duration) bool {
	if timeout <= 0 || len(f.sentinels) == 0 {
		if f.Isolated {
			f.Isolated, f.IsolatedSince = false, time.Time{}
		}
		return false
	}
	return f.checkAfter.IsZero() || !now.Before(f.checkAfter)
}

// isolation is the rule; until is when a "not isolated" verdict can first
// change (the contact that keeps it expires).
func isolation(now time.Time, sentinels map[string]time.Time, in IsolationInput) (bool, time.Time) {
	if in.Timeout <= 0 || len(sentinels) == 0 {
		return false, time.Time{}
	}
	need := len(sentinels)/2 + 1
	var until time.Time
	if t, ok := kthNewest(sentinelTimes(sentinels), need); ok && now.Sub(t) < in.Timeout {
		until = t.Add(in.Timeout)
	}
	minRep := in.MinReplicas
	if minRep < 1 {
		minRep = 1
	}
	if t, ok := kthNewest(append([]time.Time(nil), in.ReplicaAcks...), minRep); ok && now.Sub(t) < in.Timeout {
		if u := t.Add(in.Timeout); u.After(until) {
			until = u
		}
	}
	if until.IsZero() {
		return true, time.Time{}
	}
	return false, until
}

func sentinelTimes(m map[string]time.Time) []time.Time {
	out := make([]time.Time, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	return out
}

// kthNewest returns the k-th most recent time of ts (k >= 1), reordering ts.
func kthNewest(ts []time.Time, k int) (time.Time, bool) {
	if k < 1 || len(ts) < k {
		return time.Time{}, false
	}
	// Few entries: a selection sort of the first k.
	for i := 0; i < k; i++ {
		m := i
		for j := i + 1; j < len(ts); j++ {
			if ts[j].After(ts[m]) {
				m = j
			}
		}
		ts[i], ts[m] = ts[m], ts[i]
	}
	return ts[k-1], true
}

// FenceString is the master-fence directive's value: "" or
// "<epoch> <ip> <port>".
func (f *Fence) FenceString() string {
	if f.FencedEpoch == 0 {
		return ""
	}
	host, port, err := net.SplitHostPort(f.FencedBy)
	if err != nil {
		return ""
	}
	return strconv.FormatUint(f.FencedEpoch, 10) + " " + host + " " + port
}

// ParseFenceString parses master-fence's value ("" clears).
func ParseFenceString(s string) (epoch uint64, by string, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "", true
	}
	f := strings.Fields(s)
	if len(f) != 3 {
		return 0, "", false
	}
	e, err := strconv.ParseUint(f[0], 10, 64)
	p, err2 := strconv.Atoi(f[2])
	if err != nil || err2 != nil || e == 0 || p <= 0 || p > 65535 {
		return 0, "", false
	}
	return e, net.JoinHostPort(f[1], f[2]), true
}

// Restore sets the fence from master-fence's value (config file, CONFIG
// SET); an empty value lifts it as Reconfigured does.
func (f *Fence) Restore(epoch uint64, by string) {
	if epoch == 0 {
		f.Reconfigured()
		return
	}
	f.FencedEpoch, f.FencedBy, f.FencedAt = epoch, by, time.Time{}
}

// Error texts. Both begin with Redis's READONLY reply, so that clients
// treat the refused write as "this is not the master (any more)": go-redis
// v9 retries a READONLY error and this repository's client rediscovers the
// master on it, as after a failover of a redis-server master.
const (
	errFencePrefix = "READONLY You can't write against a read only replica."
)

// FencedError is the reply to a write refused by the epoch fence.
func (f *Fence) FencedError() string {
	return errFencePrefix + " This master is fenced: config epoch " + strconv.FormatUint(f.FencedEpoch, 10) +
		" made " + f.FencedBy + " the master."
}

// IsolatedError is the reply to a write refused by the isolation rule.
func IsolatedError(timeout time.Duration, sentinels, need int) string {
	return errFencePrefix + " This master is isolated: no contact with a majority of its " + strconv.Itoa(sentinels) +
		" sentinels nor with " + strconv.Itoa(need) + " replica(s) for " + strconv.FormatInt(timeout.Milliseconds(), 10) +
		" ms (master-isolation-timeout)."
}

// Heard counts the sentinels and replica acks within timeout of now (for
// INFO and the error).
func (f *Fence) Heard(now time.Time, timeout time.Duration, acks []time.Time) (sentinels, replicas int) {
	for _, t := range f.sentinels {
		if now.Sub(t) < timeout {
			sentinels++
		}
	}
	for _, t := range acks {
		if now.Sub(t) < timeout {
			replicas++
		}
	}
	return
}
