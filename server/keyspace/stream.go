package keyspace

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"sync/atomic"
)

// Streams (OBJ_STREAM), as Redis 7.0's t_stream.c and stream.h.
//
// Redis keeps a stream's entries in a radix tree of listpacks ("nodes"),
// keyed by the node's master ID, each beginning with a master entry (the
// fields of the node's first entry, and the node's live and deleted entry
// counts). Entries are never removed from a node: XDEL and XTRIM flag them
// deleted, and a node goes only when its last live entry does. Vigil keeps
// the same nodes, with the same entries (deleted ones included), fields
// (an entry whose fields equal the master entry's keeps only its values,
// STREAM_ITEM_FLAG_SAMEFIELDS) and byte sizes (what lpBytes would say), so
// that where a node ends (stream-node-max-bytes / -entries), what XTRIM ~
// removes, XINFO's radix-tree-keys and the RDB nodes are Redis's.
//
// Each node's entries are packed in one byte slice (StreamNode), so a
// million small entries take about what Redis's listpacks take (RSS 38 MB
// against redis-server's 33 MB for 1 M one-field entries; one Go object
// per entry took 139 MB).
//
// The nodes are a slice ordered by master ID. XADD appends to the last
// node or adds one: amortized O(1). A lookup by ID (XRANGE's start, XDEL)
// is a binary search over the nodes and then within one: O(log N). XTRIM
// removes whole nodes from the front and flags entries in one node: O(M).
// A node emptied in the middle (XDEL) is cut out of the slice, moving one
// pointer per later node (N / stream-node-max-entries pointers).
type Stream struct {
	nodes        []*StreamNode
	length       uint64
	lastID       StreamID
	firstID      StreamID
	maxDeleted   StreamID
	entriesAdded uint64
	groups       *ordMap[string, *StreamCG] // nil until the first group
	bytes        uint64                     // sum of the nodes' lpBytes
}

// StreamID is a stream entry ID, <ms>-<seq>.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is UINT64_MAX-UINT64_MAX.
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Cmp is streamCompareID: -1, 0 or 1.
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms > b.Ms:
		return 1
	case a.Ms < b.Ms:
		return -1
	case a.Seq > b.Seq:
		return 1
	case a.Seq < b.Seq:
		return -1
	}
	return 0
}

// IsZero is streamIDEqZero.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Incr is streamIncrID: the next ID, false (and 0-0) past the last one.
func (a StreamID) Incr() (StreamID, bool) {
	if a.Seq == math.MaxUint64 {
		if a.Ms == math.MaxUint64 {
			return StreamID{}, false
		}
		return StreamID{a.Ms + 1, 0}, true
	}
	return StreamID{a.Ms, a.Seq + 1}, true
}

// Decr is streamDecrID: the previous ID, false (and the max ID) before
// 0-0.
func (a StreamID) Decr() (StreamID, bool) {
	if a.Seq == 0 {
		if a.Ms == 0 {
			return MaxStreamID, false
		}
		return StreamID{a.Ms - 1, math.MaxUint64}, true
	}
	return StreamID{a.Ms, a.Seq - 1}, true
}

// AppendTo appends "<ms>-<seq>".
func (a StreamID) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

// String is "<ms>-<seq>".
func (a StreamID) String() string { return string(a.AppendTo(nil)) }

func cmpID(a, b StreamID) int { return a.Cmp(b) }

// Stream entry flags (STREAM_ITEM_FLAG_*).
const (
	StreamFlagDeleted    = 1
	StreamFlagSameFields = 2
)

// StreamNode is one listpack of the radix tree: the master entry and the
// entries, deleted ones included, in the order they were added. The
// entries are packed in one byte slice (a node holds up to
// stream-node-max-entries of them), each as its flags byte, the uvarint
// differences of its ms and seq to the master ID's (seq's wrapping), then,
// without StreamFlagSameFields, the uvarint field count, and the
// uvarint-length-prefixed fields and values (values only with
// SameFields): a few bytes over the data, as a listpack.
type StreamNode struct {
	Master       StreamID
	MasterFields []string
	Count        int // live entries (the master entry's count)
	Deleted      int // entries flagged deleted
	bytes        int // lpBytes
	data         []byte
	n            int      // entries in data
	last         StreamID // the last entry's ID, deleted or not
}

// StreamEntry is a view of one entry of a node, valid while the node is
// unchanged (an iteration's callback reuses it). With StreamFlagSameFields,
// Vals holds only the values (the fields are the node's MasterFields),
// else field, value pairs; they alias the node's bytes.
type StreamEntry struct {
	ID    StreamID
	Flags int
	Vals  [][]byte
	off   int // the flags byte's offset in the node's data
}

// NumFields is the entry's number of field-value pairs.
func (e *StreamEntry) NumFields() int {
	if e.Flags&StreamFlagSameFields != 0 {
		return len(e.Vals)
	}
	return len(e.Vals) / 2
}

// SameFields reports whether the entry's fields are its node's
// MasterFields.
func (e *StreamEntry) SameFields() bool { return e.Flags&StreamFlagSameFields != 0 }

// Field is the entry's i-th field when it has its own (not SameFields).
func (e *StreamEntry) Field(i int) []byte { return e.Vals[2*i] }

