package server

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Arrival order for pub/sub counts (README, "Differences").
//
// redis-server serves commands in the order their bytes arrive: a
// subscriber's UNSUBSCRIBE sent before another connection's PUBLISH is
// served first, whether or not its reply was read, and the PUBLISH counts
// one receiver less (Redis's own pub/sub tests rely on it). vigil-server
// reads each connection on its own goroutine, so the PUBLISH could run
// while the UNSUBSCRIBE still sits in the subscriber's socket or query
// buffer.
//
// So before a top-level PUBLISH, SPUBLISH or PUBSUB NUMSUB / NUMPAT /
// CHANNELS / SHARDNUMSUB / SHARDCHANNELS runs, the connections whose
// subscriptions it reads (the channel's subscribers and those of the
// matching patterns; every pattern subscriber for NUMPAT; ...) are checked
// for input that has arrived and not run: bytes read into the query
// buffer but not settled by a batch, or bytes still in the kernel's socket
// buffer (one epoll_wait over a set of the subscribers' sockets says which
// have any, FIONREAD how many; order_linux.go). When some have, the batch
// part ends before the command (its replies so far are written, the lock
// let go), the publisher waits until
// each of those connections has run everything that had arrived (its
// settled count reaches the bytes read plus the bytes queued at the check;
// a trailing incomplete command counts as run, as Redis would not run it
// either), and the next batch part runs the command first.
//
// Waiting never depends on more than the subscriber's own progress: it
// stops for a subscriber that holds (ordState.hold) - parked on a blocking
// command or CLIENT PAUSE (Redis does not read a blocked client's input
// either), waiting for its output to drain (a peer that does not read:
// the fallback, counted as before), or in an ordering wait of its own (so
// waits form no cycle: the decision to wait is taken under mu, and a
// connection that waits is never waited for) - and for one that is
// killed or gone. The check is taken under mu; the wait is not.
//
// Cost (redis-benchmark -c 50 PUBLISH, 2-core VM, against the server
// without it in the same runs): none without subscribers (no system call),
// about 5% with 50 subscribers, 15-25% with one (one epoll_wait per PUBLISH
// that has subscribers; reusing a poll for the commands read before it
// seldom applies at -P 1).
//
// Observers (ordAll): INFO, CLIENT LIST / KILL / UNBLOCK / PAUSE,
// FLUSHALL, FLUSHDB and SWAPDB look at or change what other connections'
// commands did or will see (INFO's blocked_clients right after two
// deferred SHUTDOWNs, integration/shutdown.tcl; a blocking XREADGROUP sent
// just before a FLUSHALL or SWAPDB that must unblock it, stream-cgroups.tcl).
// Before one runs, every other connection read raw is checked the same way
// (one ppoll over their sockets, then FIONREAD for each that has input
// queued: for admin commands only), and the observer waits as a publisher
// does, at most ordAllMax; a connection whose peer closed or reset is
// waited for until its goroutine has seen the end and unlinked it
// (ordPolled: redis-server frees it on reading the end of file, before a
// command that arrived later; INFO's connected_clients, CLIENT LIST and
// the clients' memory no longer count it). The
// cost falls on the observers only: GET/SET -P 16 unchanged (paired
// redis-benchmark runs, 0.99-1.04x); 50 clients sending nothing but INFO
// at once (redis-benchmark -c 50 info clients) get about a third of the
// throughput (each INFO waits for the others' INFOs that arrived before
// it), where one monitoring connection pays its poll (INFO clients at
// -c 1 beside 500 idle connections: about 6000/s, 1000/s with a FIONREAD
// for each, redis-server's 25000/s). Redis
// itself gives these answers most of the time, not always (epoll's order
// is not quite arrival order: TestArrivalOrderObserversRedis).
//
// pubsub-arrival-order no (a Vigil directive, default yes) turns all of it
// off.
//
// Not ordered: a SUBSCRIBE from a connection that is not yet subscribed to
// the channel (finding it would take a look at every connection's socket
// at each PUBLISH), a subscriber closed by its peer until its goroutine
// sees the close (for PUBLISH and PUBSUB), PUBLISH inside MULTI/EXEC or a script (the lock cannot
// be let go there), connections not read through the raw-read path
// (rawReader), and other platforms than Linux.

