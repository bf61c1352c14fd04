package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/replication"
)

// The replica side of the replication shell: one goroutine per REPLICAOF
// (replLink.run) drives replication.Handshake over a socket, loads the
// payload (repl-diskless-load disabled: stored in a temp file in dir, then
// the databases are flushed and the file loaded with expired keys kept),
// then applies the stream as the master client through the normal command
// path. The master's bytes are fed verbatim to this node's backlog as they
// are applied (replicationFeedStreamFromMasterStream), so sub-replicas see
// the same stream, IDs and offsets.

// replLink is this node's link to its master (server.masterhost, the
// master client, repl_state). Fields are guarded by the execution lock
// except those only the link goroutine touches (noted).
type replLink struct {
	host      string
	port      int
	hs        *replication.Handshake
	offsets   replication.StreamOffsets
	stop      chan struct{}
	stopped   bool
	conn      net.Conn
	mc        *Client
	prePsync  bool
	lastIO    time.Time
	lastAck   time.Time
	downSince time.Time
	transfer  int64 // bytes of payload read
	// transferSize is repl_transfer_size: -1 before the $ line, 0 for an
	// EOF-marked payload.
	transferSize int64
}

// startReplication is replicationSetMaster (lock held).
func (s *Server) startReplication(host string, port int) {
	var cached *replication.CachedMaster
	var downSince time.Time
	if l := s.repl.link; l != nil {
		downSince = l.downSince
		if l.hs.State == replication.StateConnected {
			downSince = s.clock.Now() // the master client is freed
			cached = &replication.CachedMaster{ReplID: s.repl.ids.ID, Offset: l.offsets.Applied}
		} else if cm, ok := l.hs.Cached(); ok {
			cached = &cm
		}
		s.stopLink(l)
	} else {
		// replicationCacheMasterUsingMyself
		cached = &replication.CachedMaster{ReplID: s.repl.ids.ID, Offset: s.repl.offset}
	}
	// "Here we don't disconnect with replicas, since they may hopefully be
	// able to partially resync with us": they are dropped when the IDs
	// change (+CONTINUE <new id>) or a full sync loads.
	s.unblockAllWaiters()
	port0 := s.cfg.ReplicaAnnouncePort
	if port0 == 0 {
		port0 = s.tcpPort
	}
	hs := replication.NewHandshake(replication.HandshakeConfig{MasterUser: s.cfg.MasterUser, MasterAuth: s.cfg.MasterAuth,
		ListeningPort: port0, AnnounceIP: s.cfg.ReplicaAnnounceIP}, cached)
	l := &replLink{host: host, port: port, hs: hs, stop: make(chan struct{}), downSince: downSince}
	if cached != nil {
		l.offsets = replication.NewStreamOffsets(cached.Offset)
	}
	s.repl.link = l
	s.ks.Replica = true
	s.log.Info().Msgf("Connecting to MASTER %s:%d", host, port)
	go s.runLink(l)
}

// unblockAllWaiters answers the WAIT clients (disconnectAllBlockedClients
// is harsher; WAIT's count is what they get).
func (s *Server) unblockAllWaiters() {
	for _, bs := range append([]*blockState(nil), s.blocking.acks...) {
		bs.c.w.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
		s.unblock(bs, false)
	}
}

// stopLink ends l (lock held).
func (s *Server) stopLink(l *replLink) {
	if l.stopped {
		return
	}
	l.stopped = true
	l.hs.Step(replication.Stop{})
	close(l.stop)
	if l.conn != nil {
		l.conn.Close()
	}
	if l.mc != nil {
		l.mc.kill()
	}
}

// promote is replicationUnsetMaster (REPLICAOF NO ONE; lock held).
func (s *Server) promote() {
	l := s.repl.link
	if l == nil {
		return
	}
	s.stopLink(l)
	s.repl.link = nil
	s.ks.Replica = false
	s.repl.ids.Shift(s.repl.offset, s.repl.rnd)
	for _, rp := range append([]*replica(nil), s.repl.replicas...) {
		s.dropReplica(rp, "")
	}
	s.repl.stream.Reset()
	s.repl.noReplicasSince = s.clock.Now()
	if s.repl.backlog == nil {
		s.createBacklog()
	}
	s.log.Info().Msgf("MASTER MODE enabled (user request from '%s')", "client")
}

