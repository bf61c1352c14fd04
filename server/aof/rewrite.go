package aof

import (
	"bufio"
	"io"
	"math"
	"os"
	"strconv"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// BaseWriter serialises a snapshot into a base file: the RDB encoder
// (aof-use-rdb-preamble yes), supplied by the server, or CommandBase.
type BaseWriter interface {
	WriteItem(it keyspace.Item) error
	Finish() error
}

// BaseFormat is how rewrites write base files: RDB says whether the file
// is RDB (".base.rdb") or commands (".base.aof"); New starts a writer on w.
type BaseFormat struct {
	RDB bool
	New func(w io.Writer) BaseWriter
}

// CommandFormat is the AOF-format base (aof-use-rdb-preamble no).
var CommandFormat = BaseFormat{New: func(w io.Writer) BaseWriter { return NewCommandBase(w) }}

// ItemsPerCmd is AOF_REWRITE_ITEMS_PER_CMD: aggregates are rebuilt with
// commands of at most this many elements.
const ItemsPerCmd = 64

// CommandBase writes a snapshot as the commands that rebuild it, as
// rewriteAppendOnlyFileRio: SELECT when the database changes, then per key
// SET, RPUSH, SADD, ZADD or HMSET (batched by ItemsPerCmd), and
// PEXPIREAT for a key with a TTL.
type CommandBase struct {
	w     io.Writer
	buf   []byte
	db    int
	began bool
	err   error
}

// NewCommandBase writes to w.
func NewCommandBase(w io.Writer) *CommandBase { return &CommandBase{w: w} }

func (c *CommandBase) cmd(argv ...[]byte) {
	c.buf = resp.AppendCommand(c.buf, argv...)
}

func (c *CommandBase) flushIfBig() error {
	if len(c.buf) >= 64<<10 {
		return c.flush()
	}
	return nil
}

func (c *CommandBase) flush() error {
	if c.err != nil {
		return c.err
	}
	if len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
		c.buf = c.buf[:0]
	}
	return c.err
}

var (
	wSelect    = []byte("SELECT")
	wSet       = []byte("SET")
	wRPush     = []byte("RPUSH")
	wSAdd      = []byte("SADD")
	wZAdd      = []byte("ZADD")
	wHMSet     = []byte("HMSET")
	wPExpireAt = []byte("PEXPIREAT")
)

// WriteItem implements BaseWriter.
func (c *CommandBase) WriteItem(it keyspace.Item) error {
	if !c.began || it.DB != c.db {
		c.cmd(wSelect, strconv.AppendInt(nil, int64(it.DB), 10))
		c.db, c.began = it.DB, true
	}
	key := []byte(it.Key)
	switch v := it.Value.(type) {
	case *keyspace.String:
		c.cmd(wSet, key, v.Bytes())
	case *keyspace.List:
		n := v.Len()
		for i := 0; i < n; i += ItemsPerCmd {
			argv := [][]byte{wRPush, key}
			for j := i; j < n && j < i+ItemsPerCmd; j++ {
				argv = append(argv, v.Index(j))
			}
			c.cmd(argv...)
			if err := c.flushIfBig(); err != nil {
				return err
			}
		}
	case *keyspace.Set:
		argv := [][]byte{wSAdd, key}
		v.Range(func(m keyspace.Member) bool {
			argv = append(argv, m.AppendTo(nil))
			if len(argv)-2 == ItemsPerCmd {
				c.cmd(argv...)
				argv = argv[:2]
			}
			return true
		})
		if len(argv) > 2 {
			c.cmd(argv...)
		}
	case *keyspace.ZSet:
		argv := [][]byte{wZAdd, key}
		if n := v.Len(); n > 0 {
			v.ByRank(0, n-1, false, func(member string, score float64) bool {
				argv = append(argv, formatScore(score), []byte(member))
				if (len(argv)-2)/2 == ItemsPerCmd {
					c.cmd(argv...)
					argv = argv[:2]
				}
				return true
			})
		}
		if len(argv) > 2 {
			c.cmd(argv...)
		}
	case *keyspace.Hash:
		argv := [][]byte{wHMSet, key}
		v.Range(func(f, val string) bool {
			argv = append(argv, []byte(f), []byte(val))
			if (len(argv)-2)/2 == ItemsPerCmd {
				c.cmd(argv...)
				argv = argv[:2]
			}
			return true
		})
		if len(argv) > 2 {
			c.cmd(argv...)
		}
	case *keyspace.Stream:
		if err := c.writeStream(key, v); err != nil {
			return err
		}
	default:
		return &unsupportedError{typ: it.Value.Type().String()}
	}
	if it.ExpireAt != 0 {
		c.cmd(wPExpireAt, key, strconv.AppendInt(nil, it.ExpireAt, 10))
	}
	return c.flushIfBig()
}