// ordState is a connection's progress, read by publishers without mu.
type ordState struct {
	rseq    atomic.Uint64  // odd while a read of the socket is in progress
	in      atomic.Int64   // bytes read from the socket
	settled atomic.Int64   // in when the last batch ended (every complete command read by then ran)
	hold    atomic.Int32   // > 0: the goroutine waits for something other than mu: not waited for
	fdp1    int            // the socket's descriptor + 1 (0: not read raw, not ordered)
	polled  bool           // the socket is in the subscribers' epoll set (under mu)
	list    []ordWaitFor   // the publisher's wait list (the client's own goroutine)
	seq     *atomic.Uint64 // the server's pollSeq (nil: none)
	stamp   uint64         // pollSeq after the last read (the client's own goroutine)
	cmd     [][]byte       // the command that waits (a copy), run first by the next batch part
	again   bool           // cmd is running: it does not wait again
	// cmdBuf: cmd's bytes, when it was its part's first command (bufmodel.go:
	// the part that runs it models them as read, as Redis's query buffer
	// holds a command while it runs)
	cmdBuf int64
	all    bool // cmd is an observer (ordAll): its wait is bounded by ordAllMax
	// waitBlk: cmd is a blocking command (ordBlock): until it has run,
	// the others' waits for this connection go on (order_keys.go). Set
	// and cleared under mu.
	waitBlk atomic.Bool
	mark    uint64 // ordCollect's dedup stamp (under mu)
}

// ordWaitFor is a connection to wait for and how far.
type ordWaitFor struct {
	c      *Client
	target int64
}

// ordWaiters wakes publishers waiting for progress: closing ch wakes all;
// n counts waiters so that progress costs one atomic load when none wait.
type ordWaiters struct {
	mu  sync.Mutex
	ch  chan struct{}
	n   atomic.Int32
	gen uint64 // ordCollect's stamps (under Server.mu)
	// The subscribers' sockets in an epoll set (order_linux.go), under
	// Server.mu: epfdp1 is its descriptor + 1 (0: not made yet, or
	// none: FIONREAD for each subscriber), evs the events buffer.
	epfdp1 int
	noPoll bool
	evs    []ordEvent
	// pollSeq numbers the polls of the set (taken before each), and
	// lastNone is the number of the last one that found no socket with
	// input (0: none since the set last grew). A connection notes
	// pollSeq after each read (ordState.stamp): a poll numbered above its
	// note ran after its last read, so a command it read finds the answer
	// of that poll still good (every input that had arrived before its
	// own was then read, and what is read is seen by the read counts).
	pollSeq  atomic.Uint64
	lastNone uint64
	// The observers' poll of every connection's socket (ordPollAll),
	// under Server.mu: the poll set and each connection's rseq before it.
	pfds  []ordPollFd
	prseq []uint64
	// blockSeen: a blocking command was checked (order_keys.go), under
	// Server.mu: from then on, writes look at their keys.
	blockSeen bool
}

// ordNotify tells waiting publishers a connection made progress, held or
// went away.
func (s *Server) ordNotify() {
	if s.ord.n.Load() == 0 {
		return
	}
	s.ord.mu.Lock()
	if s.ord.ch != nil {
		close(s.ord.ch)
		s.ord.ch = nil
	}
	s.ord.mu.Unlock()
}

// ordHold marks c's goroutine as waiting for something other than mu
// (d = 1) or back (d = -1).
func (s *Server) ordHold(c *Client, d int32) {
	c.ord.hold.Add(d)
	if d > 0 {
		s.ordNotify()
	}
}

// ordSettle is called by c's loop after a batch: everything read so far
// that forms complete commands has run.
func (s *Server) ordSettle(c *Client) {
	c.ord.settled.Store(c.ord.in.Load())
	s.ordNotify()
}

