package replication

import (
	"bytes"
	"io"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

// node is a toy server made of the pure pieces only: a master side (IDs,
// backlog, the stream encoder) and a replica side (Handshake, offsets). It
// has no sockets; the test moves bytes between nodes by hand. The scenario
// is the failover rehearsal of the issue: full sync, streaming, a cut link
// with partial resync, promotion, and the old master rejoining with
// +CONTINUE <new id>.
type node struct {
	t       *testing.T
	rnd     *rand.Rand
	ids     IDs
	backlog *Backlog
	stream  resp.CommandStream
	data    []string // applied commands, for comparison

	// replica side
	hs      *Handshake
	offsets StreamOffsets
	parser  *resp.Reader
}

func newNode(t *testing.T, seed int64) *node {
	rnd := rand.New(rand.NewSource(seed))
	return &node{t: t, rnd: rnd, ids: NewIDs(rnd)}
}

func (n *node) offset() int64 {
	if n.backlog == nil {
		return 0
	}
	return n.backlog.End()
}

func (n *node) write(argv ...string) {
	n.data = append(n.data, strings.Join(argv, " "))
	if n.backlog == nil {
		return // master_repl_offset does not move without a backlog
	}
	bs := make([][]byte, len(argv))
	for i, a := range argv {
		bs[i] = []byte(a)
	}
	n.backlog.Append(n.stream.Append(nil, 0, bs))
}

// serve answers a PSYNC sent by a replica handshake and returns the bytes
// the master writes back (reply line, payload or backlog).
func (n *node) serve(psync []byte, psync2 bool, replicas int) (out []byte, d Decision) {
	p := resp.NewReader(bytes.NewReader(nil), resp.Limits{})
	p.Feed(psync)
	args, err := p.Next()
	if err != nil || len(args) < 3 {
		n.t.Fatalf("bad PSYNC %q", psync)
	}
	req := PsyncRequest{ReplID: string(args[1]), Offset: string(args[2]), PSYNC2: psync2}
	d = Decide(req, MasterState{IDs: n.ids, MasterReplOffset: n.offset(), Backlog: n.backlog.Window(), Replicas: replicas})
	switch d.Outcome {
	case PsyncContinue:
		out = append(out, d.Reply...)
		rest, ok := n.backlog.ReadFrom(d.Offset)
		if !ok {
			n.t.Fatal("continue outside the window")
		}
		out = append(out, rest...)
	case PsyncFull:
		if d.CreateBacklog {
			n.ids.Reset(n.rnd)
			n.backlog = NewBacklog(MinBacklogSize, n.offset())
		}
		n.stream.Reset() // slaveseldb = -1
		out = append(out, "\n\n"...)
		out = append(out, FullResyncLine(n.ids.ID, n.offset())...)
		// The "RDB": the applied commands, EOF-marked.
		rdb := strings.Join(n.data, "\n")
		out = append(out, "$EOF:"+testMark+"\r\n"+rdb+testMark...)
	default:
		n.t.Fatalf("unexpected decision %+v", d)
	}
	return out, d
}

// follow runs the replica handshake against master until the link is
// CONNECTED, feeding replies from master's serve.
func (n *node) follow(master *node, replicas int) Decision {
	var cached *CachedMaster
	if n.hs != nil {
		if c, ok := n.hs.Cached(); ok {
			cached = &c
		}
	}
	n.hs = NewHandshake(HandshakeConfig{ListeningPort: 6380}, cached)
	var psync []byte
	for _, ev := range []Event{Connect{}, Connected{}, Reply{"+PONG"}, Reply{"+OK"}, Reply{"+OK"}} {
		for _, a := range n.hs.Step(ev) {
			if s, ok := a.(Send); ok {
				psync = s.Data
			}
		}
	}
	if n.hs.State != StateReceivePsyncReply || !bytes.HasPrefix(psync, []byte("*3\r\n$5\r\nPSYNC")) {
		n.t.Fatalf("handshake stuck in %v", n.hs.State)
	}
	out, d := master.serve(psync, true, replicas)
	br := bytes.NewBuffer(out)
	for n.hs.State != StateConnected {
		line, err := br.ReadString('\n')
		if err != nil {
			n.t.Fatalf("master output ended in %v", n.hs.State)
		}
		for _, a := range n.hs.Step(Reply{strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")}) {
			switch a := a.(type) {
			case ExpectPayload:
				rdb, err := io.ReadAll(NewPayloadReader(br, PayloadHeader{Kind: HeaderEOF, EOFMark: a.EOFMark}))
				if err != nil {
					n.t.Fatal(err)
				}
				n.data = nil
				if len(rdb) > 0 {
					n.data = strings.Split(string(rdb), "\n")
				}
				for _, a := range n.hs.Step(PayloadLoaded{}) {
					if s, ok := a.(Synced); ok {
						n.ids.AdoptFullSync(s.ReplID)
						n.backlog = NewBacklog(MinBacklogSize, s.Offset)
						n.offsets = NewStreamOffsets(s.Offset)
						n.hs.SetCached(&CachedMaster{ReplID: s.ReplID, Offset: s.Offset})
					}
				}
			case PartialResync:
				if a.NewID != "" {
					n.ids.AdoptContinue(a.NewID, a.OldID, n.offset())
				}
				c, _ := n.hs.Cached()
				n.offsets = NewStreamOffsets(c.Offset)
			}
		}
	}
	n.parser = resp.NewReader(bytes.NewReader(nil), resp.Limits{})
	n.apply(br.Bytes())
	return d
}

// apply processes stream bytes from the master: commands are applied,
// counted, and fed to the replica's own backlog (chained replication).
func (n *node) apply(p []byte) {
	n.offsets.Received(len(p))
	n.parser.Feed(p)
	for {
		args, err := n.parser.Next()
		if err != nil {
			n.t.Fatal(err)
		}
		if args == nil {
			return
		}
		raw := resp.AppendCommand(nil, args...)
		n.offsets.Processed(len(raw), false)
		n.backlog.Append(raw)
		if name := strings.ToUpper(string(args[0])); name != "SELECT" && name != "PING" {
			var parts []string
			for _, a := range args {
				parts = append(parts, string(a))
			}
			n.data = append(n.data, strings.Join(parts, " "))
		}
	}
}

// pull hands the replica everything after its applied offset, read through
// the master's shared blocks at its own offset.
func (n *node) pull(master *node) {
	parts, ok := master.backlog.Slices(n.offsets.Applied+1, 0, nil)
	if !ok {
		n.t.Fatal("replica fell out of the window")
	}
	n.apply(bytes.Join(parts, nil))
	if n.hs != nil {
		cm, _ := n.hs.Cached()
		cm.Offset = n.offsets.Applied
		n.hs.SetCached(&cm)
	}
}

func TestScenarioFailoverRehearsal(t *testing.T) {
	m, r := newNode(t, 1), newNode(t, 2)
	m.write("SET", "before", "backlog") // no backlog: offset stays 0
	if m.offset() != 0 {
		t.Fatal("offset moved without a backlog")
	}
	idBefore := m.ids.ID

	// First replica: full sync, new replid, backlog created.
	d := r.follow(m, 0)
	if d.Outcome != PsyncFull || !d.CreateBacklog || m.ids.ID == idBefore {
		t.Fatalf("first sync %+v", d)
	}
	if r.ids.ID != m.ids.ID || r.offsets.Applied != 0 || strings.Join(r.data, "|") != "SET before backlog" {
		t.Fatalf("after full sync: %+v %v", r.ids, r.data)
	}

	// Streaming: the first command carries SELECT.
	for i := 0; i < 10; i++ {
		m.write("SET", "k"+strconv.Itoa(i), "v")
	}
	r.pull(m)
	if r.offsets.Applied != m.offset() || r.backlog.End() != m.offset() {
		t.Fatalf("offsets %d/%d vs %d", r.offsets.Applied, r.backlog.End(), m.offset())
	}
	if !bytes.HasPrefix(mustRead(t, m.backlog, 1), []byte("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n")) {
		t.Fatal("stream does not start with SELECT")
	}

	// The link is cut; writes continue; the replica comes back with PSYNC.
	r.hs.Step(LinkFailed{Reason: "EOF"})
	m.write("SET", "during", "cut")
	d = r.follow(m, 0)
	if d.Outcome != PsyncContinue || d.Offset != r.offsets.Applied-int64(len(resp.AppendCommandStrings(nil, "SET", "during", "cut")))+1 {
		t.Fatalf("reconnect %+v", d)
	}
	if r.offsets.Applied != m.offset() || !equalData(r.data, m.data) {
		t.Fatalf("after partial resync: %d vs %d\n%v\n%v", r.offsets.Applied, m.offset(), r.data, m.data)
	}

	// Promotion: the replica shifts its IDs; the old master is demoted
	// with a cached master made of its own history and rejoins with
	// PSYNC <old id> <offset+1>, accepted through replid2.
	oldID := m.ids.ID
	r.ids.Shift(r.offset(), r.rnd)
	r.hs = nil
	m.hs = NewHandshake(HandshakeConfig{}, &CachedMaster{ReplID: m.ids.ID, Offset: m.offset()})
	d = m.follow(r, 0)
	if d.Outcome != PsyncContinue || d.Reply != "+CONTINUE "+r.ids.ID+"\r\n" {
		t.Fatalf("rejoin %+v", d)
	}
	if m.ids.ID != r.ids.ID || m.ids.ID2 != oldID || m.ids.SecondOffset != m.offset()+1 {
		t.Fatalf("old master ids %+v", m.ids)
	}
	r.write("SET", "after", "failover")
	m.pull(r)
	if !equalData(m.data, r.data) || m.offsets.Applied != r.offset() {
		t.Fatalf("after failover\n%v\n%v", m.data, r.data)
	}
}

func mustRead(t *testing.T, b *Backlog, off int64) []byte {
	p, ok := b.ReadFrom(off)
	if !ok {
		t.Fatalf("ReadFrom(%d)", off)
	}
	return p
}

func equalData(a, b []string) bool { return strings.Join(a, "|") == strings.Join(b, "|") }