// writeStream is rewriteStreamObject: an XADD per entry (or, for an
// empty stream, XADD MAXLEN 0 of a dummy entry), XSETID with the last ID,
// ENTRIESADDED and MAXDELETEDID, then per group (in name order) XGROUP
// CREATE with ENTRIESREAD, an XCLAIM ... JUSTID FORCE per pending entry of
// each consumer and XGROUP CREATECONSUMER for a consumer without any.
func (c *CommandBase) writeStream(key []byte, v *keyspace.Stream) error {
	if v.Len() > 0 {
		var err error
		_ = v.WalkEntries(func(ms, seq uint64, fv [][]byte) {
			if err != nil {
				return
			}
			argv := append(make([][]byte, 0, 3+len(fv)), []byte("XADD"), key, streamID(keyspace.StreamID{Ms: ms, Seq: seq}))
			c.cmd(append(argv, fv...)...)
			err = c.flushIfBig()
		})
		if err != nil {
			return err
		}
	} else {
		c.cmd([]byte("XADD"), key, []byte("MAXLEN"), []byte("0"), []byte("0-1"), []byte("x"), []byte("y"))
	}
	c.cmd([]byte("XSETID"), key, streamID(v.LastID()), []byte("ENTRIESADDED"),
		strconv.AppendUint(nil, v.EntriesAdded(), 10), []byte("MAXDELETEDID"), streamID(v.MaxDeletedID()))
	v.Groups(func(g *keyspace.StreamCG) bool {
		name := []byte(g.Name)
		c.cmd([]byte("XGROUP"), []byte("CREATE"), key, name, streamID(g.LastID), []byte("ENTRIESREAD"),
			strconv.AppendInt(nil, g.EntriesRead, 10))
		g.ConsumersRange(func(cons *keyspace.StreamConsumer) bool {
			if cons.PELLen() == 0 {
				c.cmd([]byte("XGROUP"), []byte("CREATECONSUMER"), key, name, []byte(cons.Name))
				return true
			}
			cons.PELRange(keyspace.StreamID{}, func(id keyspace.StreamID, n *keyspace.StreamNACK) bool {
				c.cmd([]byte("XCLAIM"), key, name, []byte(cons.Name), []byte("0"), streamID(id),
					[]byte("TIME"), strconv.AppendInt(nil, n.DeliveryTime, 10),
					[]byte("RETRYCOUNT"), strconv.AppendUint(nil, n.DeliveryCount, 10),
					[]byte("JUSTID"), []byte("FORCE"))
				return true
			})
			return true
		})
		return true
	})
	return nil
}

// streamID is rioWriteBulkStreamID's "ms-seq".
func streamID(id keyspace.StreamID) []byte {
	return strconv.AppendUint(append(strconv.AppendUint(nil, id.Ms, 10), '-'), id.Seq, 10)
}

// Finish implements BaseWriter.
func (c *CommandBase) Finish() error { return c.flush() }

type unsupportedError struct{ typ string }

func (e *unsupportedError) Error() string {
	return "AOF rewrite: values of type " + e.typ + " can't be rewritten yet"
}

// formatScore is rioWriteBulkDouble's "%.17g" (inf and -inf as Redis
// prints them).
func formatScore(f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return []byte("inf")
	case math.IsInf(f, -1):
		return []byte("-inf")
	}
	return strconv.AppendFloat(nil, f, 'g', 17, 64)
}

// Step yields the next items of a snapshot: the server locks, calls
// Snapshot.Step and unlocks. done reports the end.
type Step func(dst []keyspace.Item) (items []keyspace.Item, done bool)

// WriteBaseFile writes the base file path in format from the items next
// yields, then fsyncs and closes it (rewriteAppendOnlyFile). It returns
// the file's size. On error the file is removed.
func WriteBaseFile(path string, format BaseFormat, next Step) (int64, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		f.Close()
		os.Remove(path)
		return 0, err
	}
	n, err := WriteBase(f, format, next)
	if err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return 0, err
	}
	return n, nil
}

// WriteBase is WriteBaseFile's encoding: the base from next's batches,
// written to w through a buffer that is flushed before it returns the
// byte count (a background rewrite's child pipe, or the file).
func WriteBase(w io.Writer, format BaseFormat, next Step) (int64, error) {
	bw := bufio.NewWriterSize(w, 256<<10)
	cw := &countWriter{w: bw}
	enc := format.New(cw)
	var items []keyspace.Item
	for {
		var done bool
		items, done = next(items[:0])
		for _, it := range items {
			if err := enc.WriteItem(it); err != nil {
				return 0, err
			}
		}
		clear(items)
		if done {
			break
		}
	}
	if err := enc.Finish(); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