// ordPending reports whether y has input that arrived and has not run,
// and the settled count that covers it. Called with mu held.
func (s *Server) ordPending(y *Client) (target int64, pending bool) {
	o := &y.ord
	if o.fdp1 == 0 || o.hold.Load() > 0 || y.killed.Load() {
		return 0, false
	}
	for {
		// A consistent pair (bytes read, bytes queued): no read of
		// the socket overlapped the look at the kernel's queue.
		s1 := o.rseq.Load()
		if s1&1 != 0 {
			runtime.Gosched() // a non-blocking read in progress
			continue
		}
		in := o.in.Load()
		queued := sockInq(o.fdp1 - 1)
		if o.rseq.Load() != s1 {
			continue
		}
		if y.killed.Load() { // closed: the descriptor may be another socket's now
			return 0, false
		}
		target = in + queued
		return target, target > o.settled.Load()
	}
}

// done reports whether x's wait for y (o is y's state) is over.
func (o *ordState) done(x, y *Client, target int64) bool {
	if y.killed.Load() || y.replRole.Load() != 0 {
		return true
	}
	if target == ordUntilGone {
		return o.hold.Load() > 0
	}
	if o.waitBlk.Load() && ordBlkFirst(y, x) {
		return false // a blocking command waits to run: it goes first (order_keys.go)
	}
	return target == ordAfterStash || o.settled.Load() >= target || o.hold.Load() > 0
}

// ordBlkFirst reports whether y's blocking command, waiting to run
// (ordState.waitBlk), goes before x's command: always before anything
// but another blocking command waiting; of two, each having found the
// other's input pending, neither can tell which arrived first, and the
// connection that came first goes first (lower id: a test's first
// deferred client, list.tcl's "BRPOPLPUSH with multiple blocked
// clients").
func ordBlkFirst(y, x *Client) bool {
	return !x.ord.waitBlk.Load() || y.id < x.id
}

// ordAfterStash is the target of a wait for a blocking command waiting to
// run (ordState.waitBlk): until it has run.
const ordAfterStash = -2

// ordUntilGone is the target of a wait for a connection whose peer closed
// (ordCollectAll): until its goroutine has seen the close and unlinked it.
const ordUntilGone = -3

// What a top-level command's arrival order depends on (ordSensitive).
const (
	ordNone   = iota
	ordPubsub // the subscriptions it reads: their subscribers' input
	ordAll    // every connection's input (ordObservers)
	ordBlock  // ordAll for a blocking command (order_keys.go)
)

// ordSensitive reports whether a top-level command reads subscriptions
// that arrival order decides (ordPubsub), or observes or changes what
// any other connection's command did or will see (ordAll: ordObservers).
// GET, SET and the other commands of the hot path are never ordered: the
// switch on the name's length leaves them at one comparison.
func ordSensitive(args [][]byte) int {
	switch len(args[0]) {
	case 4:
		if asciiEqualFold(args[0], "info") {
			return ordAll
		}
	case 6:
		switch {
		case asciiEqualFold(args[0], "pubsub"):
			if len(args) > 1 {
				return ordPubsub
			}
		case asciiEqualFold(args[0], "swapdb"):
			return ordAll
		case asciiEqualFold(args[0], "client"):
			if len(args) > 1 && ordClientSub(args[1]) {
				return ordAll
			}
		}
	case 7:
		switch {
		case asciiEqualFold(args[0], "publish"):
			return ordPubsub
		case asciiEqualFold(args[0], "flushdb"):
			return ordAll
		}
	case 8:
		switch {
		case asciiEqualFold(args[0], "spublish"):
			return ordPubsub
		case asciiEqualFold(args[0], "flushall"):
			return ordAll
		}
	}
	return ordNone
}

// ordClientSub: the CLIENT subcommands that look at or act on other
// connections.
func ordClientSub(sub []byte) bool {
	return asciiEqualFold(sub, "list") || asciiEqualFold(sub, "kill") ||
		asciiEqualFold(sub, "unblock") || asciiEqualFold(sub, "pause")
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != lower[i] {
			return false
		}
	}
	return true
}

