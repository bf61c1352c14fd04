package server

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/rdb"
)

// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
// [AUTH password] [AUTH2 username password] [KEYS key ...], as cluster.c's
// migrateCommand (Redis 7.0): the keys are DUMPed, sent to the target as
// RESTORE commands (after AUTH, and SELECT unless the connection has that
// db selected already) in one write, and unless COPY
// deleted here once the target acknowledged them, propagated as DEL. Like
// Redis it blocks the server for the transfer (at most timeout ms per
// network operation) and retries once after a socket error that is not a
// timeout, when the target has processed nothing. The connection is kept for the next MIGRATE to the same target
// (migrateGetSocket below).

func init() {
	register(&Command{Name: "migrate", Arity: -6, Flags: FlagWrite | FlagMovableKeys, FirstKey: 3, LastKey: 3, Step: 1,
		ACL: []string{"keyspace", "write", "slow", "dangerous"}, Handler: cmdMigrate})
}

var errMigrateTimeout = errors.New("timeout")

// migrateGetKeys is what COMMAND GETKEYS finds in a MIGRATE: Redis tries
// the key specs first (the key argument; KEYS, searched backwards from
// the second last argument, is an incomplete spec) and when KEYS is found
// falls back to db.c's migrateGetKeys: every argument after KEYS (AUTH
// and AUTH2 arguments skipped while looking for it), or no key at all
// when the key argument is not empty.
func migrateGetKeys(argv [][]byte) []keyRef {
	flags := []string{"RW", "access", "delete"}
	found := false
	for i := len(argv) - 2; i > 0; i-- {
		if eqFold(argv[i], "keys") {
			found = true
			break
		}
	}
	if !found {
		return []keyRef{{pos: 3, flags: flags}}
	}
	first, num := 3, 1
	for i := 6; i < len(argv); i++ {
		if eqFold(argv[i], "keys") {
			if len(argv[3]) > 0 {
				return nil
			}
			first, num = i+1, len(argv)-i-1
			break
		}
		switch {
		case eqFold(argv[i], "auth"):
			i++
		case eqFold(argv[i], "auth2"):
			i += 2
		}
	}
	keys := make([]keyRef, 0, num)
	for i := first; i < first+num; i++ {
		keys = append(keys, keyRef{pos: i, flags: flags})
	}
	return keys
}