// Value is the entry's i-th value.
func (e *StreamEntry) Value(i int) []byte {
	if e.Flags&StreamFlagSameFields != 0 {
		return e.Vals[i]
	}
	return e.Vals[2*i+1]
}

// Off is the entry's position in its node (for EntryAt).
func (e *StreamEntry) Off() int { return e.off }

// NewStreamNode is an empty node (RDB loading fills it with AppendEntry).
func NewStreamNode(master StreamID, fields []string) *StreamNode {
	return &StreamNode{Master: master, MasterFields: fields}
}

// Len is the node's number of entries, deleted ones included.
func (n *StreamNode) Len() int { return n.n }

// FirstEntryID is the node's first entry's ID, deleted or not.
func (n *StreamNode) FirstEntryID() StreamID {
	var e StreamEntry
	n.decode(0, &e)
	return e.ID
}

// AppendEntry appends an entry (vals as StreamEntry.Vals) without
// touching the counts or bytes.
func (n *StreamNode) AppendEntry(id StreamID, flags int, vals [][]byte) {
	b := append(n.data, byte(flags))
	b = binary.AppendUvarint(b, id.Ms-n.Master.Ms)
	b = binary.AppendUvarint(b, id.Seq-n.Master.Seq)
	if flags&StreamFlagSameFields == 0 {
		b = binary.AppendUvarint(b, uint64(len(vals)/2))
	}
	for _, v := range vals {
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	n.data = b
	n.n++
	n.last = id
}

// decode reads the entry at off into e and returns the next entry's
// offset.
func (n *StreamNode) decode(off int, e *StreamEntry) int {
	d := n.data
	e.off = off
	e.Flags = int(d[off])
	p := off + 1
	msd, k := binary.Uvarint(d[p:])
	p += k
	seqd, k := binary.Uvarint(d[p:])
	p += k
	e.ID = StreamID{n.Master.Ms + msd, n.Master.Seq + seqd}
	nv := len(n.MasterFields)
	if e.Flags&StreamFlagSameFields == 0 {
		nf, k := binary.Uvarint(d[p:])
		p += k
		nv = 2 * int(nf)
	}
	e.Vals = e.Vals[:0]
	for i := 0; i < nv; i++ {
		l, k := binary.Uvarint(d[p:])
		p += k
		e.Vals = append(e.Vals, d[p:p+int(l):p+int(l)])
		p += int(l)
	}
	return p
}

// EntryAt decodes the entry at off (StreamEntry.Off) into e.
func (n *StreamNode) EntryAt(off int, e *StreamEntry) { n.decode(off, e) }

// Walk calls fn on each entry, deleted ones included, in order, while it
// returns true; e is reused from call to call.
func (n *StreamNode) Walk(fn func(e *StreamEntry) bool) {
	var e StreamEntry
	n.walk(&e, fn)
}

func (n *StreamNode) walk(e *StreamEntry, fn func(e *StreamEntry) bool) {
	for off := 0; off < len(n.data); {
		next := n.decode(off, e)
		if !fn(e) {
			return
		}
		off = next
	}
}

// setFlags rewrites an entry's flags (same lpIntSize: 0..3).
func (n *StreamNode) setFlags(e *StreamEntry, flags int) {
	n.bytes += lpIntSize(int64(flags)) - lpIntSize(int64(e.Flags))
	n.data[e.off] = byte(flags)
	e.Flags = flags
}

// StreamCG is a consumer group (streamCG).
type StreamCG struct {
	Name        string
	LastID      StreamID
	EntriesRead int64 // -1: SCG_INVALID_ENTRIES_READ
	PEL         *ordMap[StreamID, *StreamNACK]
	Consumers   *ordMap[string, *StreamConsumer]
}

// StreamConsumer is a group's consumer (streamConsumer).
type StreamConsumer struct {
	Name     string
	SeenTime int64
	PEL      *ordMap[StreamID, *StreamNACK]
}

// StreamNACK is a pending entry (streamNACK): delivered, not acknowledged.
type StreamNACK struct {
	DeliveryTime  int64
	DeliveryCount uint64
	Consumer      *StreamConsumer
}

// NewStream is streamNew.
func NewStream() *Stream {
	if !streamsMade.Load() {
		streamsMade.Store(true)
	}
	return &Stream{}
}

// streamsMade is set once a stream value was made in the process.
var streamsMade atomic.Bool

// StreamsMade reports whether a stream value was ever made in the process
// (NewStream; Dup copies one): until then no key is a stream, and the
// write path needs no look at its keys for one (server/order_keys.go).
func StreamsMade() bool { return streamsMade.Load() }

// Type is TypeStream.
func (s *Stream) Type() Type { return TypeStream }

// Encoding is stream.
func (s *Stream) Encoding() Encoding { return EncodingStream }

// Len is the number of live entries (XLEN).
func (s *Stream) Len() uint64 { return s.length }

// LastID, FirstID, MaxDeletedID and EntriesAdded are the stream's
// last_id, first_id, max_deleted_entry_id and entries_added.
func (s *Stream) LastID() StreamID       { return s.lastID }
func (s *Stream) FirstID() StreamID      { return s.firstID }
func (s *Stream) MaxDeletedID() StreamID { return s.maxDeleted }
func (s *Stream) EntriesAdded() uint64   { return s.entriesAdded }

// SetMeta sets last_id, first_id, max_deleted_entry_id and entries_added
// (RDB load, XSETID).
func (s *Stream) SetMeta(last, first, maxDeleted StreamID, added uint64) {
	s.lastID, s.firstID, s.maxDeleted, s.entriesAdded = last, first, maxDeleted, added
}

// Nodes is the radix tree's listpacks in order. Do not modify them.
func (s *Stream) Nodes() []*StreamNode { return s.nodes }

// NumNodes is raxSize(s->rax).
func (s *Stream) NumNodes() int { return len(s.nodes) }

// --- listpack sizes -------------------------------------------------------------

// lpIntSize is the bytes lpAppendInteger(v) takes (encoding and backlen).
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= -32768 && v <= 32767:
		return 4
	case v >= -8388608 && v <= 8388607:
		return 5
	case v >= -2147483648 && v <= 2147483647:
		return 6
	}
	return 10
}