// ordCollect lists, in c.ord.list, the connections the command reads the
// subscriptions of that have input pending, and reports whether there are
// any. Called with mu held.
//
// The subscribers are listed first; when there are any, one epoll_wait
// on the subscribers' set tells whose sockets have input queued, before
// their read counts are looked at (a subscriber not ready then had read
// everything that had arrived).
func (s *Server) ordCollect(c *Client, args [][]byte, kind int) bool {
	if kind == ordAll || kind == ordBlock {
		return s.ordCollectAll(c, kind == ordBlock)
	}
	s.ord.gen++
	gen := s.ord.gen
	list := c.ord.list[:0]
	add := func(subs map[*Client]struct{}) {
		for y := range subs {
			if y == c || y.ord.mark == gen || y.ord.fdp1 == 0 {
				continue
			}
			y.ord.mark = gen
			list = append(list, ordWaitFor{c: y})
		}
	}
	addAll := func(m map[string]map[*Client]struct{}) {
		for _, subs := range m {
			add(subs)
		}
	}
	p := &s.pubsub
	switch {
	case asciiEqualFold(args[0], "publish"):
		if len(args) != 3 {
			break
		}
		add(p.channels[string(args[1])])
		for pat, subs := range p.patterns {
			if redisutil.StringMatch(pat, args[1], false) {
				add(subs)
			}
		}
	case asciiEqualFold(args[0], "spublish"):
		if len(args) == 3 {
			add(p.shard[string(args[1])])
		}
	default: // PUBSUB
		switch sub := args[1]; {
		case asciiEqualFold(sub, "numsub"):
			for _, ch := range args[2:] {
				add(p.channels[string(ch)])
			}
		case asciiEqualFold(sub, "shardnumsub"):
			for _, ch := range args[2:] {
				add(p.shard[string(ch)])
			}
		case asciiEqualFold(sub, "numpat"):
			addAll(p.patterns)
		case asciiEqualFold(sub, "channels"):
			addAll(p.channels)
		case asciiEqualFold(sub, "shardchannels"):
			addAll(p.shard)
		}
	}
	if len(list) == 0 {
		c.ord.list = list
		return false
	}
	// Which sockets have input queued (target -1 marks them).
	polled := false
	if s.ord.epfdp1 != 0 && c.ord.stamp < s.ord.lastNone {
		polled = true // a poll after c's last read found nothing queued
	} else if s.ord.epfdp1 != 0 {
		if s.ord.evs == nil {
			s.ord.evs = make([]ordEvent, 64)
		}
		seq := s.ord.pollSeq.Add(1)
		if n, ok := ordEpollReady(s.ord.epfdp1, s.ord.evs); ok {
			polled = true
			if n == 0 {
				s.ord.lastNone = seq
			}
			for _, ev := range s.ord.evs[:n] {
				for i := range list {
					if list[i].c.ord.fdp1 == int(ev.Fd)+1 {
						list[i].target = -1 // queued input
					}
				}
			}
		}
	}
	out := list[:0]
	for _, w := range list {
		y := w.c
		if y.ord.hold.Load() > 0 || y.killed.Load() || y.replRole.Load() != 0 {
			continue // cannot go on by itself, gone, or a replica link now
		}
		if polled && w.target != -1 && y.ord.polled && y.ord.rseq.Load()&1 == 0 {
			// Nothing was queued, and no read was taking it (a read
			// in flight then would still be: rseq odd): what it has
			// read and not settled.
			if in := y.ord.in.Load(); in > y.ord.settled.Load() {
				out = append(out, ordWaitFor{y, in})
			}
			continue
		}
		if t, ok := s.ordPending(y); ok {
			out = append(out, ordWaitFor{y, t})
		}
	}
	return c.ord.keep(list, out)
}

// ordCollectAll is ordCollect for an observer (ordAll): every other
// connection read raw, each looked at with FIONREAD (a system call per
// connection: the observers are admin commands, not the hot path), and
// the blocking commands waiting to run (ordState.waitBlk) that go before
// c's command (ordBlkFirst; blk: it is a blocking command too). Called
// with mu held.
func (s *Server) ordCollectAll(c *Client, blk bool) bool {
	list := c.ord.list[:0]
	s.clientsMu.Lock()
	if len(s.clients) > ordAllMaxConns {
		s.clientsMu.Unlock()
		return false
	}
	for _, y := range s.clients {
		if y != c && y.ord.fdp1 != 0 {
			list = append(list, ordWaitFor{c: y})
		}
	}
	s.clientsMu.Unlock()
	polled := s.ordPollAll(list)
	out := list[:0]
	for i, w := range list {
		y := w.c
		if y.replRole.Load() != 0 || y.ldbDetached.Load() {
			continue // a replication link, or its socket handed to a child
		}
		if y.ord.waitBlk.Load() && !y.killed.Load() {
			if !blk || y.id < c.id { // ordBlkFirst, c not waiting yet
				out = append(out, ordWaitFor{y, ordAfterStash})
			}
			continue
		}
		var t int64
		var ok bool
		if polled {
			t, ok = s.ordPolled(y, s.ord.pfds[i].Revents, s.ord.prseq[i])
		} else {
			t, ok = s.ordPending(y)
		}
		if ok {
			out = append(out, ordWaitFor{y, t})
		}
	}
	return c.ord.keep(list, out)
}

