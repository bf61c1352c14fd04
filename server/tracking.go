package server

import (
	"math/bits"
	"sort"
	"strconv"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Client-side caching, as tracking.c and networking.c's CLIENT TRACKING,
// CACHING, GETREDIR and TRACKINGINFO of Redis 7.0.15.
//
// A tracking client's reads remember their keys in one table (keys are
// not per database, as in Redis): key -> the ids of the clients that may
// cache it. A modified key (touchWatched: signalModifiedKey, and expiry,
// eviction) is dropped from the table and each of those clients gets an
// invalidation: a RESP3 push "invalidate" [key], or, redirected to a
// client subscribed in RESP2, a message on __redis__:invalidate. BCAST
// clients get, after each batch, the keys modified under their prefixes.
// Invalidations for the client running a command wait until its
// top-level command ends (trackingHandlePendingKeyInvalidations), so they
// follow its reply (after EXEC's, after EVAL's); those raised before it
// runs (tracking-table-max-keys, eviction in processCommand) go at once,
// before its reply, as 7.0.15 does (CLIENT_EXECUTING_COMMAND). FLUSHDB and FLUSHALL send
// a null to every tracking client. All state is guarded by Server.mu.

// trackingClient is a client's tracking flags and options (CLIENT_TRACKING*),
// parsed and answered in internal/netshell (shared with vigil-sentinel).
type trackingClient = netshell.Tracking

// bcastState is a BCAST prefix: the keys modified under it since the last
// broadcast (each with the client that modified it last, nil for expiry
// and eviction) and the clients listening.
type bcastState struct {
	keys    map[string]*Client
	clients map[*Client]struct{}
}

// pendingInvalidation is an invalidation for the running client, sent
// once its command ends: a key, or all keys (a flush).
type pendingInvalidation struct {
	c    *Client
	key  string
	null bool
}

type trackingState struct {
	byClient map[*Client]*trackingClient // the tracking clients (tracking_clients)
	// table is TrackingTable: nil until a client first enables tracking.
	table    map[string]map[int64]struct{}
	items    int64 // TrackingTableTotalItems
	prefixes map[string]*bcastState
	pending  []pendingInvalidation
	// bcastDirty: some prefix has keys to broadcast.
	bcastDirty bool
	// limitRuns is trackingLimitUsedSlots' timeout_counter.
	limitRuns int
	// callerCmd and callerArgs are the command a client (not the scripting
	// client) is running: a script's reads remember the keys of its caller's
	// command, as 7.0's trackingRememberKeys(caller) does.
	callerCmd  *Command
	callerArgs [][]byte
}

// active reports whether any client tracks (server.tracking_clients).
func (t *trackingState) active() bool { return len(t.byClient) != 0 }

// keysOrPrefixes reports whether a modified key may have to be
// invalidated: the table holds keys or a BCAST client has prefixes. A
// write costs two length tests otherwise.
func (t *trackingState) keysOrPrefixes() bool { return len(t.table) != 0 || len(t.prefixes) != 0 }

const trackingChannel = "__redis__:invalidate"

// cmdClientTracking is CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]...
// [BCAST] [OPTIN] [OPTOUT] [NOLOOP] (netshell.ParseTracking).
func cmdClientTracking(c *Client, args [][]byte) {
	s := c.srv
	a, ok := netshell.ParseTracking(&c.w, args, s.tracking.byClient[c], func(id int64) bool { return s.clientByID(id) != nil })
	if !ok {
		return
	}
	if a.On {
		s.enableTracking(c, a)
	} else {
		s.disableTracking(c)
	}
	c.w.OK()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// enableTracking is enableTracking: the options replace the old ones (the
// BCAST prefixes add to them).
func (s *Server) enableTracking(c *Client, a netshell.TrackingArgs) {
	t := &s.tracking
	if t.byClient == nil {
		t.byClient = map[*Client]*trackingClient{}
	}
	if t.table == nil {
		t.table = map[string]map[int64]struct{}{}
		t.prefixes = map[string]*bcastState{}
	}
	tc, added := t.byClient[c].Enable(a)
	t.byClient[c] = tc
	for _, p := range added {
		bs := t.prefixes[p]
		if bs == nil {
			bs = &bcastState{keys: map[string]*Client{}, clients: map[*Client]struct{}{}}
			t.prefixes[p] = bs
		}
		bs.clients[c] = struct{}{}
	}
}

// disableTracking is disableTracking (CLIENT TRACKING OFF, RESET, a
// client's end): the client leaves its prefixes; its ids in the table go
// lazily, when their keys are invalidated.
func (s *Server) disableTracking(c *Client) {
	t := &s.tracking
	tc := t.byClient[c]
	if tc == nil {
		return
	}
	for p := range tc.Prefixes {
		if bs := t.prefixes[p]; bs != nil {
			delete(bs.clients, c)
			if len(bs.clients) == 0 {
				delete(t.prefixes, p)
			}
		}
	}
	delete(t.byClient, c)
	kept := t.pending[:0]
	for _, p := range t.pending {
		if p.c != c {
			kept = append(kept, p)
		}
	}
	t.pending = kept
}

// cmdClientCaching is CLIENT CACHING YES|NO.
func cmdClientCaching(c *Client, args [][]byte) {
	netshell.Caching(&c.w, c.srv.tracking.byClient[c], args[2])
}

// cmdClientGetRedir is CLIENT GETREDIR.
func cmdClientGetRedir(c *Client, args [][]byte) {
	netshell.GetRedir(&c.w, c.srv.tracking.byClient[c])
}

// cmdClientTrackingInfo is CLIENT TRACKINGINFO.
func cmdClientTrackingInfo(c *Client, args [][]byte) {
	netshell.TrackingInfo(&c.w, c.srv.tracking.byClient[c])
}

// trackingFlags appends CLIENT LIST's tracking flags (t, R, B).
func (s *Server) trackingFlags(b []byte, cl *Client) []byte {
	return netshell.TrackingFlags(b, s.tracking.byClient[cl])
}

// trackingBeforeExec notes the command a client runs, for the reads of a
// script it runs (trackingAfterRead). Called only while clients track.
func (s *Server) trackingBeforeExec(c *Client, cmd *Command, args [][]byte) {
	if !c.inScript {
		s.tracking.callerCmd, s.tracking.callerArgs = cmd, args
	}
}

// trackingAfterRead is call()'s trackingRememberKeys after a read-only
// command: the keys it read are remembered for the client (for a script's
// command, for the script's caller, with the keys of the caller's command).
// EVAL_RO, EVALSHA_RO and FCALL_RO remember nothing themselves.
func (s *Server) trackingAfterRead(c *Client, cmd *Command, args [][]byte) {
	switch cmd.FullName() {
	case "eval_ro", "evalsha_ro", "fcall_ro":
		return
	}
	t := &s.tracking
	tracker := c
	if c.inScript {
		tracker = s.current
		cmd, args = t.callerCmd, t.callerArgs
		if tracker == nil || cmd == nil {
			return
		}
	}
	tc := t.byClient[tracker]
	if tc == nil || tc.BCast {
		return
	}
	if (tc.OptIn && !tc.Caching) || (tc.OptOut && tc.Caching) {
		return
	}
	if cmd.Has(FlagPubSub) {
		return
	}
	keys, _ := commandKeyRefs(cmd, args)
	for _, k := range keys {
		key := string(args[k.pos])
		ids := t.table[key]
		if ids == nil {
			ids = map[int64]struct{}{}
			t.table[key] = ids
		}
		if _, ok := ids[tracker.id]; !ok {
			ids[tracker.id] = struct{}{}
			t.items++
		}
	}
}

// trackingAfterCommand is resetClient's part: CLIENT CACHING applies to
// the next command (or transaction) only.
func (s *Server) trackingAfterCommand(c *Client, args [][]byte) {
	tc := s.tracking.byClient[c]
	// resetClient keeps CLIENT_TRACKING_CACHING after a command whose proc
	// is clientCommand: a CLIENT subcommand that was found, even when its
	// arity was wrong; a bare CLIENT (the container) or an unknown
	// subcommand clears it.
	if tc == nil || !tc.Caching || c.multi != nil {
		return
	}
	if r := c.resolved; r != nil && r.Parent() != nil && r.Parent().Name == "client" {
		return
	}
	tc.Caching = false
}

// trackingInvalidateKey is trackingInvalidateKey: key was modified (by
// modifier, nil for expiry and eviction); bcast also records it for the
// BCAST prefixes it falls under.
func (s *Server) trackingInvalidateKey(modifier *Client, key []byte, bcast bool) {
	t := &s.tracking
	if t.table == nil {
		return
	}
	if bcast && len(t.prefixes) != 0 {
		for p, bs := range t.prefixes {
			if len(p) <= len(key) && string(key[:len(p)]) == p {
				bs.keys[string(key)] = modifier
				t.bcastDirty = true
			}
		}
	}
	ids, ok := t.table[string(key)]
	if !ok {
		return
	}
	// The ids in the order of Redis's radix tree of 8-byte ids in memory
	// order (little-endian).
	order := make([]int64, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Slice(order, func(i, j int) bool {
		return bits.ReverseBytes64(uint64(order[i])) < bits.ReverseBytes64(uint64(order[j]))
	})
	for _, id := range order {
		target := s.clientByID(id)
		if target == nil {
			continue
		}
		tc := t.byClient[target]
		if tc == nil || tc.BCast {
			continue
		}
		if tc.NoLoop && target == s.current {
			continue
		}
		if target == s.current && s.execDepth > 0 { // CLIENT_EXECUTING_COMMAND
			t.pending = append(t.pending, pendingInvalidation{c: target, key: string(key)})
			continue
		}
		s.sendTracking(target, tc, keyPayload(nil, key))
	}
	t.items -= int64(len(ids))
	delete(t.table, string(key))
}

// keyPayload is an invalidation's [key].
func keyPayload(b, key []byte) []byte {
	b = append(b, "*1\r\n$"...)
	b = strconv.AppendInt(b, int64(len(key)), 10)
	b = append(b, "\r\n"...)
	b = append(b, key...)
	return append(b, "\r\n"...)
}

// nullPayload is shared.null of the tracking client's protocol.
func nullPayload(c *Client) []byte {
	if c.w.Proto > 2 {
		return []byte("_\r\n")
	}
	return []byte("$-1\r\n")
}

// sendTracking is sendTrackingMessage: payload (the invalidated keys, or
// a null) to c or to the client it redirects to. A redirection whose
// client is gone sets broken_redirect and tells c (RESP3 only).
func (s *Server) sendTracking(c *Client, tc *trackingClient, payload []byte) {
	target, redirected := c, false
	if tc.Redir != 0 {
		r := s.clientByID(tc.Redir)
		if r == nil {
			tc.BrokenRedir = true
			if c.w.Proto > 2 {
				b := []byte(">2\r\n$21\r\ntracking-redir-broken\r\n:")
				b = strconv.AppendInt(b, tc.Redir, 10)
				s.deliver(c, append(b, "\r\n"...))
			}
			return
		}
		target, redirected = r, true
	}
	var b []byte
	switch {
	case target.w.Proto > 2:
		b = append(b, ">2\r\n$10\r\ninvalidate\r\n"...)
	case redirected && target.kind() == kindPubSub:
		b = append(b, "*3\r\n$7\r\nmessage\r\n$20\r\n"+trackingChannel+"\r\n"...)
	default:
		return // RESP2 without a redirection: nowhere to send it
	}
	s.deliver(target, append(b, payload...))
}

// trackingHandlePending is trackingHandlePendingKeyInvalidations: the
// invalidations for the client that ran the command, once its top-level
// command has replied.
func (s *Server) trackingHandlePending() {
	t := &s.tracking
	pending := t.pending
	t.pending = nil
	for _, p := range pending {
		tc := t.byClient[p.c]
		if tc == nil || p.c.killed.Load() {
			continue
		}
		if p.null {
			s.sendTracking(p.c, tc, nullPayload(p.c))
		} else {
			s.sendTracking(p.c, tc, keyPayload(nil, []byte(p.key)))
		}
	}
}

// trackingFlush is trackingInvalidateKeysOnFlush (FLUSHDB, FLUSHALL and
// the other emptyData): every tracking client is told that all its keys
// are invalid, and the table is emptied. With async (a lazy flush) a
// table of more than 64 radix tree nodes is freed by the lazyfree thread
// in Redis (freeTrackingRadixTreeAsync): its keys count in
// lazyfreed_objects.
func (s *Server) trackingFlush(async bool) {
	t := &s.tracking
	if len(t.byClient) != 0 {
		for _, c := range s.clientsByID() {
			tc := t.byClient[c]
			if tc == nil {
				continue
			}
			if c == s.current {
				t.pending = append(t.pending, pendingInvalidation{c: c, null: true})
				continue
			}
			s.sendTracking(c, tc, nullPayload(c))
		}
	}
	if t.table != nil {
		// Every key ends at a node of its own: more than 64 keys are
		// more than 64 nodes; fewer may be too.
		if n := len(t.table); async && n > 0 && (n > keyspace.LazyfreeThreshold || raxNodes(t.table) > keyspace.LazyfreeThreshold) {
			s.stats.lazyfreed += uint64(n)
		}
		t.table = map[string]map[int64]struct{}{}
		t.items = 0
	}
}

// raxNodes is the numnodes of a rax holding keys (Redis's rax.c, the
// tracking table): its root, and one node at each position of the keys'
// trie where a node starts: the children of a position with two or more
// next bytes each start one; a position with one starts a compressed node
// running to the next position that ends a key or branches. That is the
// tree insertions build; removals recompress it to the same shape.
func raxNodes(table map[string]map[int64]struct{}) int {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return raxCount(keys, 0)
}

// raxCount counts the nodes of the subtree whose node starts at depth d,
// keys (sorted, sharing their first d bytes) being its keys.
func raxCount(keys []string, d int) int {
	if len(keys) > 0 && len(keys[0]) == d { // a key ends here (sorted first)
		keys = keys[1:]
	}
	if len(keys) == 0 {
		return 1
	}
	first, last := keys[0], keys[len(keys)-1]
	if first[d] != last[d] { // branches: a child node per next byte
		n := 1
		for i := 0; i < len(keys); {
			j := i + 1
			for j < len(keys) && keys[j][d] == keys[i][d] {
				j++
			}
			n += raxCount(keys[i:j], d+1)
			i = j
		}
		return n
	}
	// One next byte: compressed up to the common prefix's end or the
	// first key that ends on the way (the shortest, sorted first).
	q := d + 1
	for q < len(first) && q < len(last) && first[q] == last[q] {
		q++
	}
	return 1 + raxCount(keys, q)
}

// trackingLimitUsedSlots is trackingLimitUsedSlots: over
// tracking-table-max-keys, random keys are invalidated (as if modified),
// with more effort each time the table is still over after a run.
func (s *Server) trackingLimitUsedSlots() {
	t := &s.tracking
	max := s.cfg.TrackingTableMaxKeys
	if t.table == nil || max == 0 {
		return
	}
	if int64(len(t.table)) <= max {
		t.limitRuns = 0
		return
	}
	effort := 100 * (t.limitRuns + 1)
	for key := range t.table { // Go's map order is random
		if effort == 0 {
			break
		}
		effort--
		s.trackingInvalidateKey(nil, []byte(key), false)
		if int64(len(t.table)) <= max {
			t.limitRuns = 0
			return
		}
	}
	t.limitRuns++
}

// trackingBroadcast is trackingBroadcastInvalidationMessages, run after
// each batch (Redis's beforeSleep) and cron run: every prefix's modified
// keys, in key order, to its clients (without a NOLOOP client's own).
func (s *Server) trackingBroadcast() {
	t := &s.tracking
	if !t.bcastDirty {
		return
	}
	t.bcastDirty = false
	for _, p := range sortedKeys(t.prefixes) {
		bs := t.prefixes[p]
		if len(bs.keys) == 0 {
			continue
		}
		keys := sortedKeys(bs.keys)
		all := bcastPayload(keys, bs.keys, nil)
		clients := make([]*Client, 0, len(bs.clients))
		for c := range bs.clients {
			clients = append(clients, c)
		}
		sort.Slice(clients, func(i, j int) bool { return clients[i].id < clients[j].id })
		for _, c := range clients {
			tc := t.byClient[c]
			if tc == nil {
				continue
			}
			if tc.NoLoop {
				if b := bcastPayload(keys, bs.keys, c); b != nil {
					s.sendTracking(c, tc, b)
				}
				continue
			}
			s.sendTracking(c, tc, all)
		}
		bs.keys = map[string]*Client{}
	}
}

// bcastPayload is trackingBuildBroadcastReply: the keys as an array,
// without those last modified by except (nil when none is left).
func bcastPayload(keys []string, by map[string]*Client, except *Client) []byte {
	n := 0
	for _, k := range keys {
		if except == nil || by[k] != except {
			n++
		}
	}
	if n == 0 && except != nil {
		return nil
	}
	b := []byte("*" + strconv.Itoa(n) + "\r\n")
	for _, k := range keys {
		if except != nil && by[k] == except {
			continue
		}
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(k)), 10)
		b = append(b, "\r\n"...)
		b = append(b, k...)
		b = append(b, "\r\n"...)
	}
	return b
}

// trackingInfo is INFO's tracking_total_keys, _items and _prefixes.
func (s *Server) trackingInfo() (keys, items, prefixes int64) {
	t := &s.tracking
	return int64(len(t.table)), t.items, int64(len(t.prefixes))
}