func (n *StreamNode) entryBytes(e *StreamEntry) int {
	b := lpIntSize(int64(e.Flags)) + lpIntSize(int64(e.ID.Ms-n.Master.Ms)) + lpIntSize(int64(e.ID.Seq-n.Master.Seq))
	lpCount := 3 + len(e.Vals)
	if e.Flags&StreamFlagSameFields == 0 {
		b += lpIntSize(int64(len(e.Vals) / 2))
		lpCount++
	}
	for _, v := range e.Vals {
		b += lpEntrySizeB(v)
	}
	return b + lpIntSize(int64(lpCount))
}

// computeBytes is lpBytes of the node from scratch.
func (n *StreamNode) computeBytes() int {
	b := lpHdrSize + 1 + lpIntSize(int64(n.Count)) + lpIntSize(int64(n.Deleted)) +
		lpIntSize(int64(len(n.MasterFields))) + lpIntSize(0)
	for _, f := range n.MasterFields {
		b += lpEntrySize(f)
	}
	n.Walk(func(e *StreamEntry) bool { b += n.entryBytes(e); return true })
	return b
}

// Bytes is lpBytes: the bytes Redis's listpack for the node takes.
func (n *StreamNode) Bytes() int { return n.bytes }

// setCounts changes the master entry's counts, keeping bytes.
func (n *StreamNode) setCounts(count, deleted int) {
	n.bytes += lpIntSize(int64(count)) - lpIntSize(int64(n.Count)) +
		lpIntSize(int64(deleted)) - lpIntSize(int64(n.Deleted))
	n.Count, n.Deleted = count, deleted
}

// lastEntryID is lpGetEdgeStreamID(lp, 0): the node's last entry, deleted
// or not.
func (n *StreamNode) lastEntryID() StreamID { return n.last }

// --- XADD -----------------------------------------------------------------

// ErrStreamID is streamAppendItem's EDOM: the ID is not greater than the
// stream's last ID (or no ID is left after it).
var ErrStreamID = errors.New("stream ID not greater than the top item")

// ErrStreamTooLarge is its ERANGE: the fields and values take more than a
// listpack may (STREAM_LISTPACK_MAX_SIZE).
var ErrStreamTooLarge = errors.New("stream elements too large")

// streamListpackMaxSize is STREAM_LISTPACK_MAX_SIZE.
const streamListpackMaxSize = 1 << 30

// Add is streamAppendItem: it adds an entry of fv (field, value pairs) and
// returns its ID. useID nil generates the ID from nowMs (streamNextID);
// with seqGiven false, useID's sequence is the next one for its ms
// ("<ms>-*").
func (s *Stream) Add(fv [][]byte, useID *StreamID, seqGiven bool, nowMs int64, cfg EncodingConfig) (StreamID, error) {
	var id StreamID
	switch {
	case useID == nil:
		id = s.nextID(nowMs)
	case seqGiven:
		id = *useID
	case s.lastID.Ms == useID.Ms:
		if s.lastID.Seq == math.MaxUint64 {
			// 7.0.15 sets no errno here: xaddCommand answers ERANGE's
			// text.
			return id, ErrStreamTooLarge
		}
		id = StreamID{s.lastID.Ms, s.lastID.Seq + 1}
	default:
		id = *useID
	}
	if id.Cmp(s.lastID) <= 0 {
		return id, ErrStreamID
	}
	tot := 0
	for _, b := range fv {
		tot += len(b)
	}
	if tot > streamListpackMaxSize {
		return id, ErrStreamTooLarge
	}
	var n *StreamNode
	if len(s.nodes) > 0 {
		n = s.nodes[len(s.nodes)-1]
		maxBytes := cfg.StreamNodeMaxBytes
		if maxBytes <= 0 || maxBytes > streamListpackMaxSize {
			maxBytes = streamListpackMaxSize
		}
		if n.bytes+tot >= maxBytes {
			n = nil
		} else if cfg.StreamNodeMaxEntries > 0 && n.Count+n.Deleted >= cfg.StreamNodeMaxEntries {
			n = nil
		}
	}
	flags := 0
	numFields := len(fv) / 2
	if n == nil {
		n = &StreamNode{Master: id, MasterFields: make([]string, numFields)}
		for i := range numFields {
			n.MasterFields[i] = string(fv[2*i])
		}
		n.bytes = n.computeBytes()
		s.nodes = append(s.nodes, n)
		s.bytes += uint64(n.bytes)
		flags = StreamFlagSameFields
	} else if numFields == len(n.MasterFields) {
		same := true
		for i, f := range n.MasterFields {
			if f != string(fv[2*i]) {
				same = false
				break
			}
		}
		if same {
			flags = StreamFlagSameFields
		}
	}
	vals := fv
	if flags&StreamFlagSameFields != 0 {
		vals = make([][]byte, numFields)
		for i := range numFields {
			vals[i] = fv[2*i+1]
		}
	}
	old := n.bytes
	n.setCounts(n.Count+1, n.Deleted)
	n.AppendEntry(id, flags, vals)
	n.bytes += n.entryBytes(&StreamEntry{ID: id, Flags: flags, Vals: vals})
	s.bytes += uint64(n.bytes - old)
	s.length++
	s.entriesAdded++
	s.lastID = id
	if s.length == 1 {
		s.firstID = id
	}
	return id, nil
}

