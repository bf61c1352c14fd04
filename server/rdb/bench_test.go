package rdb

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// benchKeys is the number of keys of the encode/decode benchmarks: the
// shape of integration/benchsave's dataset (key:N, a 49-byte value).
const benchKeys = 1000000

func benchValue(i int) []byte {
	return []byte("value-" + strings.Repeat("0", 10-len(strconv.Itoa(i))) + strconv.Itoa(i) + "-" + strings.Repeat("x", 32))
}

func benchKeyspace(n int) *keyspace.Keyspace {
	ks := keyspace.New(16)
	db := ks.DBs[0]
	for i := 0; i < n; i++ {
		db.Set([]byte("key:"+strconv.Itoa(i)), keyspace.NewString(benchValue(i), keyspace.StringAuto), 0)
	}
	return ks
}

// encodeSnapshot walks ks as BGSAVE does (Step by 128) and encodes it.
func encodeSnapshot(b testing.TB, ks *keyspace.Keyspace, w io.Writer) {
	snap, err := ks.BeginSnapshot()
	if err != nil {
		b.Fatal(err)
	}
	defer snap.Close()
	enc, err := NewEncoder(w, EncodeOptions{Compress: true, Checksum: true, Aux: []AuxField{{"redis-ver", "7.0.15"}}})
	if err != nil {
		b.Fatal(err)
	}
	for i, db := range ks.DBs {
		if db.Len() > 0 {
			enc.SetDBSizes(i, db.Len(), db.ExpiresLen())
		}
	}
	var buf []keyspace.Item
	for done := false; !done; {
		buf, done = snap.Step(buf[:0], 128)
		keyspace.PrefetchItems(buf)
		for _, it := range buf {
			if err := enc.WriteItem(it); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := enc.Finish(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEncodeSnapshot1M: a 1M-key BGSAVE's CPU work, to io.Discard.
func BenchmarkEncodeSnapshot1M(b *testing.B) {
	ks := benchKeyspace(benchKeys)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		encodeSnapshot(b, ks, io.Discard)
	}
}

// BenchmarkEncodeItems1M: encoding alone (no snapshot walk).
func BenchmarkEncodeItems1M(b *testing.B) {
	items := make([]keyspace.Item, benchKeys)
	for i := range items {
		items[i] = keyspace.Item{Key: "key:" + strconv.Itoa(i), Value: keyspace.NewString(benchValue(i), keyspace.StringAuto)}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		enc, _ := NewEncoder(io.Discard, EncodeOptions{Compress: true, Checksum: true})
		enc.SetDBSizes(0, len(items), 0)
		for _, it := range items {
			if err := enc.WriteItem(it); err != nil {
				b.Fatal(err)
			}
		}
		if err := enc.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad1M: decoding a 1M-key RDB and inserting the keys into a
// keyspace, as loadRDBInto does.
func BenchmarkLoad1M(b *testing.B) {
	var file bytes.Buffer
	encodeSnapshot(b, benchKeyspace(benchKeys), &file)
	b.SetBytes(int64(file.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ks := keyspace.New(16)
		opts := LoadOptions{VerifyChecksum: true, OnResizeDB: func(db int, keys, expires uint64) {
			ks.DBs[db].ExpandForLoad(keys, expires)
		}}
		_, err := Load(bytes.NewReader(file.Bytes()), opts, func(rec Record) error {
			if _, ok := ks.DBs[rec.DB].LoadAdd(rec.Key, rec.Value, rec.ExpireAt, 0); !ok {
				b.Fatal("duplicate")
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if ks.DBs[0].Len() != benchKeys {
			b.Fatal(ks.DBs[0].Len())
		}
	}
}

// BenchmarkDecode1M: decoding alone.
func BenchmarkDecode1M(b *testing.B) {
	var file bytes.Buffer
	encodeSnapshot(b, benchKeyspace(benchKeys), &file)
	b.SetBytes(int64(file.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := Load(bytes.NewReader(file.Bytes()), LoadOptions{VerifyChecksum: true}, func(rec Record) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCRC64(b *testing.B) {
	for _, n := range []int{8, 64, 1 << 16} {
		p := make([]byte, n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for i := 0; i < b.N; i++ {
				_ = CRC64(0, p)
			}
		})
	}
}

// BenchmarkSnapshotWalk1M: the snapshot walk alone (Step by 128 and
// PrefetchItems, as BGSAVE), without encoding.
func BenchmarkSnapshotWalk1M(b *testing.B) {
	ks := benchKeyspace(benchKeys)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		snap, err := ks.BeginSnapshot()
		if err != nil {
			b.Fatal(err)
		}
		var buf []keyspace.Item
		n := 0
		for done := false; !done; {
			buf, done = snap.Step(buf[:0], 128)
			keyspace.PrefetchItems(buf)
			n += len(buf)
		}
		snap.Close()
		if n != benchKeys {
			b.Fatal(n)
		}
	}
}