// ordPollAll looks at the sockets of list at once (one ppoll, order_linux.go)
// for input or an end queued, into s.ord.pfds, and reports whether it
// could. Each connection's rseq is noted first (s.ord.prseq): ordPolled
// takes the read count of one found with nothing queued and not read
// since as its target without a FIONREAD of its own. Called with mu held.
func (s *Server) ordPollAll(list []ordWaitFor) bool {
	fds, seqs := s.ord.pfds[:0], s.ord.prseq[:0]
	for _, w := range list {
		ackBigArg(w.c)
		seqs = append(seqs, w.c.ord.rseq.Load())
		fds = append(fds, ordPollFd{Fd: int32(w.c.ord.fdp1 - 1), Events: pollIn | pollRdHup})
	}
	s.ord.pfds, s.ord.prseq = fds, seqs
	return ordPoll(fds)
}

// ackBigArg sends at once the acknowledgement the kernel may be holding
// back (delayed ACK, up to 40 ms) for a connection in the middle of a big
// argument (mu held: the buffer model's pending bulk). Its peer may be
// waiting for the window it opens to send the rest, or the FIN of a close
// that arrived before the command looking: a client that sent 3 MB and
// closed (client-eviction.tcl's "client no-evict off", whose close
// reached the server after the next connection's first command in about
// one run of four). On loopback the FIN then comes in before the look.
func ackBigArg(y *Client) {
	if y.bm.pendBulk >= protoMBulkBigArg && !y.unix && !y.killed.Load() {
		sockQuickAck(y.ord.fdp1 - 1)
	}
}

// ordPolled is ordPending for a connection ordPollAll looked at: revents
// is what its socket had queued, s1 its rseq before. A connection whose
// peer closed (or reset) is waited for until its goroutine has seen the
// end and unlinked it (ordUntilGone): redis-server reads the end of file,
// and frees the client, before a command that arrived after it runs, so
// INFO's connected_clients, CLIENT LIST and the clients' memory
// (maxmemory-clients) no longer count it. Called with mu held.
func (s *Server) ordPolled(y *Client, revents int16, s1 uint64) (target int64, pending bool) {
	o := &y.ord
	if o.hold.Load() > 0 || y.killed.Load() {
		return 0, false
	}
	switch {
	case revents&(pollRdHup|pollHup|pollErr|pollNval) != 0:
		if y.killed.Load() { // closed since: the descriptor may be another socket's
			return 0, false
		}
		return ordUntilGone, true
	case revents&pollIn == 0 && s1&1 == 0:
		// Nothing was queued at the poll: unless a read began since,
		// what it has read is everything that had arrived.
		in := o.in.Load()
		if o.rseq.Load() == s1 {
			return in, in > o.settled.Load()
		}
	}
	return s.ordPending(y)
}

// ordPollFd is struct pollfd; the poll bits are Linux's (ordPoll fails
// elsewhere).
type ordPollFd struct {
	Fd      int32
	Events  int16
	Revents int16
}

const (
	pollIn    = 0x1
	pollErr   = 0x8
	pollHup   = 0x10
	pollNval  = 0x20
	pollRdHup = 0x2000
)

// keep makes out, a prefix of list's storage, the client's wait list, and
// clears the entries past it so that they do not keep clients alive. It
// reports whether there is anyone to wait for.
func (o *ordState) keep(list, out []ordWaitFor) bool {
	for i := len(out); i < len(list); i++ {
		list[i].c = nil
	}
	o.list = out
	return len(out) > 0
}