// nextID is streamNextID.
func (s *Stream) nextID(nowMs int64) StreamID {
	ms := uint64(nowMs)
	if ms > s.lastID.Ms {
		return StreamID{ms, 0}
	}
	id, _ := s.lastID.Incr()
	return id
}

// --- lookups and iteration --------------------------------------------------------

// nodeFor is the index of the node that may hold id: the last whose master
// ID is <= id (0 when none is).
func (s *Stream) nodeFor(id StreamID) int {
	i := sort.Search(len(s.nodes), func(i int) bool { return s.nodes[i].Master.Cmp(id) > 0 })
	if i > 0 {
		i--
	}
	return i
}

// Range calls fn on the live entries from start to end (inclusive), in
// order or, with rev, in reverse, while fn returns true (the stream
// iterator). fn must not change the stream.
//
// As streamIteratorGetID, a node is walked entry by entry from its start
// (a node holds at most stream-node-max-entries): a deleted entry is
// skipped whatever its ID, and the walk ends at the first live entry past
// the range. A node's entries are in ID order except after an XSETID below
// a deleted tail entry, which Redis allows; the walk gives Redis's answer
// then too.
func (s *Stream) Range(start, end StreamID, rev bool, fn func(n *StreamNode, e *StreamEntry) bool) {
	if len(s.nodes) == 0 {
		return
	}
	var e StreamEntry
	if !rev {
		for ni := s.nodeFor(start); ni < len(s.nodes); ni++ {
			n := s.nodes[ni]
			stop := false
			n.walk(&e, func(e *StreamEntry) bool {
				if e.Flags&StreamFlagDeleted != 0 || e.ID.Cmp(start) < 0 {
					return true
				}
				if e.ID.Cmp(end) > 0 || !fn(n, e) {
					stop = true
					return false
				}
				return true
			})
			if stop {
				return
			}
		}
		return
	}
	// Backwards: a node's entries are decoded forwards, their offsets
	// kept, then visited in reverse.
	var offs []int
	for ni := s.nodeFor(end); ni >= 0; ni-- {
		n := s.nodes[ni]
		offs = offs[:0]
		n.walk(&e, func(e *StreamEntry) bool { offs = append(offs, e.off); return true })
		for j := len(offs) - 1; j >= 0; j-- {
			n.decode(offs[j], &e)
			if e.Flags&StreamFlagDeleted != 0 || e.ID.Cmp(end) > 0 {
				continue
			}
			if e.ID.Cmp(start) < 0 || !fn(n, &e) {
				return
			}
		}
	}
}

// findLive is the node index of the live entry id and the entry, if
// present.
func (s *Stream) findLive(id StreamID, e *StreamEntry) (int, bool) {
	if len(s.nodes) == 0 {
		return 0, false
	}
	ni := s.nodeFor(id)
	found := false
	s.nodes[ni].walk(e, func(e *StreamEntry) bool {
		found = e.ID == id && e.Flags&StreamFlagDeleted == 0
		return !found
	})
	return ni, found
}

// Exists is streamEntryExists: id is a live entry.
func (s *Stream) Exists(id StreamID) bool {
	var e StreamEntry
	_, ok := s.findLive(id, &e)
	return ok
}

// EdgeID is streamGetEdgeID(first, skip_tombstones=1): the first (or
// last) live entry's ID; on an empty stream the max ID (first) or 0-0.
func (s *Stream) EdgeID(first bool) StreamID {
	var id StreamID
	found := false
	if first {
		s.Range(StreamID{}, MaxStreamID, false, func(_ *StreamNode, e *StreamEntry) bool { id, found = e.ID, true; return false })
		if !found {
			return MaxStreamID
		}
	} else {
		s.Range(StreamID{}, MaxStreamID, true, func(_ *StreamNode, e *StreamEntry) bool { id, found = e.ID, true; return false })
	}
	return id
}

// LastValidID is streamLastValidID.
func (s *Stream) LastValidID() StreamID { return s.EdgeID(false) }

// --- XDEL -------------------------------------------------------------------------

// deleteItem is streamDeleteItem (streamIteratorRemoveEntry): flag id
// deleted, dropping its node when it was the node's last live entry.
func (s *Stream) deleteItem(id StreamID) bool {
	var e StreamEntry
	ni, ok := s.findLive(id, &e)
	if !ok {
		return false
	}
	n := s.nodes[ni]
	if n.Count == 1 {
		s.removeNode(ni)
	} else {
		old := n.bytes
		n.setFlags(&e, e.Flags|StreamFlagDeleted)
		n.setCounts(n.Count-1, n.Deleted+1)
		s.bytes += uint64(n.bytes - old)
	}
	s.length--
	return true
}

