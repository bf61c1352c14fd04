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
// RESTORE commands (after AUTH and SELECT) in one write, and unless COPY
// deleted here once the target acknowledged them, propagated as DEL. Like
// Redis it blocks the server for the transfer (at most timeout ms per
// network operation) and retries once after a socket error that is not a
// timeout. Unlike Redis it does not keep the connection for the next
// MIGRATE (migrate_cached_sockets stays 0).

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
		case eqFold(a, "auth2"):
			if more < 2 {
				c.w.Error(ErrSyntax)
				return
			}
			user, password, hasAuth = args[j+1], args[j+2], true
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

	// The payload: [AUTH], SELECT, then one RESTORE per key still alive.
	db := c.selectedDB()
	var cmd []byte
	if hasAuth {
		if user != nil {
			cmd = resp.AppendCommand(cmd, []byte("AUTH"), user, password)
		} else {
			cmd = resp.AppendCommand(cmd, []byte("AUTH"), password)
		}
	}
	cmd = resp.AppendCommand(cmd, []byte("SELECT"), strconv.AppendInt(nil, dbid, 10))
	sent := keys[:0:0]
	for _, k := range keys {
		e := db.Peek(k)
		if e == nil {
			continue
		}
		ttl := int64(0)
		if e.ExpireAt != 0 {
			ttl = e.ExpireAt - s.nowMs
			if ttl < 0 {
				continue
			}
			ttl = max(ttl, 1)
		}
		argv := [][]byte{[]byte("RESTORE"), k, strconv.AppendInt(nil, ttl, 10), rdb.DumpPayload(e.Value(), s.cfg.RDBCompression)}
		if replace {
			argv = append(argv, []byte("REPLACE"))
		}
		cmd = resp.AppendCommand(cmd, argv...)
		sent = append(sent, k)
	}

	host := string(args[1])
	port := string(args[2])
	d := time.Duration(timeout) * time.Millisecond
	var replies []string
	var writeErr bool
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var conn net.Conn
		conn, err = net.DialTimeout("tcp", net.JoinHostPort(host, port), d)
		if errors.Is(err, syscall.ECONNREFUSED) {
			// Redis's non-blocking connect reports the socket writable
			// and the refusal surfaces on the write.
			writeErr = true
			continue
		}
		if err != nil {
			c.w.Error("IOERR error or timeout connecting to the client")
			return
		}
		replies, writeErr, err = migrateExchange(conn, cmd, hasAuth, len(sent), d)
		conn.Close()
		// Retry once, as Redis does after a socket error, unless it was
		// a timeout or the target has already answered something.
		if err == nil || errors.Is(err, errMigrateTimeout) || len(replies) > 0 {
			break
		}
	}

	// replies: [AUTH], SELECT, then one per RESTORE, as far as read.
	head := 1
	if hasAuth {
		head = 2
	}
	var targetErr string
	for i := 0; i < head && i < len(replies); i++ {
		if replies[i][0] == '-' && targetErr == "" {
			targetErr = replies[i][1:]
		}
	}
	var deleted [][]byte
	for j := 0; head+j < len(replies); j++ {
		r := replies[head+j]
		if targetErr != "" || r[0] == '-' {
			if targetErr == "" {
				targetErr = r[1:]
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
	if len(deleted) > 0 && s.propagating() {
		c.rewriteArgv(append([][]byte{argvDel[0]}, deleted...)...)
	}
	switch {
	case targetErr != "":
		c.w.Error("ERR Target instance replied with error: " + targetErr)
	case err != nil:
		what := "reading"
		if writeErr {
			what = "writing"
		}
		c.w.Error("IOERR error or timeout " + what + " to target instance")
	default:
		c.w.OK()
	}
}

// migrateExchange writes cmd to conn and reads the reply lines: AUTH's
// when auth, SELECT's, and restores RESTORE replies (each a status or an
// error line), each operation within d. It returns the lines read (up to
// an error), whether the error was on the write, and the error.
func migrateExchange(conn net.Conn, cmd []byte, auth bool, restores int, d time.Duration) ([]string, bool, error) {
	for off := 0; off < len(cmd); {
		n := min(len(cmd)-off, 64<<10)
		conn.SetWriteDeadline(time.Now().Add(d))
		w, err := conn.Write(cmd[off : off+n])
		if err != nil {
			return nil, true, migrateErr(err)
		}
		off += w
	}
	want := restores + 1
	if auth {
		want++
	}
	br := bufio.NewReader(conn)
	var out []string
	for len(out) < want {
		conn.SetReadDeadline(time.Now().Add(d))
		line, err := br.ReadString('\n')
		if err != nil {
			return out, false, migrateErr(err)
		}
		line = trimCRLF(line)
		if line == "" {
			return out, false, errors.New("empty reply")
		}
		out = append(out, line)
	}
	return out, false, nil
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