func cmdMigrate(c *Client, args [][]byte) {
	s := c.srv
	var copyKeys, replace bool
	var user, password []byte
	hasAuth := false
	firstKey, numKeys := 3, 1
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch a := args[j]; {
		case eqFold(a, "copy"):
			copyKeys = true
		case eqFold(a, "replace"):
			replace = true
		case eqFold(a, "auth"):
			if more < 1 {
				c.w.Error(ErrSyntax)
				return
			}
			j++
			password, hasAuth = args[j], true
			redactArgs(args, j, j) // SLOWLOG and MONITOR show "(redacted)"
		case eqFold(a, "auth2"):
			if more < 2 {
				c.w.Error(ErrSyntax)
				return
			}
			user, password, hasAuth = args[j+1], args[j+2], true
			redactArgs(args, j+1, j+2)
			j += 2
		case eqFold(a, "keys"):
			if len(args[3]) != 0 {
				c.w.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			firstKey, numKeys = j+1, len(args)-j-1
			j = len(args)
		default:
			c.w.Error(ErrSyntax)
			return
		}
	}
	timeout, ok := parseInt(args[5])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	dbid, ok := parseInt(args[4])
	if !ok {
		c.w.Error(ErrNotInteger)
		return
	}
	if timeout <= 0 {
		timeout = 1000
	}
	var keys [][]byte
	for _, k := range args[firstKey : firstKey+numKeys] {
		if c.lookupKeyRead(k) != nil {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		c.w.Simple("NOKEY")
		return
	}

	// The RESTOREs, one per key still alive; AUTH and SELECT go before
	// them on each attempt (SELECT only when the socket's db differs).
	db := c.selectedDB()
	var restores []byte
	sent := keys[:0:0]
	for _, k := range keys {
		e := db.Peek(k)
		if e == nil {
			continue
		}
		ttl := int64(0)
		if at := db.ExpireAt(e); at != 0 {
			ttl = at - s.nowMs
			if ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		argv := [][]byte{[]byte("RESTORE"), k, strconv.AppendInt(nil, ttl, 10), rdb.DumpPayload(e.Value(), s.cfg.RDBCompression)}
		if replace {
			argv = append(argv, []byte("REPLACE"))
		}
		restores = resp.AppendCommand(restores, argv...)
		sent = append(sent, k)
	}

	host, port := string(args[1]), string(args[2])
	d := time.Duration(timeout) * time.Millisecond
	mayRetry := true
	for {
		// One attempt, as migrateCommand from try_again: a socket error
		// closes the cached socket and, unless it was a timeout, retries
		// once with a new one (the cached socket is often found closed).
		ms, err := s.migrateGetSocket(host, port, d)
		writeErr := false
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Redis's non-blocking connect reports the socket writable
			// and the refusal surfaces on the write.
			writeErr = true
		} else if err != nil {
			c.w.Error("IOERR error or timeout connecting to the client")
			return
		}
		var cmd []byte
		selectDB := false
		if err == nil {
			if hasAuth {
				if user != nil {
					cmd = resp.AppendCommand(cmd, []byte("AUTH"), user, password)
				} else {
					cmd = resp.AppendCommand(cmd, []byte("AUTH"), password)
				}
			}
			if selectDB = ms.lastDB != dbid; selectDB {
				cmd = resp.AppendCommand(cmd, []byte("SELECT"), strconv.AppendInt(nil, dbid, 10))
			}
			cmd = append(cmd, restores...)
			err = ms.write(cmd, d)
			writeErr = err != nil
		}
		// The AUTH and SELECT replies: a socket error there is retried.
		var authReply, selectReply string
		if err == nil && hasAuth {
			authReply, err = ms.readLine(d)
		}
		if err == nil && selectDB {
			selectReply, err = ms.readLine(d)
		}
		if err != nil {
			s.migrateCloseSocket(host, port)
			if mayRetry && !errors.Is(err, errMigrateTimeout) {
				mayRetry = false
				continue
			}
			c.w.Error(migrateIOErr(writeErr))
			return
		}

		// The RESTORE replies: the keys acknowledged are deleted here
		// (unless COPY) as they are read.
		var targetErr string
		var deleted [][]byte
		j := 0
		for ; j < len(sent); j++ {
			var r string
			if r, err = ms.readLine(d); err != nil {
				break
			}
			if isErrLine(authReply) || isErrLine(selectReply) || isErrLine(r) {
				if targetErr == "" {
					// On error the socket's db is no longer known.
					ms.lastDB = -1
					switch {
					case isErrLine(authReply):
						targetErr = authReply[1:]
					case isErrLine(selectReply):
						targetErr = selectReply[1:]
					default:
						targetErr = r[1:]
					}
				}
				continue
			}
			if !copyKeys {
				k := sent[j]
				db.Delete(k)
				c.touch(k)
				c.notify(configs.NotifyGeneric, "del", k)
				s.ks.Dirty++
				deleted = append(deleted, k)
			}
		}
		// Nothing was processed and the first RESTORE reply could not be
		// read: retry (not after a timeout).
		if targetErr == "" && err != nil && j == 0 && mayRetry && !errors.Is(err, errMigrateTimeout) {
			s.migrateCloseSocket(host, port)
			mayRetry = false
			continue
		}
		if err != nil {
			s.migrateCloseSocket(host, port)
		}
		if len(deleted) > 0 && s.propagating() {
			c.rewriteArgv(append([][]byte{argvDel[0]}, deleted...)...)
		}
		switch {
		case targetErr != "":
			c.w.Error("ERR Target instance replied with error: " + targetErr)
		case err != nil:
			c.w.Error(migrateIOErr(false))
		default:
			// The target now has dbid selected: no SELECT next time.
			ms.lastDB = dbid
			c.w.OK()
		}
		return
	}
}

func isErrLine(s string) bool { return len(s) > 0 && s[0] == '-' }

func migrateIOErr(writing bool) string {
	what := "reading"
	if writing {
		what = "writing"
	}
	return "IOERR error or timeout " + what + " to target instance"
}

func migrateErr(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errMigrateTimeout
	}
	return err
}

