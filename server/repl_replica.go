package server

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/clock"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/replication"
	"github.com/vigil-kv/vigil/server/keyspace"
	"github.com/vigil-kv/vigil/server/rdb"
)

// The replica side of the replication shell: one goroutine per REPLICAOF
// (replLink.run) drives replication.Handshake over a socket, loads the
// payload (repl-diskless-load disabled: stored in a temp file in dir, then
// the databases are flushed and the file loaded with expired keys kept),
// then applies the stream as the master client through the normal command
// path. The master's bytes are fed verbatim to this node's backlog as they
// are applied (replicationFeedStreamFromMasterStream), so sub-replicas see
// the same stream, IDs and offsets.

// netClock reads the time of socket deadlines, which the kernel and the
// netpoller count in real time: it is the real clock whatever clock the
// server was given, as for the idle timeout (server.go, Server.clock).
// Every other time of the replication shells is the server's clock.
var netClock clock.Clock = clock.Real{}

// replLink is this node's link to its master (server.masterhost, the
// master client, repl_state). Fields are guarded by the execution lock
// except those only the link goroutine touches (noted).
type replLink struct {
	host     string
	port     int
	hs       *replication.Handshake
	offsets  replication.StreamOffsets
	stop     chan struct{}
	stopped  bool
	conn     net.Conn
	mc       *Client
	prePsync bool
	lastIO   time.Time
	lastAck  time.Time
	// ackUntil: after a full sync's first ACK, ACK again every cron tick
	// until the master's stream starts or this time passes (ackAgain).
	ackUntil  time.Time
	ackFrom   int64 // the offset the sync ended at (ackAgain)
	downSince time.Time
	transfer  int64 // bytes of payload read
	// transferSize is repl_transfer_size: -1 before the $ line, 0 for an
	// EOF-marked payload.
	transferSize int64
	// masterReplID is server.master_replid (+FULLRESYNC's ID).
	masterReplID string
	// asyncLoading is server.async_loading: a swapdb load serving the old
	// data meanwhile.
	asyncLoading bool
	// restartAOF: the AOF was stopped for a payload load.
	restartAOF bool
	// afterStartupLoad: created by the replicaof directive while the
	// startup load ran (waitStartupLoad); hsConfig makes its handshake.
	afterStartupLoad bool
	hsConfig         replication.HandshakeConfig
	// The empty-restart guard (replication/emptysync.go). followed: this
	// link completed a sync; acceptEmpty: an operator's REPLICAOF naming
	// this master cleared the guard (until the next completed sync);
	// refusedEmpty: the reason while the guard refuses the master's
	// payload (INFO master_sync_refused_empty).
	followed     bool
	acceptEmpty  bool
	refusedEmpty string
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
		if s.tlsPort != 0 && netshell.TLSSettingsOf(s.cfg).Replication { // the port the master can reach over TLS
			port0 = s.tlsPort
		}
	}
	// In FAILOVER_IN_PROGRESS (failover.go) the PSYNC carries FAILOVER.
	hc := replication.HandshakeConfig{MasterUser: s.cfg.MasterUser, MasterAuth: s.cfg.MasterAuth,
		ListeningPort: port0, AnnounceIP: s.cfg.ReplicaAnnounceIP,
		Failover: s.repl.failover.State == replication.FailoverInProgress}
	hs := replication.NewHandshake(hc, cached)
	l := &replLink{host: host, port: port, hs: hs, hsConfig: hc, stop: make(chan struct{}), downSince: downSince}
	if cached != nil {
		l.offsets = replication.NewStreamOffsets(cached.Offset)
	}
	// The replicaof directive while the startup load runs: as Redis's
	// replicationCron, which runs after loadDataFromDisk, the link waits
	// for the load, then caches the master made of the loaded history
	// (the RDB's repl-id and repl-offset, see restoreReplInfo).
	l.afterStartupLoad = s.rdb.loading && s.repl.link == nil
	s.repl.link = l
	// The role as CONFIG GET replicaof and CONFIG REWRITE see it (Redis
	// reads server.masterhost there).
	s.cfg.ReplicaOf = configs.Address{Host: host, Port: port}
	s.logSlave.Store(true)
	s.repl.freshStart = false // its history is now a master's
	s.ks.Replica = true
	s.setOOMScoreAdj(-1)
	s.log.Info().Msgf("Connecting to MASTER %s:%d", host, port)
	go s.runLink(l)
}