// runLink is the link goroutine: connect, sync, stream, and again after a
// drop, until stopped.
func (s *Server) runLink(l *replLink) {
	for {
		err := s.linkSession(l)
		s.mu.Lock()
		if l.stopped {
			s.mu.Unlock()
			return
		}
		s.linkDown(l, err)
		s.mu.Unlock()
		select {
		case <-l.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// linkDown handles a failed link (lock held).
func (s *Server) linkDown(l *replLink, err error) {
	reason := "link closed"
	if err != nil {
		reason = err.Error()
	}
	wasConnected := l.hs.State == replication.StateConnected
	for _, a := range l.hs.Step(replication.LinkFailed{Reason: reason}) {
		if c, ok := a.(replication.Close); ok && c.CacheMaster {
			l.hs.SetCached(&replication.CachedMaster{ReplID: s.repl.ids.ID, Offset: l.offsets.Applied})
		}
	}
	if l.hs.State != replication.StateConnect && l.hs.State != replication.StateNone {
		l.hs.State = replication.StateConnect
	}
	if wasConnected { // replicationHandleMasterDisconnection: repl_down_since
		s.log.Warn().Msgf("Connection with master lost (%s)", reason)
		l.downSince = s.clock.Now()
	}
	if l.conn != nil {
		l.conn.Close()
		l.conn = nil
	}
	if l.mc != nil {
		mc := l.mc
		l.mc = nil
		go s.unlinkMaster(mc)
	}
}

func (s *Server) unlinkMaster(mc *Client) {
	s.clientsMu.Lock()
	delete(s.clients, mc.id)
	s.clientsMu.Unlock()
	mc.kill()
}

// linkSession runs one connection to the master.
func (s *Server) linkSession(l *replLink) error {
	s.mu.Lock()
	if l.stopped {
		s.mu.Unlock()
		return errors.New("stopped")
	}
	l.hs.Step(replication.Connect{})
	timeout := time.Duration(s.cfg.ReplTimeout) * time.Second
	s.mu.Unlock()
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(l.host, strconv.Itoa(l.port)), 5*time.Second)
	if err != nil {
		return fmt.Errorf("Error condition on socket for SYNC: %v", err)
	}
	s.mu.Lock()
	if l.stopped {
		s.mu.Unlock()
		conn.Close()
		return errors.New("stopped")
	}
	l.conn = conn
	l.lastIO = s.clock.Now()
	acts := l.hs.Step(replication.Connected{})
	s.mu.Unlock()
	br := bufio.NewReaderSize(conn, 64<<10)
	for {
		for len(acts) > 0 {
			a := acts[0]
			acts = acts[1:]
			switch a := a.(type) {
			case replication.Send:
				conn.SetWriteDeadline(time.Now().Add(timeout))
				if _, err := conn.Write(a.Data); err != nil {
					return err
				}
			case replication.Log:
				if a.Warning {
					s.log.Warn().Msg(a.Msg)
				} else {
					s.log.Info().Msg(a.Msg)
				}
			case replication.Close:
				return errors.New(a.Reason)
			case replication.ExpectPayload:
				if err := s.loadPayload(l, br, a, timeout); err != nil {
					return err
				}
				s.mu.Lock()
				acts = append(acts, l.hs.Step(replication.PayloadLoaded{})...)
				s.mu.Unlock()
			case replication.PartialResync:
				s.mu.Lock()
				if a.NewID != "" {
					s.repl.ids.AdoptContinue(a.NewID, a.OldID, s.repl.offset)
					for _, rp := range append([]*replica(nil), s.repl.replicas...) {
						s.dropReplica(rp, "")
					}
				}
				if s.repl.backlog == nil {
					s.createBacklog()
				}
				if cm, ok := l.hs.Cached(); ok {
					l.offsets = replication.NewStreamOffsets(cm.Offset)
				}
				s.mu.Unlock()
			case replication.Synced:
				s.mu.Lock()
				s.repl.ids.AdoptFullSync(a.ReplID)
				s.repl.offset = a.Offset
				s.createBacklog()
				l.offsets = replication.NewStreamOffsets(a.Offset)
				l.prePsync = a.PrePsync
				s.mu.Unlock()
				if a.SendAck {
					conn.SetWriteDeadline(time.Now().Add(timeout))
					if _, err := conn.Write(replication.AckCommand(a.Offset)); err != nil {
						return err
					}
				}
			}
		}
		s.mu.Lock()
		connected := l.hs.State == replication.StateConnected
		s.mu.Unlock()
		if connected {
			return s.applyStream(l, conn, br, timeout)
		}
		conn.SetReadDeadline(time.Now().Add(timeout))
		b, err := br.ReadSlice('\n') // a line longer than the buffer is an error
		if err != nil {
			return fmt.Errorf("Error reading from MASTER: %v", err)
		}
		line := strings.TrimRight(string(b), "\r\n")
		s.mu.Lock()
		l.lastIO = s.clock.Now()
		acts = l.hs.Step(replication.Reply{Line: line})
		s.mu.Unlock()
	}
}

// loadPayload reads the RDB into a temp file, then flushes the databases
// and loads it (repl-diskless-load disabled).
func (s *Server) loadPayload(l *replLink, br *bufio.Reader, a replication.ExpectPayload, timeout time.Duration) error {
	h := replication.PayloadHeader{Kind: replication.HeaderSize, Size: a.Size}
	if a.EOFMark != "" {
		h = replication.PayloadHeader{Kind: replication.HeaderEOF, EOFMark: a.EOFMark}
	}
	s.mu.Lock()
	dir := s.cfg.Dir
	l.transfer, l.transferSize = 0, a.Size
	s.mu.Unlock()
	f, err := os.CreateTemp(dir, fmt.Sprintf("temp-%d-*.rdb", os.Getpid()))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	pr := replication.NewPayloadReader(&deadlineReader{r: br, conn: l.conn, timeout: timeout}, h)
	buf := make([]byte, 64<<10)
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return werr
			}
			s.mu.Lock()
			l.transfer += int64(n)
			l.lastIO = s.clock.Now()
			s.mu.Unlock()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("I/O error trying to sync with MASTER: %v", err)
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.stopped {
		return errors.New("stopped")
	}
	for _, rp := range append([]*replica(nil), s.repl.replicas...) {
		s.dropReplica(rp, "")
	}
	s.log.Info().Msg("MASTER <-> REPLICA sync: Flushing old data")
	s.ks.FlushAll()
	s.log.Info().Msg("MASTER <-> REPLICA sync: Loading DB in memory")
	if _, _, err := s.loadRDB(bufio.NewReaderSize(f, 64<<10), true, false); err != nil {
		s.ks.FlushAll()
		return fmt.Errorf("Failed trying to load the MASTER synchronization DB from disk: %v", err)
	}
	return nil
}

type deadlineReader struct {
	r       io.Reader
	conn    net.Conn
	timeout time.Duration
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	d.conn.SetReadDeadline(time.Now().Add(d.timeout))
	return d.r.Read(p)
}

// applyStream executes the master's stream as the master client.
func (s *Server) applyStream(l *replLink, conn net.Conn, br *bufio.Reader, timeout time.Duration) error {
	mc := &Client{srv: s, conn: conn, id: s.nextID.Add(1), addr: conn.RemoteAddr().String(), laddr: conn.LocalAddr().String(),
		created: s.clock.Now(), user: "default", authed: true}
	mc.w.Proto = 2
	mc.replRole.Store(kindMaster)
	mc.lastInteraction.Store(time.Now().UnixMilli())
	s.clientsMu.Lock()
	s.clients[mc.id] = mc
	s.clientsMu.Unlock()
	s.mu.Lock()
	if l.stopped {
		s.mu.Unlock()
		s.unlinkMaster(mc)
		return errors.New("stopped")
	}
	l.mc = mc
	l.downSince = time.Time{}
	l.lastAck = time.Time{} // the first cron tick ACKs
	s.mu.Unlock()
	var raw, pendingRaw []byte
	for {
		if mc.killed.Load() {
			return errors.New("master client killed")
		}
		conn.SetReadDeadline(time.Now().Add(timeout))
		argv, n, err := readStreamCommand(br, &raw)
		if err != nil {
			return err
		}
		mc.lastInteraction.Store(time.Now().UnixMilli())
		s.mu.Lock()
		if l.stopped || l.mc != mc {
			s.mu.Unlock()
			return errors.New("stopped")
		}
		l.lastIO = s.clock.Now()
		l.offsets.Received(n)
		if argv == nil { // a bare newline
			l.offsets.Skipped(n)
			pendingRaw = append(pendingRaw, raw...)
			s.mu.Unlock()
			continue
		}
		if len(argv) >= 2 && eqFold(argv[0], "replconf") && eqFold(argv[1], "getack") {
			conn.SetWriteDeadline(time.Now().Add(timeout))
			_, _ = conn.Write(l.offsets.GetAck())
		} else {
			s.repl.applying = true
			s.ks.MasterCommand = true
			s.current = mc
			s.call(mc, argv)
			s.current = nil
			s.ks.MasterCommand = false
			s.repl.applying = false
			mc.w.B = mc.w.B[:0]
		}
		pendingRaw = append(pendingRaw, raw...)
		if done := l.offsets.Processed(n, mc.multi != nil); done > 0 {
			s.replFeed(pendingRaw)
			s.repl.offset = l.offsets.Applied
			pendingRaw = pendingRaw[:0]
		}
		s.mu.Unlock()
	}
}

// readStreamCommand reads one command of the replication stream: a RESP
// multibulk, or a bare newline (argv nil). raw receives its bytes.
func readStreamCommand(br *bufio.Reader, raw *[]byte) ([][]byte, int, error) {
	*raw = (*raw)[:0]
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, 0, err
	}
	*raw = append(*raw, line...)
	if len(line) <= 2 && strings.TrimRight(string(line), "\r\n") == "" {
		return nil, len(*raw), nil
	}
	if line[0] != '*' {
		return nil, 0, errors.New("Protocol error: inline command from master")
	}
	cnt, err := strconv.Atoi(strings.TrimRight(string(line[1:]), "\r\n"))
	if err != nil || cnt < 0 || cnt > 1<<20 {
		return nil, 0, errors.New("Protocol error: invalid multibulk length from master")
	}
	type span struct{ a, b int }
	spans := make([]span, 0, min(cnt, 64))
	for i := 0; i < cnt; i++ {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return nil, 0, err
		}
		*raw = append(*raw, line...)
		if line[0] != '$' {
			return nil, 0, errors.New("Protocol error: expected '$' from master")
		}
		n, err := strconv.Atoi(strings.TrimRight(string(line[1:]), "\r\n"))
		if err != nil || n < 0 || n > 512<<20 {
			return nil, 0, errors.New("Protocol error: invalid bulk length from master")
		}
		start := len(*raw)
		for need := n + 2; need > 0; {
			chunk, err := br.Peek(min(need, br.Size()))
			if err != nil && len(chunk) == 0 {
				return nil, 0, err
			}
			*raw = append(*raw, chunk...)
			br.Discard(len(chunk))
			need -= len(chunk)
		}
		spans = append(spans, span{start, start + n})
	}
	argv := make([][]byte, cnt)
	for i, sp := range spans {
		argv[i] = (*raw)[sp.a:sp.b]
	}
	return argv, len(*raw), nil
}