// ordSubsChanged keeps c's socket in the subscribers' epoll set while it
// has subscriptions (under mu; after any change of them).
func (s *Server) ordSubsChanged(c *Client) {
	want := len(c.subs)+len(c.psubs)+len(c.ssubs) > 0 && c.ord.fdp1 != 0 && !c.killed.Load()
	if want == c.ord.polled {
		return
	}
	if want && s.ord.epfdp1 == 0 {
		if s.ord.noPoll {
			return
		}
		if s.ord.epfdp1 = ordEpollCreate(); s.ord.epfdp1 == 0 {
			s.ord.noPoll = true
			return
		}
	}
	if !want && c.killed.Load() {
		// Killed: the socket may be closed (and its descriptor another
		// socket's): the close takes it out of the set.
		c.ord.polled = false
		return
	}
	ordEpollCtl(s.ord.epfdp1, c.ord.fdp1-1, want)
	c.ord.polled = want
	if want {
		s.ord.lastNone = 0 // the polls before did not look at this socket
	}
}

// ordClose closes the epoll set (Run's end).
func (s *Server) ordClose() {
	s.mu.Lock()
	if s.ord.epfdp1 != 0 {
		ordEpollClose(s.ord.epfdp1)
		s.ord.epfdp1 = 0
	}
	s.mu.Unlock()
}

// stash keeps a copy of the command that waits (its arguments alias the
// query buffer) and marks the client as waiting: under mu, so that a
// publisher that waits is never waited for and waits form no cycle.
func (o *ordState) stash(args [][]byte) {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, 0, n)
	o.cmd = make([][]byte, len(args))
	for i, a := range args {
		buf = append(buf, a...)
		o.cmd[i] = buf[len(buf)-len(a) : len(buf) : len(buf)]
	}
	o.hold.Add(1)
}

// ordAllMax bounds an observer's wait (ordAll): it looks at every
// connection, so a connection stalled in a way ordState.hold does not
// mark (none is known) must not keep INFO from answering. A connection
// that runs a long command holds mu, which the observer waits for anyway.
const ordAllMax = time.Second

// ordAllMaxConns bounds the observers' look at every connection (ppoll,
// FIONREADs) under mu: past it INFO and the other observers answer at
// once, as Redis's own order is not strict either (epoll's order of ready
// sockets).
const ordAllMaxConns = 1024

// ordWait is runBatch's wait between two batch parts (no lock held, the
// replies so far written): until every connection of c.ord.list settled
// what had arrived at the check, or cannot go on by itself (it holds, is
// killed or gone), or a script has run past the busy threshold (the
// command is then answered -BUSY by serveBusy, as Redis would). Its
// subscribers go on reading and running meanwhile.
func (s *Server) ordWait(c *Client) {
	list := c.ord.list
	s.ord.n.Add(1)
	var capC <-chan time.Time // an observer's bound (ordAllMax)
	if c.ord.all {
		capT := time.NewTimer(ordAllMax)
		defer capT.Stop()
		capC = capT.C
	}
wait:
	for {
		s.ord.mu.Lock()
		if s.ord.ch == nil {
			s.ord.ch = make(chan struct{})
		}
		ch := s.ord.ch
		s.ord.mu.Unlock()
		all := true
		for _, w := range list {
			if !w.c.ord.done(c, w.c, w.target) {
				all = false
				break
			}
		}
		if all {
			break
		}
		b := s.loadBusy()
		if b == nil || b.limit <= 0 {
			select {
			case <-ch:
			case <-capC:
				break wait
			}
			continue
		}
		// A script runs: it holds mu, so the subscribers wait for it
		// (a subscriber may be the one running it). Wait until it ends
		// or reaches the busy threshold, when serveBusy answers the
		// command; checked as lockBatch does (the threshold is on the
		// server's clock).
		if b.over(s.clock.Now()) {
			break
		}
		t := time.NewTimer(5 * time.Millisecond)
		select {
		case <-ch:
		case <-b.doneCh():
		case <-t.C:
		case <-capC:
			t.Stop()
			break wait
		}
		t.Stop()
	}
	s.ord.n.Add(-1)
	for i := range list {
		list[i].c = nil // do not keep gone clients alive
	}
	c.ord.list = list[:0]
	c.ord.hold.Add(-1)
}