// unblockAllWaiters answers the WAIT clients (disconnectAllBlockedClients
// is harsher; WAIT's count is what they get). A write held by sync-ack
// mode ran on this master: it gets UNACKED ("may or may not be applied"),
// not UNBLOCKED, which would read as a refusal.
func (s *Server) unblockAllWaiters() {
	for _, bs := range append([]*blockState(nil), s.blocking.acks...) {
		if bs.syncAck {
			s.replySyncAckUnacked(bs, "before this master turned into a replica")
		} else {
			bs.c.w.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
		}
		s.unblock(bs, false)
	}
	// disconnectAllBlockedClients for the clients blocked on keys
	// (BLPOP, XREADGROUP...): they are answered and closed, so that the
	// master's stream, which a replica applies as is, never serves one
	// (the element it popped would exist on the master only).
	var keyed []*blockState
	for _, list := range s.blocking.keys {
		keyed = append(keyed, list...)
	}
	for _, bs := range keyed {
		if bs.c.blocked != bs {
			continue // waiting on several keys: already done
		}
		bs.c.w.Error("UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)")
		bs.c.closeAfterReply = true
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

// unsetMaster is replicationUnsetMaster (REPLICAOF NO ONE, a PSYNC
// FAILOVER from the master, an aborted FAILOVER; lock held).
func (s *Server) unsetMaster() {
	// No master any more, for CONFIG GET replicaof and CONFIG REWRITE too
	// (also when the startup replicaof link is not started yet).
	s.cfg.ReplicaOf = configs.Address{}
	s.logSlave.Store(false)
	l := s.repl.link
	if l == nil {
		return
	}
	s.stopLink(l)
	s.repl.link = nil
	s.ks.Replica = false
	s.setOOMScoreAdj(-1)
	s.repl.ids.Shift(s.repl.offset, s.repl.rnd)
	for _, rp := range append([]*replica(nil), s.repl.replicas...) {
		s.dropReplica(rp, "")
	}
	s.repl.stream.Reset()
	s.repl.masterDB = 0
	s.repl.noReplicasSince = s.clock.Now()
	if s.repl.backlog == nil {
		s.createBacklog()
	}
}

// runLink is the link goroutine: connect, sync, stream, and again after a
// drop, until stopped.
func (s *Server) runLink(l *replLink) {
	if !s.waitStartupLoad(l) {
		return
	}
	for {
		err := s.linkSession(l)
		stopped := false
		s.lockOrLend(func() {
			if stopped = l.stopped; !stopped {
				s.linkDown(l, err)
			}
		})
		if stopped {
			return
		}
		select {
		case <-l.stop:
			return
		case <-time.After(time.Second):
		}
	}
}

// waitStartupLoad waits until the startup load is over (no connection to
// the master meanwhile); false when the link was stopped or the server
// shuts down first.
func (s *Server) waitStartupLoad(l *replLink) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.rdb.loading {
		s.mu.Unlock()
		select {
		case <-l.stop:
			s.mu.Lock()
			return false
		case <-time.After(10 * time.Millisecond):
		}
		s.mu.Lock()
		if s.closing.Load() {
			return false
		}
	}
	if l.stopped {
		return false
	}
	if l.afterStartupLoad {
		l.afterStartupLoad = false
		cached := &replication.CachedMaster{ReplID: s.repl.ids.ID, Offset: s.repl.offset}
		l.hs = replication.NewHandshake(l.hsConfig, cached)
		l.offsets = replication.NewStreamOffsets(cached.Offset)
	}
	return true
}

// linkDown handles a failed link (lock held).
func (s *Server) linkDown(l *replLink, err error) {
	reason := "link closed"
	if err != nil {
		reason = err.Error()
	}
	wasConnected := l.hs.State == replication.StateConnected
	// The read deadline (repl-timeout) ended the connection before the
	// cron's check (LinkTimeout) saw it: its log line, as
	// replicationCron's ("Timeout connecting to the MASTER..." in the
	// handshake).
	var ne net.Error
	if !wasConnected && errors.As(err, &ne) && ne.Timeout() {
		if msg, out := replication.LinkTimeout(l.hs.State, time.Time{}, time.Time{}, 0, s.clock.Now()); out {
			s.log.Warn().Msg(msg)
		}
	}
	protoErr := resp.IsProtocolError(err)
	for _, a := range l.hs.Step(replication.LinkFailed{Reason: reason, ProtocolError: protoErr}) {
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
	s.mu.Lock()
	s.forgetClientMem(mc) // clientevict.go
	s.mu.Unlock()
	s.clientsMu.Lock()
	delete(s.clients, mc.id)
	s.clientsMu.Unlock()
	mc.kill()
}

// linkSession runs one connection to the master.
//
// The handshake's steps take the execution lock with lockOrLend: while a
// script past the busy threshold holds it, the replica reconnects and
// sends its PSYNC with the state the script lends, as Redis's handshake
// runs from processEventsWhileBlocked; the payload waits for the script's
// end (readSyncBulkPayload returns while isInsideYieldingLongCommand).
func (s *Server) linkSession(l *replLink) error {
	stopped := false
	var timeout time.Duration
	var source string
	var tlsCfg *tls.Config
	s.lockOrLend(func() {
		if stopped = l.stopped; stopped {
			return
		}
		// masteruser/masterauth as they are now (CONFIG SET since the
		// REPLICAOF applies to the next attempt, as in Redis).
		l.hsConfig.MasterUser, l.hsConfig.MasterAuth = s.cfg.MasterUser, s.cfg.MasterAuth
		l.hs.SetAuth(s.cfg.MasterUser, s.cfg.MasterAuth)
		l.hs.Step(replication.Connect{})
		timeout = time.Duration(s.cfg.ReplTimeout) * time.Second
		source = s.cfg.BindSourceAddr
		if netshell.TLSSettingsOf(s.cfg).Replication { // tls-replication (tls.go)
			tlsCfg = s.tls.Client()
		}
	})
	if stopped {
		return errors.New("stopped")
	}
	conn, err := dialMaster(net.JoinHostPort(l.host, strconv.Itoa(l.port)), source)
	if err != nil {
		return fmt.Errorf("Error condition on socket for SYNC: %v", err)
	}
	if tlsCfg != nil {
		if conn, err = netshell.TLSClient(conn, tlsCfg, timeout); err != nil {
			return fmt.Errorf("Error condition on socket for SYNC: %v", err)
		}
	}
	var acts []replication.Action
	s.lockOrLend(func() {
		if stopped = l.stopped; stopped {
			return
		}
		conn = newLinkConn(conn)
		l.conn = conn
		l.lastIO = s.clock.Now()
		acts = l.hs.Step(replication.Connected{})
	})
	if stopped {
		conn.Close()
		return errors.New("stopped")
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	for {
		for len(acts) > 0 {
			a := acts[0]
			acts = acts[1:]
			switch a := a.(type) {
			case replication.Send:
				conn.SetWriteDeadline(netClock.Now().Add(timeout))
				if _, err := conn.Write(a.Data); err != nil {
					s.lockOrLend(func() {
						if l.hs.State == replication.StateReceivePsyncReply && l.hs.FailingOver() {
							// syncWithMaster: the PSYNC ... FAILOVER could not
							// be sent: abortFailover (back to a master).
							s.abortFailover("Write error to failover target")
						}
					})
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
			case replication.FailoverReply:
				var ok bool
				s.lockOrLend(func() { ok = s.failoverReply(a) })
				if !ok {
					return errors.New("Failover target rejected psync request")
				}
			case replication.FullResync:
				s.lockOrLend(func() { l.masterReplID = a.ReplID })
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
				l.synced()
				s.mu.Unlock()
			case replication.Synced:
				s.mu.Lock()
				// replicationCreateMasterClient(conn, rsi.repl_stream_db)
				s.repl.masterDB, s.repl.rdbStreamDB = s.repl.rdbStreamDB, 0
				s.repl.ids.AdoptFullSync(a.ReplID)
				s.repl.offset = a.Offset
				s.createBacklog()
				l.offsets = replication.NewStreamOffsets(a.Offset)
				l.prePsync = a.PrePsync
				l.synced()
				if a.SendAck {
					l.ackUntil, l.ackFrom = s.clock.Now().Add(time.Second), a.Offset
				}
				s.mu.Unlock()
				if a.SendAck {
					conn.SetWriteDeadline(netClock.Now().Add(timeout))
					if _, err := conn.Write(replication.AckCommand(a.Offset)); err != nil {
						return err
					}
				}
			}
		}
		var connected bool
		s.lockOrLend(func() { connected = l.hs.State == replication.StateConnected })
		if connected {
			return s.applyStream(l, conn, br, timeout)
		}
		conn.SetReadDeadline(netClock.Now().Add(timeout))
		b, err := br.ReadSlice('\n') // a line longer than the buffer is an error
		if err != nil {
			return fmt.Errorf("Error reading from MASTER: %w", err) // linkDown: a timeout
		}
		line := strings.TrimRight(string(b), "\r\n")
		s.lockOrLend(func() {
			l.lastIO = s.clock.Now()
			acts = l.hs.Step(replication.Reply{Line: line})
		})
	}
}

// loadPayload is readSyncBulkPayload after the $ line. As Redis, the
// payload goes to disk unless useDisklessLoad: repl-diskless-load swapdb,
// or on-empty-db when every database is empty. On disk it is received
// into a temp file (the old data is served meanwhile: master_sync_in_progress
// is 1), renamed over dbfilename, then loaded; while a payload loads the
// server is loading: -LOADING for the commands not flagged loading, never
// a half-loaded dataset (swapdb with the master's own replication ID: the
// old data is served meanwhile, async_loading:1).
func (s *Server) loadPayload(l *replLink, br *bufio.Reader, a replication.ExpectPayload, timeout time.Duration) error {
	h := replication.PayloadHeader{Kind: replication.HeaderSize, Size: a.Size}
	if a.EOFMark != "" {
		h = replication.PayloadHeader{Kind: replication.HeaderEOF, EOFMark: a.EOFMark}
	}
	s.mu.Lock()
	dir := s.cfg.Dir
	l.transfer, l.transferSize = 0, a.Size
	mode := s.cfg.ReplDisklessLoad
	diskless := mode == "swapdb" || (mode == "on-empty-db" && s.ks.Len() == 0)
	s.mu.Unlock()
	pr := replication.NewPayloadReader(&deadlineReader{r: br, conn: l.conn, timeout: timeout}, h)
	if diskless {
		return s.loadPayloadSocket(l, pr, a, mode == "swapdb")
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("temp-%d-*.rdb", os.Getpid()))
	if err != nil {
		return fmt.Errorf("Opening the temp file needed for MASTER <-> REPLICA synchronization: %v", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // renamed over dbfilename on success
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return fmt.Errorf("Write error or short write writing to the DB dump file needed for MASTER <-> REPLICA synchronization: %v", werr)
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
	if err := f.Sync(); err != nil {
		return fmt.Errorf("Failed trying to sync the temp DB to disk in MASTER <-> REPLICA synchronization: %v", err)
	}
	size, _ := f.Seek(0, io.SeekEnd)
	empty, fresh := rdbPayloadKind(f)
	f.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.stopped {
		return errors.New("stopped")
	}
	if err := s.guardEmptySync(l, empty, fresh); err != nil {
		return err
	}
	s.replPrepareLoad()
	s.replAttachToNewMaster()
	s.log.Info().Msg("MASTER <-> REPLICA sync: Flushing old data")
	s.ks.FlushAll()
	s.trackingFlush(s.cfg.ReplicaLazyFlush) // tracking.go: emptyData's signalFlushedDb
	path := s.rdbPath()
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("Failed trying to rename the temp DB into %s in MASTER <-> REPLICA synchronization: %v", s.cfg.DBFilename, err)
	}
	s.log.Info().Msg("MASTER <-> REPLICA sync: Loading DB in memory")
	rf, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("Failed trying to load the MASTER synchronization DB from disk: %v", err)
	}
	defer rf.Close()
	s.replStartLoading(l, size, false)
	_, _, err = s.loadRDBInto(s.ks, bufio.NewReaderSize(countingReader{r: rf, n: &s.rdb.loadLoaded}, 64<<10), true, false, true)
	s.replStopLoading(l)
	if err != nil {
		if !errors.Is(err, ErrLoadAborted) {
			s.log.Warn().Msgf("Failed trying to load the MASTER synchronization DB from disk: %v", err)
		}
		s.ks.FlushAll() // never serve half a dataset
		return fmt.Errorf("Failed trying to load the MASTER synchronization DB from disk: %v", err)
	}
	if s.cfg.RDBDelSyncFiles && !s.cfg.AppendOnly && len(s.cfg.Save) == 0 {
		s.log.Info().Msg("Removing the RDB file obtained from the master. This replica has persistence disabled")
		os.Remove(path)
	}
	s.replRestartAOF()
	return nil
}

// loadPayloadSocket is readSyncBulkPayload's diskless load: the RDB is
// parsed as it arrives (the execution lock is released while the socket
// is read). on-empty-db and swapdb without the master's own ID load in
// the loading state; swapdb loads into a temporary keyspace swapped in
// at the end, so a failed load keeps the old data, and when the master's
// replication ID is this node's (the old data is an earlier point of the
// same history) the old data is served meanwhile (async loading).
func (s *Server) loadPayloadSocket(l *replLink, pr io.Reader, a replication.ExpectPayload, swapdb bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l.stopped {
		return errors.New("stopped")
	}
	s.replPrepareLoad()
	dst := s.ks
	async := false
	if swapdb {
		dst = keyspace.New(len(s.ks.DBs))
		dst.Encodings = s.ks.Encodings
		async = l.masterReplID != "" && l.masterReplID == s.repl.ids.ID
	} else {
		s.replAttachToNewMaster()
		s.log.Info().Msg("MASTER <-> REPLICA sync: Flushing old data")
		s.ks.FlushAll()
		s.trackingFlush(s.cfg.ReplicaLazyFlush) // tracking.go: emptyData's signalFlushedDb
	}
	s.log.Info().Msg("MASTER <-> REPLICA sync: Loading DB in memory")
	s.repl.auxFresh = false
	s.replStartLoading(l, a.Size, async)
	r := &replLoadReader{s: s, l: l, r: pr}
	br := bufio.NewReaderSize(r, 64<<10)
	_, _, err := s.loadRDBInto(dst, br, true, false, true)
	if err == nil {
		// The payload must end with the RDB (and, EOF-marked, the mark,
		// which the payload reader consumed): nothing may follow.
		if n, rerr := io.Copy(io.Discard, br); rerr != nil || n > 0 {
			if a.EOFMark != "" {
				err = errors.New("Replication stream EOF marker is broken")
			} else if rerr != nil {
				err = rerr
			} else {
				err = errors.New("junk after the RDB in the payload")
			}
		}
	}
	if err != nil {
		var re *rdb.Error
		if errors.As(err, &re) && (re.Reason == rdb.ShortRead || re.Line == -1) {
			// rdbReportReadError on a socket (rdbReportError's
			// diskless short read): logged, and the link tries again.
			if re.Line == -1 {
				s.log.Warn().Msg(re.Reason)
			}
			s.log.Warn().Msg(rdb.ShortRead)
			s.log.Warn().Msgf("Internal error in RDB reading offset %d, function at rdb.c:3249 -> Unexpected EOF reading RDB file. "+
				"Failure loading rdb format from socket, assuming connection error, resuming operation.", s.loadingLoadedBytes())
		}
		s.replStopLoading(l)
		if !errors.Is(err, ErrLoadAborted) {
			s.log.Warn().Msgf("Failed trying to load the MASTER synchronization DB from socket: %v", err)
		}
		if swapdb {
			s.log.Info().Msg("MASTER <-> REPLICA sync: Discarding temporary DB in background")
		} else {
			s.ks.FlushAll() // never serve half a dataset
		}
		return fmt.Errorf("Failed trying to load the MASTER synchronization DB from socket: %v", err)
	}
	if swapdb {
		if gerr := s.guardEmptySync(l, dst.Len() == 0, s.repl.auxFresh); gerr != nil {
			s.replStopLoading(l)
			s.log.Info().Msg("MASTER <-> REPLICA sync: Discarding temporary DB in background")
			s.replRestartAOF()
			return gerr
		}
		// The sub-replicas go first: a full sync of theirs ends its
		// snapshot when they are gone.
		s.replAttachToNewMaster()
		if err := s.replWaitNoSnapshot(); err != nil {
			s.replStopLoading(l)
			return err
		}
		s.log.Info().Msg("MASTER <-> REPLICA sync: Swapping active DB with loaded DB")
		s.ks.SwapWith(dst)
		s.trackingFlush(true) // tracking.go: swapMainDbWithTempDb (always async)
		s.log.Info().Msg("MASTER <-> REPLICA sync: Discarding old DB in background")
	}
	s.ks.Dirty++ // diskless: the data changed without a save
	s.replStopLoading(l)
	s.replRestartAOF()
	return nil
}

// synced records a completed sync (lock held): the link has followed its
// master, and an operator's override is used up.
func (l *replLink) synced() {
	l.followed, l.acceptEmpty, l.refusedEmpty = true, false, ""
}

// errRefusedEmpty ends a link session whose payload the guard refused.
var errRefusedEmpty = errors.New("full sync refused: the master offers an empty dataset (replica-refuse-empty-sync)")

// guardEmptySync is the empty-restart guard (lock held), asked once a
// full-sync payload has been received and before anything of the old data
// is discarded: when replication.RefuseEmptySync says so, the refusal is
// logged and shown in INFO, and the session ends without loading or
// ACKing (the link retries a second later).
func (s *Server) guardEmptySync(l *replLink, payloadEmpty, masterFresh bool) error {
	refuse, why := replication.RefuseEmptySync(replication.EmptySyncInput{
		Enabled: s.cfg.ReplicaRefuseEmptySync, Followed: l.followed, Overridden: l.acceptEmpty,
		LocalKeys: int64(s.ks.Len()), PayloadEmpty: payloadEmpty, MasterFresh: masterFresh,
		MasterReplID: l.masterReplID, MyIDs: s.repl.ids, Host: l.host, Port: l.port,
	})
	if !refuse {
		return nil
	}
	if l.refusedEmpty == "" {
		s.log.Warn().Msg(why)
	}
	l.refusedEmpty = why
	return errRefusedEmpty
}

// acceptEmptySync is an operator's REPLICAOF naming the master whose
// payload the guard refuses (lock held): the next full sync loads it.
func (s *Server) acceptEmptySync(c *Client, args [][]byte) {
	l := s.repl.link
	if l == nil {
		return
	}
	l.acceptEmpty = true
	s.log.Warn().Msgf("Empty-restart guard cleared for MASTER %s:%d (user request from '%s'): the next full sync loads what the master holds",
		l.host, l.port, s.appendClientInfo(nil, c, c, args, "replicaof"))
}

// rdbPayloadKind reads the RDB in f up to its first key: empty is true
// when it holds no key in any database, fresh when it carries the aux
// field vigil-fresh-start (aux fields come before the keys). An unreadable
// file counts as not empty (the load reports its error).
func rdbPayloadKind(f *os.File) (empty, fresh bool) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, false
	}
	errKey := errors.New("has a key")
	opts := rdb.LoadOptions{Databases: 1 << 16, OnAux: func(a rdb.AuxField) error {
		if a.Key == auxFreshStart && a.Value == "1" {
			fresh = true
		}
		return nil
	}}
	_, err := rdb.Load(bufio.NewReaderSize(f, 64<<10), opts, func(rdb.Record) error { return errKey })
	return err == nil, fresh
}

// replLoadReader reads the payload for a diskless load: the execution
// lock (held by the loader) is released while the socket is read, so that
// clients get -LOADING (or, async, the old data) instead of waiting; the
// bytes count as transferred and loaded.
type replLoadReader struct {
	s *Server
	l *replLink
	r io.Reader
}

func (r *replLoadReader) Read(p []byte) (int, error) {
	r.s.mu.Unlock()
	n, err := r.r.Read(p)
	r.s.mu.Lock()
	if n > 0 {
		r.l.transfer += int64(n)
		r.l.lastIO = r.s.clock.Now()
		r.s.rdb.loadLoaded += int64(n)
	}
	if err == io.EOF {
		return n, err
	}
	if err != nil {
		return n, fmt.Errorf("I/O error trying to sync with MASTER: %v", err)
	}
	return n, nil
}

// replPrepareLoad is what readSyncBulkPayload does before any load (lock
// held): the AOF is stopped (restarted after a successful sync, see
// replRestartAOF) and a BGSAVE killed, so that nothing writes a file from
// half a dataset.
func (s *Server) replPrepareLoad() {
	if s.aof.mgr != nil && s.aof.mgr.W != nil {
		if err := s.aofStop(); err != nil {
			s.log.Warn().Msgf("Stopping the AOF before loading the MASTER synchronization DB: %v", err)
		}
		if l := s.repl.link; l != nil {
			l.restartAOF = true
		}
	}
	if s.rdb.job != nil {
		s.log.Info().Msg("Replica is about to load the RDB file received from the master, but there is a pending RDB child running. Killing process and removing its temp file to avoid any race")
		s.killBgsave()
	}
}

// replRestartAOF is restartAOFAfterSYNC (lock held): the AOF stopped for
// the load is started again (a rewrite writes the new base).
func (s *Server) replRestartAOF() {
	l := s.repl.link
	if l == nil || !l.restartAOF || !s.cfg.AppendOnly {
		return
	}
	l.restartAOF = false
	if err := s.aofOnConfigSet("appendonly"); err != nil {
		s.log.Warn().Msgf("Failed enabling the AOF after successful master synchronization! Trying it again in one second: %v", err)
	}
}

// replAttachToNewMaster is replicationAttachToNewMaster (lock held): the
// sub-replicas are dropped (they must resync with the new data).
func (s *Server) replAttachToNewMaster() {
	for _, rp := range append([]*replica(nil), s.repl.replicas...) {
		s.dropReplica(rp, "")
	}
}

// replWaitNoSnapshot waits (releasing the lock) until no snapshot runs,
// killing a BGSAVE: a swapdb swap must not happen under one. A shutdown
// meanwhile aborts.
func (s *Server) replWaitNoSnapshot() error {
	s.ldbFinishCopy() // a debugging child's copy does not wait
	for s.ks.Snapshotting() {
		s.killBgsave()
		s.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.mu.Lock()
		if s.closing.Load() {
			return ErrLoadAborted
		}
	}
	return nil
}

// replStartLoading is startLoading for a replication payload (lock held):
// INFO's loading (or async_loading) and loading_* fields; no cron runs
// meanwhile.
func (s *Server) replStartLoading(l *replLink, total int64, async bool) {
	s.rdb.loading = true
	l.asyncLoading = async
	s.replLoading.Store(!async)
	s.rdb.loadStart = s.clock.Now().Unix()
	s.rdb.loadTotal = total
	s.rdb.loadLoaded = 0
	s.rdb.loadUsedMem = 0
}

// replStopLoading is stopLoading (lock held).
func (s *Server) replStopLoading(l *replLink) {
	s.rdb.loading = false
	l.asyncLoading = false
	s.replLoading.Store(false)
}

// asyncLoading is server.async_loading (lock held).
func (s *Server) asyncLoading() bool {
	return s.repl.link != nil && s.repl.link.asyncLoading
}

type deadlineReader struct {
	r       io.Reader
	conn    net.Conn
	timeout time.Duration
}

func (d *deadlineReader) Read(p []byte) (int, error) {
	d.conn.SetReadDeadline(netClock.Now().Add(d.timeout))
	return d.r.Read(p)
}

// applyStream executes the master's stream as the master client. As
// Redis's processInputBuffer on the master client, every complete command
// already read is executed in one go, under one acquisition of the
// execution lock: the commands are parsed in place from the read buffer
// (internal/resp's Reader in ModeMaster, which grows its buffer for a
// command longer than what was read), so a batch costs one lock, one read
// deadline and no allocation per command. Each command still moves the
// offsets and feeds the sub-replicas on its own, as it did one at a time.
func (s *Server) applyStream(l *replLink, conn net.Conn, br *bufio.Reader, timeout time.Duration) error {
	mc := &Client{srv: s, conn: conn, id: s.nextID.Add(1), addr: conn.RemoteAddr().String(), laddr: conn.LocalAddr().String(),
		created: s.clock.Now(), user: "default", authed: true}
	mc.w.Proto = 2
	mc.replRole.Store(kindMaster)
	mc.lastInteraction.Store(s.clock.Now().UnixMilli())
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
	mc.db = s.repl.masterDB // the cached master's db (a full sync set it from the payload)
	l.downSince = time.Time{}
	l.lastAck = time.Time{} // the first cron tick ACKs
	s.mu.Unlock()
	// The stream is parsed in place by internal/resp's Reader in
	// ModeMaster, first from what br holds after the handshake, then from
	// the connection through it.
	rd := resp.NewReader(br, resp.DefaultLimits)
	rd.SetMode(resp.ModeMaster)
	var (
		pendingRaw []byte
		args       [][]byte    // the batch's argv, back to back
		cmds       []streamCmd // the batch's commands
		deadline   time.Time   // the read deadline armed last
	)
	for {
		if mc.killed.Load() {
			return errors.New("master client killed")
		}
		args, cmds = args[:0], cmds[:0]
		for {
			argv, raw, err := rd.NextRaw()
			if err != nil {
				return err
			}
			if raw == nil {
				break
			}
			cmds = append(cmds, streamCmd{raw: raw, a: len(args), b: len(args) + len(argv), bare: len(argv) == 0})
			args = append(args, argv...)
		}
		if len(cmds) == 0 {
			// The deadline is re-armed at most every 100ms (the timeout
			// is whole seconds): not a timer update per read.
			if now := netClock.Now(); deadline.IsZero() || now.Add(timeout).Sub(deadline) > 100*time.Millisecond {
				deadline = now.Add(timeout)
				conn.SetReadDeadline(deadline)
			}
			if err := rd.Fill(); err != nil {
				return err
			}
			continue
		}
		waited, err := s.lockApply(rd, conn, args, cmds)
		if err != nil {
			return err
		}
		if waited {
			deadline = time.Time{} // lockApply's short deadlines: re-armed
		}
		now := s.clock.Now()
		mc.lastInteraction.Store(now.UnixMilli())
		if s.realClock {
			// As runBatchPart: the batch's command times follow from its
			// start (exec), read under the lock.
			mc.cmdEnd, mc.batchStart = now, now
		}
		l.lastIO = s.clock.Now()
		for _, sc := range cmds {
			if l.stopped || l.mc != mc || mc.killed.Load() {
				mc.cmdEnd, mc.batchStart = time.Time{}, time.Time{}
				s.mu.Unlock()
				if mc.killed.Load() {
					return errors.New("master client killed")
				}
				return errors.New("stopped")
			}
			n := len(sc.raw)
			l.offsets.Received(n)
			if sc.bare { // a bare newline (or an empty multibulk)
				l.offsets.Skipped(n)
				pendingRaw = append(pendingRaw, sc.raw...)
				continue
			}
			argv := args[sc.a:sc.b:sc.b]
			if len(argv) >= 2 && eqFold(argv[0], "replconf") && eqFold(argv[1], "getack") {
				conn.SetWriteDeadline(netClock.Now().Add(timeout))
				_, _ = conn.Write(l.offsets.GetAck())
			} else {
				s.repl.applying = true
				s.ks.MasterCommand = true
				s.current = mc
				s.call(mc, argv)
				s.repl.masterDB = mc.db
				s.current = nil
				s.ks.MasterCommand = false
				s.repl.applying = false
				mc.w.B = mc.w.B[:0]
			}
			if done := l.offsets.Processed(n, mc.multi != nil); done > 0 {
				if len(pendingRaw) == 0 {
					s.replFeed(sc.raw)
				} else {
					s.replFeed(append(pendingRaw, sc.raw...))
					pendingRaw = pendingRaw[:0]
				}
				s.repl.offset = l.offsets.Applied
			} else {
				pendingRaw = append(pendingRaw, sc.raw...)
			}
		}
		mc.cmdEnd, mc.batchStart = time.Time{}, time.Time{}
		s.mu.Unlock()
		if cap(pendingRaw) > 1<<20 && len(pendingRaw) == 0 {
			pendingRaw = nil
		}
	}
}

// lockApply takes the execution lock to apply a batch of the master's
// stream (args, cmds). While a script past the busy threshold holds it,
// the batch waits and the link goes on reading the stream without
// applying it, as processInputBuffer leaves the master client's commands
// in its query buffer while isInsideYieldingLongCommand: a link the
// master closed meanwhile (its output buffer limit) is noticed, and the
// replica reconnects during the script. The batch is copied out of the
// reader's buffer first, which the reads compact. waited: the read
// deadline was changed.
func (s *Server) lockApply(rd *resp.Reader, conn net.Conn, args [][]byte, cmds []streamCmd) (waited bool, err error) {
	for {
		b := s.lockBatch()
		if b == nil {
			return waited, nil
		}
		if !waited {
			waited = true
			for i := range args {
				args[i] = append([]byte(nil), args[i]...)
			}
			for i := range cmds {
				cmds[i].raw = append([]byte(nil), cmds[i].raw...)
			}
		}
		conn.SetReadDeadline(netClock.Now().Add(10 * time.Millisecond))
		if err := rd.Fill(); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return waited, err
		}
	}
}

// streamCmd is one command of an applyStream batch: its stream bytes and
// its argv (args[a:b]); bare is a bare newline or an empty multibulk,
// never executed.
type streamCmd struct {
	raw  []byte
	a, b int
	bare bool
}

// ackAgain runs at every cron tick (lock held): after a diskless full
// sync's first ACK (sent at once, as readSyncBulkPayload's), the replica
// ACKs again every tick (100 ms at hz 10) until the master's stream starts
// or a second passed, where Redis's replica waits for replicationCron's
// next ACK, up to a second. A Redis 7.0 master starts a diskless replica's
// stream on the first ACK it gets once it has seen its RDB child exit
// (replconfCommand: repl_start_cmd_stream_on_ack); an ACK that comes
// before that is spent, and the stream, a WAIT for it, and the replica's
// lag waited for the next one: 0.7-0.9 s after the sync in about half of
// the tries with a fast replica (issue 24's WAIT benchmark failed its
// first WAIT 1 1000 on this). An extra ACK of the same offset changes
// nothing on any master.
func (l *replLink) ackAgain(now time.Time) {
	if l.ackUntil.IsZero() {
		return
	}
	if !now.Before(l.ackUntil) || l.offsets.Read != l.ackFrom || l.prePsync ||
		l.hs.State != replication.StateConnected || l.conn == nil {
		l.ackUntil = time.Time{}
		return
	}
	l.sendAck()
}

// sendAck is replicationSendAck (lock held): REPLCONF ACK with the
// applied offset.
func (l *replLink) sendAck() {
	l.conn.SetWriteDeadline(netClock.Now().Add(time.Second))
	_, _ = l.conn.Write(replication.AckCommand(l.offsets.Applied))
}

// cron is the replica half of replicationCron (lock held): the ACK every
// second and the link timeout.
func (l *replLink) cron(s *Server) {
	now := s.clock.Now()
	if l.hs.State == replication.StateConnected && l.conn != nil && l.mc != nil {
		if replication.AckDue(l.prePsync, l.lastAck, now) {
			l.lastAck = now
			l.sendAck()
		}
	}
	// Connected before applyStream made the master client (the
	// moment after a full sync's payload, where Redis creates both at
	// once): the payload's last I/O, not the epoch, which timed the link
	// out at once when a cron tick fell there.
	last := l.lastIO
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
	in.RefusedEmptyReason = l.refusedEmpty
	in.ReplicaPriority = s.cfg.ReplicaPriority
	in.ReplicaReadOnly = s.cfg.ReplicaReadOnly
	in.ReplicaAnnounced = s.cfg.ReplicaAnnounced
}

// dialMaster connects to the master, from bind-source-addr when it is set:
// connectWithMaster's anetTcpNonBlockBestEffortBindConnect, which, when the
// connection from that address cannot be made (an address this host does
// not have), tries again without it.
func dialMaster(addr, source string) (net.Conn, error) {
	if source != "" {
		if ips, err := net.LookupIP(source); err == nil && len(ips) > 0 {
			d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: ips[0]}}
			if conn, err := d.Dial("tcp", addr); err == nil {
				return conn, nil
			}
		}
	}
	return net.DialTimeout("tcp", addr, 5*time.Second)
}