func trimCRLF(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// MIGRATE's socket cache, as cluster.c's: one connection per target
// host:port (the arguments as given), reused by the next MIGRATE to it,
// with the db it last selected there; closed on a socket error, when a
// 65th target needs room (one dropped at random), and by the cron once
// idle for more than MIGRATE_SOCKET_CACHE_TTL seconds. Guarded by mu.
const (
	migrateSocketCacheItems = 64
	migrateSocketCacheTTL   = 10 // seconds
)

type migrateSocket struct {
	conn    net.Conn
	br      *bufio.Reader
	lastDB  int64 // -1: unknown, SELECT first
	lastUse int64 // unix seconds on the server's clock
}

// migrateGetSocket returns the cached socket to host:port, or connects
// a new one (within d) and caches it.
func (s *Server) migrateGetSocket(host, port string, d time.Duration) (*migrateSocket, error) {
	name := host + ":" + port
	if ms := s.migrateSockets[name]; ms != nil {
		ms.lastUse = s.now.Unix()
		return ms, nil
	}
	if len(s.migrateSockets) >= migrateSocketCacheItems {
		for k, ms := range s.migrateSockets { // map order: a random one
			ms.conn.Close()
			delete(s.migrateSockets, k)
			break
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), d)
	if err != nil {
		return nil, err
	}
	if s.migrateSockets == nil {
		s.migrateSockets = make(map[string]*migrateSocket)
	}
	ms := &migrateSocket{conn: conn, br: bufio.NewReader(conn), lastDB: -1, lastUse: s.now.Unix()}
	s.migrateSockets[name] = ms
	return ms, nil
}

// migrateCloseSocket closes and forgets the socket to host:port, if any.
func (s *Server) migrateCloseSocket(host, port string) {
	name := host + ":" + port
	if ms := s.migrateSockets[name]; ms != nil {
		ms.conn.Close()
		delete(s.migrateSockets, name)
	}
}

// migrateCron is migrateCloseTimedoutSockets: the sockets unused for
// more than 10 s are closed.
func (s *Server) migrateCron() {
	now := s.now.Unix()
	for name, ms := range s.migrateSockets {
		if now-ms.lastUse > migrateSocketCacheTTL {
			ms.conn.Close()
			delete(s.migrateSockets, name)
		}
	}
}

// migrateCloseAll closes every cached socket (shutdown).
func (s *Server) migrateCloseAll() {
	for name, ms := range s.migrateSockets {
		ms.conn.Close()
		delete(s.migrateSockets, name)
	}
}

// write sends cmd in 64 KiB chunks, each within d.
func (ms *migrateSocket) write(cmd []byte, d time.Duration) error {
	for off := 0; off < len(cmd); {
		n := min(len(cmd)-off, 64<<10)
		ms.conn.SetWriteDeadline(time.Now().Add(d))
		w, err := ms.conn.Write(cmd[off : off+n])
		if err != nil {
			return migrateErr(err)
		}
		off += w
	}
	return nil
}

// readLine reads one reply line within d; an empty line is an error, as
// syncReadLine's 0.
func (ms *migrateSocket) readLine(d time.Duration) (string, error) {
	ms.conn.SetReadDeadline(time.Now().Add(d))
	line, err := ms.br.ReadString('\n')
	if err != nil {
		return "", migrateErr(err)
	}
	line = trimCRLF(line)
	if line == "" {
		return "", errors.New("empty reply")
	}
	return line, nil
}