// cron is the replica half of replicationCron (lock held): the ACK every
// second and the link timeout.
func (l *replLink) cron(s *Server) {
	now := s.clock.Now()
	if l.hs.State == replication.StateConnected && l.conn != nil && l.mc != nil {
		if replication.AckDue(l.prePsync, l.lastAck, now) {
			l.lastAck = now
			l.conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = l.conn.Write(replication.AckCommand(l.offsets.Applied))
		}
	}
	last := time.UnixMilli(0)
	if l.mc != nil {
		last = time.UnixMilli(l.mc.lastInteraction.Load())
	}
	if reason, out := replication.LinkTimeout(l.hs.State, l.lastIO, last, time.Duration(s.cfg.ReplTimeout)*time.Second, now); out {
		s.log.Warn().Msg(reason)
		if l.conn != nil {
			l.conn.Close()
		}
	}
}

// fillInfo adds the replica fields to INFO replication.
func (l *replLink) fillInfo(s *Server, in *replication.Info, now time.Time) {
	in.IsReplica = true
	in.MasterHost, in.MasterPort = l.host, l.port
	in.LinkState = l.hs.State
	in.MasterLastIOSecondsAgo = -1
	if l.mc != nil {
		in.MasterLastIOSecondsAgo = int64(now.Sub(time.UnixMilli(l.mc.lastInteraction.Load())).Seconds())
	}
	in.SlaveReadReplOffset, in.SlaveReplOffset = 1, 1
	if l.mc != nil {
		in.SlaveReadReplOffset, in.SlaveReplOffset = l.offsets.Read, l.offsets.Applied
	} else if cm, ok := l.hs.Cached(); ok {
		in.SlaveReadReplOffset, in.SlaveReplOffset = cm.Offset, cm.Offset
	}
	in.TransferSize, in.TransferRead = l.transferSize, l.transfer
	in.TransferLastIOSecondsAgo = int64(now.Sub(l.lastIO).Seconds())
	in.LinkDownSinceSeconds = -1
	if l.hs.State != replication.StateConnected && !l.downSince.IsZero() {
		in.LinkDownSinceSeconds = int64(now.Sub(l.downSince).Seconds())
	}
	in.ReplicaPriority = s.cfg.ReplicaPriority
	in.ReplicaReadOnly = s.cfg.ReplicaReadOnly
	in.ReplicaAnnounced = s.cfg.ReplicaAnnounced
}
