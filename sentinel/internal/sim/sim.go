package sim

import (
	"container/heap"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/replication"
	"github.com/vigil-kv/vigil/sentinel"
)

// T0 is the simulated unix-ms time at which every run starts.
const T0 int64 = 1_700_000_000_000

// Line is one logged event or action.
type Line struct {
	At       int64  // ms since T0
	Node     string // sentinel (or sim) name
	Type     string // event type ("+sdown") or action name ("slaveof", "reply", ...)
	Message  string
	Sentinel bool // true for Notify lines from a sentinel core
}

func (l Line) String() string {
	msg := l.Type
	if l.Message != "" {
		msg += " " + l.Message
	}
	return fmt.Sprintf("%9.3f %-3s %s", float64(l.At)/1000, l.Node, msg)
}

type item struct {
	at  int64
	seq uint64
	fn  func()
}

type queue []item

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(item)) }
func (q *queue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// Node is a simulated process: a sentinel or a Redis server.
type Node struct {
	Name       string
	Addr       sentinel.Addr
	IsSentinel bool
	Alive      bool

	// Sentinel.
	Core        *sentinel.Core
	Saved       sentinel.Config // last RewriteConfig
	cfg         sentinel.Config // initial config
	seed        int64
	tickGen     int
	frozenUntil int64
	clockSkew   int64

	// Redis.
	RunID         string
	restarts      int
	Role          string // "master" or "slave"
	MasterHost    string
	MasterPort    int
	Priority      int
	Announced     int
	base, since   int64
	pinned        int64
	LinkUp        bool
	linkDownSince int64 // -1: no drop recorded
	syncUntil     int64
	pingReply     string
	deaf          bool   // refuses SLAVEOF (as with a renamed command: EXECABORT)
	stall         bool   // as a FAILOVER target, never reaches the master's offset
	failoverState string // master_failover_state; "" is no-failover
	failoverGen   int
	// RefusedEmpty: the replica's empty-restart guard refuses its master's
	// empty full sync (INFO master_sync_refused_empty:1, link down) until
	// the next REPLICAOF; Keys is what a master's INFO keyspace reports.
	RefusedEmpty bool
	Keys         int
	// ReplID is master_replid: a master's own (new at each start and
	// promotion), a replica's master's once its link is up.
	// MinReplicasAck is vigil-server's min-replicas-ack (INFO
	// min_replicas_ack when > 0).
	ReplID         string
	MinReplicasAck int
	// The sync-ack membership gate of a vigil-server master
	// (replication.AckGate): the INFO numbering and confirmations, the
	// attachment tag of each replica whose link is up to it, and the
	// sentinels that published a hello to it.
	gate      replication.AckGate
	attached  map[string]uint64
	sentinels map[string]bool
}

// AcksCount reports whether replica r's acknowledgements count toward the
// sync-ack of master m (its link is up to m and every vigil-sentinel m
// knows confirmed an INFO listing it).
func (m *Node) AcksCount(r *Node) bool {
	at, ok := m.attached[r.Name]
	if !ok {
		return false
	}
	var known []string
	for k := range m.sentinels {
		known = append(known, k)
	}
	sort.Strings(known)
	return m.gate.Counted(at, known)
}

type connKey struct {
	owner string
	link  uint64
	conn  sentinel.Conn
}

type conn struct {
	target string
	ref    sentinel.Ref
}

// Sim is one simulated deployment.
type Sim struct {
	now       int64 // ms since T0
	seq       uint64
	q         queue
	rng       *rand.Rand
	Latency   int64
	SyncDelay int64
	Tunables  sentinel.Tunables

	Nodes   map[string]*Node
	byAddr  map[string]*Node
	cuts    map[[2]string]bool
	conns   map[connKey]*conn
	started bool

	Lines  []Line
	Errors []string
	out    strings.Builder
}

// New returns an empty simulation.
func New(seed int64) *Sim {
	return &Sim{
		rng:       rand.New(rand.NewSource(seed)),
		Latency:   1,
		SyncDelay: 300,
		Tunables:  sentinel.DefaultTunables(),
		Nodes:     map[string]*Node{},
		byAddr:    map[string]*Node{},
		cuts:      map[[2]string]bool{},
		conns:     map[connKey]*conn{},
	}
}

// Now returns the simulated time in ms since T0.
func (s *Sim) Now() int64 { return s.now }

// Output returns the transcript.
func (s *Sim) Output() string { return s.out.String() }

func (s *Sim) printf(format string, args ...any) { fmt.Fprintf(&s.out, format, args...) }

func (s *Sim) log(l Line) {
	s.Lines = append(s.Lines, l)
	s.out.WriteString(l.String())
	s.out.WriteByte('\n')
}

func (s *Sim) errorf(format string, args ...any) {
	msg := fmt.Sprintf("at %.3f: ", float64(s.now)/1000) + fmt.Sprintf(format, args...)
	s.Errors = append(s.Errors, msg)
	s.printf("!! %s\n", msg)
}

func (s *Sim) at(t int64, fn func()) {
	s.seq++
	heap.Push(&s.q, item{t, s.seq, fn})
}

// Run processes events until simulated time reaches end.
func (s *Sim) Run(until int64) {
	for s.q.Len() > 0 && s.q[0].at <= until {
		it := heap.Pop(&s.q).(item)
		s.now = it.at
		it.fn()
	}
	s.now = until
}

func (s *Sim) sortedNodes() []*Node {
	out := make([]*Node, 0, len(s.Nodes))
	for _, n := range s.Nodes {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func runID(name string, n int) string {
	h := sha1.Sum([]byte(name + "#" + strconv.Itoa(n)))
	return hex.EncodeToString(h[:])
}

// AddRedis adds a Redis master (masterOf == "") or replica.
func (s *Sim) AddRedis(name string, addr sentinel.Addr, masterOf string) *Node {
	n := &Node{Name: name, Addr: addr, Alive: true, RunID: runID(name, 0), Role: "master",
		Priority: 100, Announced: 1, pinned: -1, linkDownSince: -1, base: 1000, since: s.now}
	n.ReplID = runID(n.RunID, 1)
	if masterOf != "" {
		m := s.Nodes[masterOf]
		n.Role, n.MasterHost, n.MasterPort = "slave", m.Addr.IP, m.Addr.Port
	}
	s.Nodes[name] = n
	s.byAddr[addr.String()] = n
	s.refreshLinks(s.snapshot())
	return n
}

// AddSentinel adds a sentinel with an optional fixed id.
func (s *Sim) AddSentinel(name string, addr sentinel.Addr, myID string, seed int64) *Node {
	cfg := sentinel.NewConfig()
	cfg.MyID = myID
	n := &Node{Name: name, Addr: addr, IsSentinel: true, Alive: true, cfg: cfg, seed: seed}
	s.Nodes[name] = n
	s.byAddr[addr.String()] = n
	return n
}

// Monitor adds a master to a not-yet-started sentinel's initial config.
func (s *Sim) Monitor(sn *Node, mc sentinel.MasterConfig) {
	sn.cfg.Masters = append(sn.cfg.Masters, mc)
}

func (s *Sim) newCore(n *Node) {
	tun := s.Tunables
	n.Core = sentinel.New(sentinel.Options{Port: n.Addr.Port, Tunables: &tun},
		rand.New(rand.NewSource(n.seed+int64(n.restarts)*7919)))
}

// Start delivers ConfigLoaded to every sentinel and starts their timers.
func (s *Sim) Start() {
	if s.started {
		return
	}
	s.started = true
	for _, n := range s.sortedNodes() {
		if !n.IsSentinel {
			continue
		}
		s.newCore(n)
		s.boot(n, n.cfg)
	}
}

func (s *Sim) boot(n *Node, cfg sentinel.Config) {
	acts := n.Core.Step(T0+s.now+n.clockSkew, sentinel.ConfigLoaded{Config: cfg})
	for _, a := range acts {
		if r, ok := a.(sentinel.Reply); ok && r.Kind == sentinel.ReplyError {
			s.errorf("%s: config load: %s", n.Name, r.Text)
		}
	}
	s.exec(n, acts, false)
	n.tickGen++
	gen := n.tickGen
	s.at(s.now+1+int64(s.rng.Intn(100)), func() { s.tick(n, gen) })
}

func (s *Sim) tick(n *Node, gen int) {
	if !n.Alive || n.tickGen != gen {
		return
	}
	if n.frozenUntil > s.now {
		s.at(n.frozenUntil, func() { s.tick(n, gen) })
		return
	}
	s.step(n, sentinel.Ticked{}, true)
	if n.Alive && n.tickGen == gen {
		s.at(s.now+n.Core.TickDelay(), func() { s.tick(n, gen) })
	}
}

// step runs one event on a sentinel's core now and executes the actions.
func (s *Sim) step(n *Node, ev sentinel.Event, logReplies bool) []sentinel.Action {
	acts := n.Core.Step(T0+s.now+n.clockSkew, ev)
	s.exec(n, acts, logReplies)
	return acts
}

// deliver runs an event on a sentinel at the current time, or later if the
// process is frozen.
func (s *Sim) deliver(n *Node, ev sentinel.Event) {
	if !n.Alive || n.Core == nil {
		return
	}
	if n.frozenUntil > s.now {
		s.at(n.frozenUntil, func() { s.deliver(n, ev) })
		return
	}
	s.step(n, ev, false)
}

// Request runs a client request on sentinel name and logs the reply.
func (s *Sim) Request(name string, ev sentinel.Event) {
	n := s.Nodes[name]
	if n == nil || !n.IsSentinel || !n.Alive {
		s.errorf("request to unknown or dead sentinel %s", name)
		return
	}
	s.step(n, ev, true)
}

func (s *Sim) reachable(a, b *Node) bool {
	if !a.Alive || !b.Alive {
		return false
	}
	return !s.cuts[pair(a.Name, b.Name)]
}

func pair(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Cut cuts the network between two nodes.
func (s *Sim) Cut(a, b string) { s.mutate(func() { s.cuts[pair(a, b)] = true }) }

// Heal removes every cut.
func (s *Sim) Heal() { s.mutate(func() { s.cuts = map[[2]string]bool{} }) }

// Partition cuts every pair of nodes that are in different groups.
func (s *Sim) Partition(groups [][]string) {
	s.mutate(func() {
		for i := range groups {
			for j := i + 1; j < len(groups); j++ {
				for _, a := range groups[i] {
					for _, b := range groups[j] {
						s.cuts[pair(a, b)] = true
					}
				}
			}
		}
	})
}

// Isolate cuts a node from every other node.
func (s *Sim) Isolate(name string) {
	s.mutate(func() {
		for o := range s.Nodes {
			if o != name {
				s.cuts[pair(name, o)] = true
			}
		}
	})
}

// Kill stops a node: its connections reset.
func (s *Sim) Kill(name string) {
	n := s.Nodes[name]
	s.mutate(func() { n.Alive = false })
	keys := s.sortedConnKeys()
	for _, k := range keys {
		c := s.conns[k]
		if k.owner == name {
			delete(s.conns, k)
			continue
		}
		if c.target == name {
			delete(s.conns, k)
			owner := s.Nodes[k.owner]
			ev := sentinel.LinkDisconnected{Instance: c.ref, Conn: k.conn}
			s.at(s.now+s.Latency, func() { s.deliver(owner, ev) })
		}
	}
	if n.IsSentinel {
		n.tickGen++
	}
}

// Restart starts a killed node again: Redis with a new run id and its
// persisted role, a sentinel from its last rewritten config.
func (s *Sim) Restart(name string) {
	n := s.Nodes[name]
	if n.Alive {
		s.Kill(name)
	}
	n.restarts++
	if n.IsSentinel {
		n.Alive = true
		n.frozenUntil = 0
		s.newCore(n)
		cfg := n.Saved
		if cfg.MyID == "" {
			cfg = n.cfg
		}
		s.boot(n, cfg)
		return
	}
	s.mutate(func() {
		n.Alive = true
		n.RunID = runID(n.Name, n.restarts)
		if n.Role == "master" {
			n.ReplID = runID(n.RunID, 1)
		}
		n.pingReply = ""
		if n.Role == "slave" {
			n.syncUntil = s.now + s.SyncDelay
			n.linkDownSince = -1
			s.at(n.syncUntil, func() { s.mutate(func() {}) })
		}
	})
}

// Freeze stops a sentinel process for d ms (ticks and messages wait).
func (s *Sim) Freeze(name string, d int64) { s.Nodes[name].frozenUntil = s.now + d }

// SkewClock shifts a sentinel's clock by d ms.
func (s *Sim) SkewClock(name string, d int64) { s.Nodes[name].clockSkew += d }

func (s *Sim) sortedConnKeys() []connKey {
	keys := make([]connKey, 0, len(s.conns))
	for k := range s.conns {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.owner != b.owner {
			return a.owner < b.owner
		}
		if a.link != b.link {
			return a.link < b.link
		}
		return a.conn < b.conn
	})
	return keys
}

// ---- replication model ----

func (s *Sim) offsetOf(n *Node, depth int) int64 {
	if n.pinned >= 0 {
		return n.pinned
	}
	if n.Role == "master" {
		if n.Alive {
			return n.base + (s.now - n.since)
		}
		return n.base
	}
	if n.LinkUp && depth < 8 {
		if m := s.byAddr[sentinel.Addr{IP: n.MasterHost, Port: n.MasterPort}.String()]; m != nil {
			return s.offsetOf(m, depth+1)
		}
	}
	return n.base
}

func (s *Sim) snapshot() map[string]int64 {
	snap := map[string]int64{}
	for name, n := range s.Nodes {
		if !n.IsSentinel {
			snap[name] = s.offsetOf(n, 0)
		}
	}
	return snap
}

// mutate applies a change to the world and recomputes replication links,
// keeping offsets continuous.
func (s *Sim) mutate(fn func()) {
	snap := s.snapshot()
	fn()
	s.refreshLinks(snap)
}

func (s *Sim) refreshLinks(snap map[string]int64) {
	for _, n := range s.sortedNodes() {
		if n.IsSentinel {
			continue
		}
		n.base, n.since = snap[n.Name], s.now
		up := false
		if n.Alive && n.Role == "slave" && s.now >= n.syncUntil {
			m := s.byAddr[sentinel.Addr{IP: n.MasterHost, Port: n.MasterPort}.String()]
			up = m != nil && !m.IsSentinel && s.reachable(n, m) && !n.RefusedEmpty
			if up {
				n.ReplID = m.ReplID
			}
		}
		if n.LinkUp && !up {
			n.linkDownSince = s.now
		}
		n.LinkUp = up
	}
	// Attachments (AckGate): a replica whose link is up to a master is
	// attached to it from the moment the link came up; a drop detaches.
	for _, m := range s.sortedNodes() {
		if m.IsSentinel {
			continue
		}
		for name := range m.attached {
			r := s.Nodes[name]
			if !r.LinkUp || m.Role != "master" || !m.Alive || r.MasterHost != m.Addr.IP || r.MasterPort != m.Addr.Port {
				delete(m.attached, name)
			}
		}
		if m.Role != "master" || !m.Alive {
			continue
		}
		for _, r := range s.sortedNodes() {
			if !r.IsSentinel && r.LinkUp && r.MasterHost == m.Addr.IP && r.MasterPort == m.Addr.Port {
				if _, ok := m.attached[r.Name]; !ok {
					if m.attached == nil {
						m.attached = map[string]uint64{}
					}
					m.attached[r.Name] = m.gate.Attach()
				}
			}
		}
	}
}

// SetOffset pins a Redis instance's replication offset (-1 unpins).
func (s *Sim) SetOffset(name string, off int64) { s.mutate(func() { s.Nodes[name].pinned = off }) }

// ReplicaOf reconfigures a Redis instance as SLAVEOF would (host "" = NO ONE).
func (s *Sim) ReplicaOf(n *Node, host string, port int) {
	s.mutate(func() {
		n.RefusedEmpty = false // any REPLICAOF clears the guard (vigil-server)
		if host == "" {
			if n.Role != "master" {
				n.ReplID = runID(n.ReplID, 2) // shiftReplicationId
			}
			n.Role, n.MasterHost, n.MasterPort = "master", "", 0
			return
		}
		if n.Role == "slave" && n.MasterHost == host && n.MasterPort == port {
			return
		}
		n.Role, n.MasterHost, n.MasterPort = "slave", host, port
		n.syncUntil = s.now + s.SyncDelay
		n.linkDownSince = -1
		s.at(n.syncUntil, func() { s.mutate(func() {}) })
	})
}

// Info renders a Redis instance's INFO (server + replication sections).
func (s *Sim) Info(n *Node) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\r\n", args...) }
	w("# Server")
	w("redis_version:7.0.15")
	w("redis_mode:standalone")
	w("run_id:%s", n.RunID)
	w("tcp_port:%d", n.Addr.Port)
	w("")
	w("# Replication")
	off := s.offsetOf(n, 0)
	if n.Role == "master" {
		w("role:master")
		var reps []*Node
		for _, r := range s.sortedNodes() {
			if !r.IsSentinel && r.Alive && r.Role == "slave" && r.LinkUp &&
				r.MasterHost == n.Addr.IP && r.MasterPort == n.Addr.Port {
				reps = append(reps, r)
			}
		}
		w("connected_slaves:%d", len(reps))
		for i, r := range reps {
			w("slave%d:ip=%s,port=%d,state=online,offset=%d,lag=0", i, r.Addr.IP, r.Addr.Port, s.offsetOf(r, 0))
		}
	} else {
		w("role:slave")
		w("master_host:%s", n.MasterHost)
		w("master_port:%d", n.MasterPort)
		status := "down"
		if n.LinkUp {
			status = "up"
		}
		w("master_link_status:%s", status)
		w("master_last_io_seconds_ago:0")
		w("master_sync_in_progress:0")
		w("slave_read_repl_offset:%d", off)
		w("slave_repl_offset:%d", off)
		if !n.LinkUp {
			if n.linkDownSince < 0 {
				w("master_link_down_since_seconds:-1")
			} else {
				w("master_link_down_since_seconds:%d", (s.now-n.linkDownSince)/1000)
			}
		}
		if n.RefusedEmpty {
			w("master_sync_refused_empty:1")
			w("master_sync_refused_reason:empty dataset under a new replication ID")
		}
		w("slave_priority:%d", n.Priority)
		w("slave_read_only:1")
		w("replica_announced:%d", n.Announced)
		w("connected_slaves:0")
	}
	fs := n.failoverState
	if fs == "" {
		fs = "no-failover"
	}
	w("master_failover_state:%s", fs)
	w("master_replid:%s", n.ReplID)
	w("master_repl_offset:%d", off)
	if n.MinReplicasAck > 0 {
		w("min_replicas_ack:%d", n.MinReplicasAck)
		if n.Role == "master" {
			w("sync_ack_info_seq:%d", n.gate.NextInfo())
		}
	}
	if n.Keys > 0 {
		w("")
		w("# Keyspace")
		w("db0:keys=%d,expires=0,avg_ttl=0", n.Keys)
	}
	return b.String()
}

// ---- executing actions ----

func (s *Sim) exec(n *Node, acts []sentinel.Action, logReplies bool) {
	for _, a := range acts {
		switch a := a.(type) {
		case sentinel.Notify:
			s.log(Line{At: s.now, Node: n.Name, Type: a.Type, Message: a.Message, Sentinel: true})
		case sentinel.RewriteConfig:
			n.Saved = n.Core.Config()
		case sentinel.RunScript:
			s.log(Line{At: s.now, Node: n.Name, Type: "script", Message: a.Path + " " + strings.Join(a.Args, " ")})
		case sentinel.Reply:
			if logReplies {
				var msg string
				switch a.Kind {
				case sentinel.ReplyOK:
					msg = "+OK"
				case sentinel.ReplyError:
					msg = "-" + a.Text
				case sentinel.ReplyInteger:
					msg = ":" + strconv.FormatInt(a.Int, 10)
				}
				s.log(Line{At: s.now, Node: n.Name, Type: "reply", Message: msg})
			}
		case sentinel.Crash:
			s.log(Line{At: s.now, Node: n.Name, Type: "crash", Message: a.Reason})
			s.Kill(n.Name)
			return
		case sentinel.Connect:
			s.connect(n, a)
		case sentinel.Disconnect:
			if a.Cmd {
				delete(s.conns, connKey{n.Name, a.Instance.Link, sentinel.ConnCmd})
			}
			if a.PubSub {
				delete(s.conns, connKey{n.Name, a.Instance.Link, sentinel.ConnPubSub})
			}
		case sentinel.SendPing:
			ref := a.Instance
			s.request(n, ref, func(t *Node) sentinel.Event {
				reply := "PONG"
				if !t.IsSentinel && t.pingReply != "" {
					reply = t.pingReply
				}
				return sentinel.PingReplied{Instance: ref, Reply: reply}
			})
		case sentinel.SendInfo:
			ref := a.Instance
			s.request(n, ref, func(t *Node) sentinel.Event {
				if t.IsSentinel {
					return sentinel.InfoReceived{Instance: ref, Failed: true}
				}
				return sentinel.InfoReceived{Instance: ref, Info: s.Info(t)}
			})
		case sentinel.PublishHello:
			ref, payload := a.Instance, a.Payload
			s.request(n, ref, func(t *Node) sentinel.Event {
				if t.IsSentinel {
					s.step(t, sentinel.HelloReceived{Payload: payload}, false)
				} else {
					s.publish(t, payload)
				}
				return sentinel.PublishReplied{Instance: ref, OK: true}
			})
		case sentinel.AskMasterDown:
			ask := a
			s.request(n, ask.Sentinel, func(t *Node) sentinel.Event {
				ev := sentinel.IsMasterDownReplied{Sentinel: ask.Sentinel, Invalid: true}
				if !t.IsSentinel {
					return ev
				}
				for _, r := range s.step(t, sentinel.IsMasterDownAsked{IP: ask.MasterIP, Port: ask.MasterPort,
					Epoch: ask.Epoch, RunID: ask.RunID}, false) {
					if md, ok := r.(sentinel.MasterDownReply); ok {
						ev = sentinel.IsMasterDownReplied{Sentinel: ask.Sentinel, Down: md.Down,
							Leader: md.Leader, LeaderEpoch: md.LeaderEpoch}
					}
				}
				return ev
			})
		case sentinel.SendReplicaOf:
			ro := a
			host := ro.Host
			if host == "" {
				host = "NO ONE"
			} else {
				host += " " + strconv.Itoa(ro.Port)
			}
			target := s.byAddr[ro.Instance.Addr.String()]
			tname := "?"
			if target != nil {
				tname = target.Name
			}
			s.log(Line{At: s.now, Node: n.Name, Type: "slaveof", Message: tname + " " + host})
			s.request(n, ro.Instance, func(t *Node) sentinel.Event {
				if !t.IsSentinel && !t.deaf {
					s.ReplicaOf(t, ro.Host, ro.Port)
				}
				return sentinel.CommandReplied{Instance: ro.Instance}
			})
		case sentinel.SendAckSeen:
			// REPLCONF sentinel-seen on a vigil-server master (not logged:
			// one per INFO).
			as := a
			s.request(n, as.Instance, func(t *Node) sentinel.Event {
				if t.Role == "master" {
					t.gate.Seen(replication.SentinelKey(as.RunID), as.Seq)
				}
				return sentinel.CommandReplied{Instance: as.Instance}
			})
		case sentinel.SendScriptKill:
			ref := a.Instance
			s.request(n, ref, func(*Node) sentinel.Event { return sentinel.CommandReplied{Instance: ref} })
		case sentinel.SendFailover:
			fo := a
			tname := "?"
			if t := s.byAddr[fo.Instance.Addr.String()]; t != nil {
				tname = t.Name
			}
			msg := tname + " ABORT"
			if !fo.Abort {
				msg = fmt.Sprintf("%s TO %s %d TIMEOUT %d", tname, fo.Host, fo.Port, fo.TimeoutMs)
			}
			s.log(Line{At: s.now, Node: n.Name, Type: "failover", Message: msg})
			s.request(n, fo.Instance, func(t *Node) sentinel.Event {
				return sentinel.FailoverReplied{Instance: fo.Instance, Err: s.failoverCmd(t, fo)}
			})
		}
	}
}

// failoverCmd runs FAILOVER on a simulated master and returns its error
// ("" for +OK): the target catches up 50 ms later (never if stalled) and
// takes over 10 ms after that; TIMEOUT or ABORT end it with the master in
// place.
func (s *Sim) failoverCmd(t *Node, fo sentinel.SendFailover) string {
	if t.IsSentinel {
		return "ERR unknown command 'FAILOVER'"
	}
	if fo.Abort {
		if t.failoverState == "" {
			return "ERR No failover in progress."
		}
		t.failoverState = ""
		t.failoverGen++
		return ""
	}
	if t.Role != "master" {
		return "ERR FAILOVER is not valid when server is a replica."
	}
	if t.failoverState != "" {
		return "ERR FAILOVER already in progress."
	}
	r := s.byAddr[sentinel.Addr{IP: fo.Host, Port: fo.Port}.String()]
	if r == nil || !r.Alive || r.Role != "slave" || !r.LinkUp || r.MasterHost != t.Addr.IP || r.MasterPort != t.Addr.Port {
		return "ERR FAILOVER target HOST and PORT is not a replica."
	}
	t.failoverState = "waiting-for-sync"
	t.failoverGen++
	g := t.failoverGen
	if !r.stall {
		s.at(s.now+50, func() {
			if t.failoverGen != g || !t.Alive {
				return
			}
			t.failoverState = "failover-in-progress"
			s.at(s.now+10, func() {
				if t.failoverGen != g || !t.Alive || !r.Alive {
					return
				}
				t.failoverState = ""
				t.failoverGen++
				s.ReplicaOf(r, "", 0)
				s.ReplicaOf(t, r.Addr.IP, r.Addr.Port)
			})
		})
	}
	s.at(s.now+fo.TimeoutMs, func() {
		if t.failoverGen == g && t.failoverState == "waiting-for-sync" {
			t.failoverState = ""
			t.failoverGen++
		}
	})
	return ""
}

func (s *Sim) connect(n *Node, a sentinel.Connect) {
	target := s.byAddr[a.Instance.Addr.String()]
	for _, cn := range []sentinel.Conn{sentinel.ConnCmd, sentinel.ConnPubSub} {
		if (cn == sentinel.ConnCmd && !a.Cmd) || (cn == sentinel.ConnPubSub && !a.PubSub) {
			continue
		}
		key := connKey{n.Name, a.Instance.Link, cn}
		ok := target != nil && s.reachable(n, target) && !(cn == sentinel.ConnPubSub && target.IsSentinel)
		if !ok {
			ev := sentinel.LinkDisconnected{Instance: a.Instance, Conn: cn}
			s.at(s.now+s.Latency, func() { s.deliver(n, ev) })
			continue
		}
		c := &conn{target: target.Name, ref: a.Instance}
		s.conns[key] = c
		ev := sentinel.LinkConnected{Instance: a.Instance, Conn: cn, LocalIP: n.Addr.IP}
		s.at(s.now+2*s.Latency, func() {
			if s.conns[key] == c {
				s.deliver(n, ev)
			}
		})
		// The CLIENT SETNAME queued first (no AUTH: simulated instances
		// have no passwords) is answered a round trip after that.
		pr := sentinel.PreludeReplied{Instance: a.Instance, Conn: cn}
		s.at(s.now+4*s.Latency, func() {
			if s.conns[key] == c && s.reachable(n, target) {
				s.deliver(n, pr)
			}
		})
	}
}

// request sends a command on owner's command connection of ref's link; the
// target handles it one latency later and the reply arrives one latency after
// that, if the connection still exists and the network allows.
func (s *Sim) request(owner *Node, ref sentinel.Ref, handle func(t *Node) sentinel.Event) {
	key := connKey{owner.Name, ref.Link, sentinel.ConnCmd}
	c := s.conns[key]
	if c == nil {
		return
	}
	target := s.Nodes[c.target]
	if !s.reachable(owner, target) {
		return
	}
	var process func()
	process = func() {
		if s.conns[key] != c || !s.reachable(owner, target) {
			return
		}
		if target.IsSentinel && target.frozenUntil > s.now {
			s.at(target.frozenUntil, process)
			return
		}
		ev := handle(target)
		s.at(s.now+s.Latency, func() {
			if s.conns[key] == c && s.reachable(owner, target) {
				s.deliver(owner, ev)
			}
		})
	}
	s.at(s.now+s.Latency, process)
}

// publish delivers a hello to every sentinel subscribed on the instance.
func (s *Sim) publish(t *Node, payload string) {
	if f := strings.Split(payload, ","); len(f) == 8 && !t.IsSentinel {
		// A vigil-server learns the sentinels from their hellos.
		if t.sentinels == nil {
			t.sentinels = map[string]bool{}
		}
		t.sentinels[replication.SentinelKey(f[2])] = true
	}
	for _, k := range s.sortedConnKeys() {
		c := s.conns[k]
		if k.conn != sentinel.ConnPubSub || c.target != t.Name {
			continue
		}
		owner := s.Nodes[k.owner]
		if !s.reachable(owner, t) {
			continue
		}
		key, ev := k, sentinel.HelloReceived{Instance: c.ref, Payload: payload}
		s.at(s.now+s.Latency, func() {
			if s.conns[key] == c {
				s.deliver(owner, ev)
			}
		})
	}
}