func (s *Stream) removeNode(ni int) {
	s.bytes -= uint64(s.nodes[ni].bytes)
	s.nodes = removeAt(s.nodes, ni)
}

// Delete is XDEL's work: it deletes the live entries among ids, updating
// first_id and max_deleted_entry_id, and returns how many it deleted.
func (s *Stream) Delete(ids []StreamID) int {
	deleted := 0
	firstEntry := false
	for _, id := range ids {
		if s.deleteItem(id) {
			if id == s.firstID {
				firstEntry = true
			}
			if id.Cmp(s.maxDeleted) > 0 {
				s.maxDeleted = id
			}
			deleted++
		}
	}
	if deleted > 0 {
		if s.length == 0 {
			s.firstID = StreamID{}
		} else if firstEntry {
			s.firstID = s.EdgeID(true)
		}
	}
	return deleted
}

// --- XTRIM ------------------------------------------------------------------------

// Trim strategies (TRIM_STRATEGY_*).
const (
	TrimNone = iota
	TrimMaxLen
	TrimMinID
)

// StreamTrim is streamAddTrimArgs's trimming half.
type StreamTrim struct {
	Strategy int
	MaxLen   int64
	MinID    StreamID
	Approx   bool
	Limit    int64 // 0: none
}

// Trim is streamTrim: it removes entries from the start as args say and
// returns how many. Approximate trimming removes whole nodes only; Limit
// bounds the entries removed (checked per node).
func (s *Stream) Trim(args StreamTrim) int64 {
	if args.Strategy == TrimNone {
		return 0
	}
	maxlen := uint64(args.MaxLen)
	var deleted int64
	for len(s.nodes) > 0 {
		if args.Strategy == TrimMaxLen && s.length <= maxlen {
			break
		}
		n := s.nodes[0]
		entries := int64(n.Count)
		if args.Limit != 0 && deleted+entries > args.Limit {
			break
		}
		var remove bool
		if args.Strategy == TrimMaxLen {
			remove = s.length-uint64(entries) >= maxlen
		} else {
			remove = n.lastEntryID().Cmp(args.MinID) < 0
		}
		if remove {
			s.removeNode(0)
			s.length -= uint64(entries)
			deleted += entries
			continue
		}
		if args.Approx {
			break
		}
		old := n.bytes
		var fromNode int
		n.Walk(func(e *StreamEntry) bool {
			var stop bool
			if args.Strategy == TrimMaxLen {
				stop = s.length <= maxlen
			} else {
				stop = e.ID.Cmp(args.MinID) >= 0
			}
			if stop {
				return false
			}
			if e.Flags&StreamFlagDeleted == 0 {
				n.setFlags(e, e.Flags|StreamFlagDeleted)
				fromNode++
				s.length--
			}
			return true
		})
		deleted += int64(fromNode)
		n.setCounts(n.Count-fromNode, n.Deleted+fromNode)
		s.bytes += uint64(n.bytes - old)
		break
	}
	if s.length == 0 {
		s.firstID = StreamID{}
	} else {
		s.firstID = s.EdgeID(true)
	}
	return deleted
}

// --- consumer groups --------------------------------------------------------------

// NumGroups is the number of consumer groups.
func (s *Stream) NumGroups() int {
	if s.groups == nil {
		return 0
	}
	return s.groups.Len()
}

// Group is streamLookupCG.
func (s *Stream) Group(name []byte) *StreamCG {
	if s.groups == nil {
		return nil
	}
	g, _ := s.groups.Get(string(name))
	return g
}

// CreateGroup is streamCreateCG: nil if the name is taken.
func (s *Stream) CreateGroup(name string, lastID StreamID, entriesRead int64) *StreamCG {
	if s.groups == nil {
		s.groups = newOrdMap[string, *StreamCG](cmpString)
	}
	if _, ok := s.groups.Get(name); ok {
		return nil
	}
	g := &StreamCG{Name: name, LastID: lastID, EntriesRead: entriesRead,
		PEL: newOrdMap[StreamID, *StreamNACK](cmpID), Consumers: newOrdMap[string, *StreamConsumer](cmpString)}
	s.groups.Set(name, g)
	return g
}

// DestroyGroup removes a group and reports whether it existed.
func (s *Stream) DestroyGroup(name []byte) bool {
	return s.groups != nil && s.groups.Delete(string(name))
}

// Groups calls fn on each group in name order while it returns true.
func (s *Stream) Groups(fn func(g *StreamCG) bool) {
	if s.groups == nil {
		return
	}
	s.groups.AscendAll(func(_ string, g *StreamCG) bool { return fn(g) })
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Consumer is streamLookupConsumer.
func (g *StreamCG) Consumer(name []byte) *StreamConsumer {
	c, _ := g.Consumers.Get(string(name))
	return c
}

// CreateConsumer is streamCreateConsumer: nil if the name is taken.
func (g *StreamCG) CreateConsumer(name string, seen int64) *StreamConsumer {
	if _, ok := g.Consumers.Get(name); ok {
		return nil
	}
	c := &StreamConsumer{Name: name, SeenTime: seen, PEL: newOrdMap[StreamID, *StreamNACK](cmpID)}
	g.Consumers.Set(name, c)
	return c
}

// DeleteConsumer is streamDelConsumer: the consumer's pending entries
// leave the group's PEL too. It returns how many it had.
func (g *StreamCG) DeleteConsumer(c *StreamConsumer) int {
	n := c.PEL.Len()
	c.PEL.AscendAll(func(id StreamID, _ *StreamNACK) bool { g.PEL.Delete(id); return true })
	g.Consumers.Delete(c.Name)
	return n
}

// PELRange calls fn on the group PEL entries from start on while it
// returns true.
func (g *StreamCG) PELRange(start StreamID, fn func(id StreamID, nack *StreamNACK) bool) {
	g.PEL.Ascend(start, fn)
}

// PELGet is the pending entry id.
func (g *StreamCG) PELGet(id StreamID) *StreamNACK {
	n, _ := g.PEL.Get(id)
	return n
}

// PELAdd adds (or replaces) a pending entry in the group's PEL.
func (g *StreamCG) PELAdd(id StreamID, n *StreamNACK) bool { return g.PEL.Set(id, n) }

// PELDelete removes id from the group's PEL.
func (g *StreamCG) PELDelete(id StreamID) bool { return g.PEL.Delete(id) }

// PELLen is the number of pending entries.
func (g *StreamCG) PELLen() int { return g.PEL.Len() }

// PELFirstLast are the smallest and greatest pending IDs.
func (g *StreamCG) PELFirstLast() (StreamID, StreamID, bool) {
	a, _, ok := g.PEL.First()
	b, _, _ := g.PEL.Last()
	return a, b, ok
}

// ConsumersRange calls fn on each consumer in name order.
func (g *StreamCG) ConsumersRange(fn func(c *StreamConsumer) bool) {
	g.Consumers.AscendAll(func(_ string, c *StreamConsumer) bool { return fn(c) })
}

// NumConsumers is the number of consumers.
func (g *StreamCG) NumConsumers() int { return g.Consumers.Len() }

// PELRange calls fn on the consumer's pending entries from start on.
func (c *StreamConsumer) PELRange(start StreamID, fn func(id StreamID, nack *StreamNACK) bool) {
	c.PEL.Ascend(start, fn)
}

// PELLen is the consumer's number of pending entries.
func (c *StreamConsumer) PELLen() int { return c.PEL.Len() }

// PELAdd and PELDelete change the consumer's PEL.
func (c *StreamConsumer) PELAdd(id StreamID, n *StreamNACK) bool { return c.PEL.Set(id, n) }
func (c *StreamConsumer) PELDelete(id StreamID) bool             { return c.PEL.Delete(id) }

// --- loading (server/rdb) ---------------------------------------------------------

// LoadNode appends a node read from an RDB file: master, its fields, its
// entries (flags as stored), and its live and deleted counts. Nodes must
// come in master ID order; the caller sets the stream's metadata.
func (s *Stream) LoadNode(n *StreamNode) {
	n.bytes = n.computeBytes()
	s.nodes = append(s.nodes, n)
	s.bytes += uint64(n.bytes)
}

// SetLength sets the live entry count read from an RDB file.
func (s *Stream) SetLength(n uint64) { s.length = n }

// --- value --------------------------------------------------------------------------

// Dup is a deep copy (streamDup): nodes, entries, groups, consumers and
// their PELs, the NACKs shared by a group's PEL and its consumers' copied
// once.
func (s *Stream) Dup() Value {
	c := *s
	c.nodes = make([]*StreamNode, len(s.nodes))
	for i, n := range s.nodes {
		nn := *n
		nn.data = append([]byte(nil), n.data...) // flags change in place
		c.nodes[i] = &nn
	}
	if s.groups != nil {
		c.groups = newOrdMap[string, *StreamCG](cmpString)
		s.groups.AscendAll(func(name string, g *StreamCG) bool {
			ng := c.CreateGroup(name, g.LastID, g.EntriesRead)
			nacks := map[*StreamNACK]*StreamNACK{}
			g.PEL.AscendAll(func(id StreamID, n *StreamNACK) bool {
				nn := *n
				nacks[n] = &nn
				ng.PEL.Set(id, &nn)
				return true
			})
			g.Consumers.AscendAll(func(cname string, cons *StreamConsumer) bool {
				nc := ng.CreateConsumer(cname, cons.SeenTime)
				cons.PEL.AscendAll(func(id StreamID, n *StreamNACK) bool {
					nn := nacks[n]
					nn.Consumer = nc
					nc.PEL.Set(id, nn)
					return true
				})
				return true
			})
			return true
		})
	}
	return &c
}

// streamStructSize is sizeof(stream) in 7.0.
const streamStructSize = 80

// raxUsage is streamRadixTreeMemoryUsage for a rax of n 16-byte keys. The
// rax's node count depends on the keys' shared prefixes (RaxNodes counts
// it, in O(n)); here it is estimated in O(1) as two nodes a key (a
// compressed run and a leaf under a branching node, what IDs differing in
// their low bytes give), one for the head, two in all for a single key.
func raxUsage(n int) uint64 {
	nodes := uint64(n + 1)
	if n > 1 {
		nodes = uint64(2*n + 1)
	}
	return uint64(n)*16 + nodes*4 + nodes*8*30
}

// Size is objectComputeSize for a stream: the struct, the rax, the
// listpacks as allocated (the first samples measured, the others but the
// last counted at their average, the last measured; Redis preallocates the
// tail node at min(stream-node-max-bytes, 4096) and shrinks it when the
// next node starts), and the groups' and consumers' structures and PELs.
// samples 0 measures every node, group and consumer.
func (s *Stream) Size(samples int) uint64 {
	size := RobjSize + streamStructSize + raxUsage(len(s.nodes))
	if samples <= 0 {
		samples = math.MaxInt
	}
	var lpsize uint64
	taken := 0
	for _, n := range s.nodes {
		if taken >= samples {
			break
		}
		lpsize += s.nodeAlloc(n)
		taken++
	}
	if len(s.nodes) <= taken {
		size += lpsize
	} else {
		if taken > 0 {
			lpsize /= uint64(taken)
		}
		size += lpsize*uint64(len(s.nodes)-1) + s.nodeAlloc(s.nodes[len(s.nodes)-1])
	}
	// The groups and their consumers: Redis walks them all; here at most
	// samples of each are measured and the rest counted at their average,
	// so that the memory accounting after a write (5 samples) does not
	// walk thousands of consumers.
	var gsize uint64
	gtaken := 0
	s.Groups(func(g *StreamCG) bool {
		gsize += 112 + raxUsage(g.PEL.Len()) + 32*uint64(g.PEL.Len())
		var csize uint64
		ctaken := 0
		g.ConsumersRange(func(c *StreamConsumer) bool {
			csize += 40 + uint64(len(c.Name)) + raxUsage(c.PEL.Len())
			ctaken++
			return ctaken < samples
		})
		if ctaken > 0 && ctaken < g.NumConsumers() {
			csize = csize / uint64(ctaken) * uint64(g.NumConsumers())
		}
		gsize += csize
		gtaken++
		return gtaken < samples
	})
	if gtaken > 0 && gtaken < s.NumGroups() {
		gsize = gsize / uint64(gtaken) * uint64(s.NumGroups())
	}
	size += gsize
	return size
}

// nodeAlloc is zmalloc_size of a node's listpack.
func (s *Stream) nodeAlloc(n *StreamNode) uint64 {
	a := JemallocSize(uint64(n.bytes))
	if n == s.nodes[len(s.nodes)-1] {
		a = max(a, 4096)
	}
	return a
}

// checkStream verifies a stream's invariants: nodes ordered by master ID,
// each with entries, the first at its master, live ones in ID order (a
// later entry may be below the master: after XSETID lowered last_id below
// deleted entries, XADD appends below them, as Redis's streamAppendItem
// does, the node's master unchanged), its
// counts and bytes agreeing with its entries; the length the sum of live
// entries; last_id at or after every entry; first_id the first live
// entry (0-0 when empty); a group's consumers' PELs partitioning the
// group's PEL, each NACK naming its consumer.
func checkStream(s *Stream) error {
	var live uint64
	var prev, prevLive StreamID
	var bytes uint64
	for i, n := range s.nodes {
		// A node without live entries is possible: a partial XTRIM
		// MINID may flag its last live entries and leave deleted ones
		// past the threshold, as Redis's streamTrim does.
		if n.n == 0 {
			return fmt.Errorf("stream node %d is empty", i)
		}
		if i > 0 && n.Master.Cmp(prev) <= 0 {
			return fmt.Errorf("stream node %d master %v not after %v", i, n.Master, prev)
		}
		prev = n.Master
		c, d, k := 0, 0, 0
		var err error
		var lastSeen StreamID
		n.Walk(func(e *StreamEntry) bool {
			k++
			lastSeen = e.ID
			if (k == 1 && e.ID != n.Master) || (e.Flags&StreamFlagDeleted == 0 && live+uint64(c) > 0 && e.ID.Cmp(prevLive) <= 0) {
				err = fmt.Errorf("stream node %d entry %v out of order", i, e.ID)
				return false
			}
			if e.Flags < 0 || e.Flags > StreamFlagDeleted|StreamFlagSameFields {
				err = fmt.Errorf("stream entry %v: flags %d", e.ID, e.Flags)
				return false
			}
			if e.Flags&StreamFlagDeleted != 0 {
				d++
			} else {
				c++
				prevLive = e.ID
			}
			return true
		})
		if err != nil {
			return err
		}
		if k != n.n || lastSeen != n.last {
			return fmt.Errorf("stream node %d holds %d entries ending at %v, counted %d ending at %v", i, k, lastSeen, n.n, n.last)
		}
		if c != n.Count || d != n.Deleted {
			return fmt.Errorf("stream node %d counts %d/%d, holds %d/%d", i, n.Count, n.Deleted, c, d)
		}
		if n.bytes != n.computeBytes() {
			return fmt.Errorf("stream node %d bytes %d, computed %d", i, n.bytes, n.computeBytes())
		}
		live += uint64(c)
		bytes += uint64(n.bytes)
	}
	if live != s.length {
		return fmt.Errorf("stream length %d, holds %d live entries", s.length, live)
	}
	if bytes != s.bytes {
		return fmt.Errorf("stream bytes %d, nodes hold %d", s.bytes, bytes)
	}
	if live > 0 && prevLive.Cmp(s.lastID) > 0 {
		return fmt.Errorf("stream last_id %v before entry %v", s.lastID, prevLive)
	}
	if s.length == 0 && !s.firstID.IsZero() {
		return fmt.Errorf("empty stream with first_id %v", s.firstID)
	}
	if s.length > 0 && s.firstID != s.EdgeID(true) {
		return fmt.Errorf("stream first_id %v, first entry %v", s.firstID, s.EdgeID(true))
	}
	var err error
	s.Groups(func(g *StreamCG) bool {
		owned := 0
		g.ConsumersRange(func(c *StreamConsumer) bool {
			c.PEL.AscendAll(func(id StreamID, n *StreamNACK) bool {
				if gn := g.PELGet(id); gn != n || n.Consumer != c {
					err = fmt.Errorf("group %q consumer %q: PEL entry %v not the group's or not its own", g.Name, c.Name, id)
					return false
				}
				owned++
				return true
			})
			return err == nil
		})
		if err == nil && owned != g.PEL.Len() {
			err = fmt.Errorf("group %q: consumers own %d of %d pending entries", g.Name, owned, g.PEL.Len())
		}
		return err == nil
	})
	return err
}

// EstimateEntriesRead is streamEstimateDistanceFromFirstEverEntry: the
// entries_read counter a group whose last delivered ID is id would have,
// or -1 (SCG_INVALID_ENTRIES_READ) when it cannot be known.
func (s *Stream) EstimateEntriesRead(id StreamID) int64 {
	if s.entriesAdded == 0 {
		return 0
	}
	if s.length == 0 && id.Cmp(s.lastID) < 1 {
		return int64(s.entriesAdded)
	}
	cmpLast := id.Cmp(s.lastID)
	if cmpLast == 0 {
		return int64(s.entriesAdded)
	} else if cmpLast > 0 {
		return -1
	}
	cmpFirst := id.Cmp(s.firstID)
	if s.maxDeleted.IsZero() || s.maxDeleted.Cmp(s.firstID) < 0 {
		if cmpFirst < 0 {
			return int64(s.entriesAdded - s.length)
		} else if cmpFirst == 0 {
			return int64(s.entriesAdded - s.length + 1)
		}
	}
	return -1
}

// HasTombstonesFrom is streamRangeHasTombstones(s, start, NULL): whether
// a deleted entry may lie at or after start (max_deleted_entry_id is).
func (s *Stream) HasTombstonesFrom(start StreamID) bool {
	if s.length == 0 || s.maxDeleted.IsZero() {
		return false
	}
	if s.firstID.Cmp(s.maxDeleted) > 0 {
		return false
	}
	return start.Cmp(s.maxDeleted) <= 0
}

// Lag is streamReplyWithCGLag: the entries the group has yet to read,
// false when it cannot be known.
func (s *Stream) Lag(g *StreamCG) (int64, bool) {
	if s.entriesAdded == 0 {
		return 0, true
	}
	if g.EntriesRead != -1 && !s.HasTombstonesFrom(g.LastID) {
		return int64(s.entriesAdded) - g.EntriesRead, true
	}
	if read := s.EstimateEntriesRead(g.LastID); read != -1 {
		return int64(s.entriesAdded) - read, true
	}
	return 0, false
}

// RaxNodes is rax->numnodes of the radix tree holding the nodes' 16-byte
// big-endian master IDs, as a compressed trie of those keys (the head, a
// compressed node per run without branching, a branching node per
// divergence, a leaf per key). O(nodes).
func (s *Stream) RaxNodes() int {
	if len(s.nodes) == 0 {
		return 1
	}
	keys := make([][16]byte, len(s.nodes))
	for i, n := range s.nodes {
		binary.BigEndian.PutUint64(keys[i][:8], n.Master.Ms)
		binary.BigEndian.PutUint64(keys[i][8:], n.Master.Seq)
	}
	return raxCount(keys, 0)
}

// raxCount counts the nodes under a rax node at depth d whose keys
// (sorted, sharing their first d bytes) are keys.
func raxCount(keys [][16]byte, d int) int {
	if d == 16 {
		return 1
	}
	first, last := keys[0], keys[len(keys)-1]
	l := d
	for l < 16 && first[l] == last[l] {
		l++
	}
	if l > d {
		// A compressed node for the shared run, then what follows it.
		return 1 + raxCount(keys, l)
	}
	n := 1 // the branching node
	for i := 0; i < len(keys); {
		j := i
		for j < len(keys) && keys[j][d] == keys[i][d] {
			j++
		}
		n += raxCount(keys[i:j], d+1)
		i = j
	}
	return n
}

// WalkEntries calls fn for every live entry in ID order with the entry's
// field and value strings alternating (streamIteratorGetField's view):
// what DEBUG DIGEST mixes. fn must not keep the slices.
func (s *Stream) WalkEntries(fn func(ms, seq uint64, fieldsValues [][]byte)) error {
	var fv [][]byte
	s.Range(StreamID{}, MaxStreamID, false, func(n *StreamNode, e *StreamEntry) bool {
		fv = fv[:0]
		if e.SameFields() {
			for i, f := range n.MasterFields {
				fv = append(fv, []byte(f), e.Value(i))
			}
		} else {
			fv = append(fv, e.Vals...)
		}
		fn(e.ID.Ms, e.ID.Seq, fv)
		return true
	})
	return nil
}
