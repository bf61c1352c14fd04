package rdb

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// fuzzSeeds are real files: the observed file, ours of small values of
// every type, and every legacy form.
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{parts(t, obsFile)}
	var small []testItem
	for _, it := range sampleItems() {
		if it.v.Size(0) < 4096 {
			small = append(small, it)
		}
	}
	seeds = append(seeds, encodeItems(t, small, EncodeOptions{Compress: true, Checksum: true, Aux: []AuxField{{"redis-ver", "7.0.15"}}, Functions: []string{"#!lua name=l\n"}}))
	for _, c := range encodingCases() {
		if len(c.rec) < 4096 {
			seeds = append(seeds, rdbFile(c.rec))
		}
	}
	seeds = append(seeds, rdbFile(rec(TypeStreamListpacks2, "st", streamValue(false, false, false))))
	return seeds
}

// FuzzLoad: no input panics, hangs or allocates beyond its size; what
// loads re-encodes into a file that loads the same number of keys.
func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
		f.Add(s[:len(s)/2])
		flipped := bytes.Clone(s)
		flipped[len(flipped)*2/3] ^= 0x10
		f.Add(flipped)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var recs []Record
		opts := LoadOptions{Enc: keyspace.DefaultEncodingConfig()} // no checksum: reach the decoders
		info, err := Load(bytes.NewReader(b), opts, func(r Record) error {
			r.Key = bytes.Clone(r.Key)
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		var buf bytes.Buffer
		e, err := NewEncoder(&buf, EncodeOptions{Compress: true, Checksum: true, Aux: info.Aux, Functions: info.Functions})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := e.WriteItem(keyspace.Item{DB: r.DB, Key: string(r.Key), Value: r.Value, ExpireAt: r.ExpireAt}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Finish(); err != nil {
			t.Fatal(err)
		}
		n := 0
		if _, err := Load(bytes.NewReader(buf.Bytes()), defOpts(), func(Record) error { n++; return nil }); err != nil || n != len(recs) {
			t.Fatalf("re-encoded file: %d of %d keys, %v", n, len(recs), err)
		}
	})
}

// FuzzParsePayload: RESTORE payloads, with the footer's checksum fixed up
// so that the value decoder is reached.
func FuzzParsePayload(f *testing.F) {
	for _, it := range sampleItems() {
		if it.v.Size(0) < 4096 {
			p := DumpPayload(it.v, true)
			f.Add(p, true)
			f.Add(p[:len(p)/2], true)
		}
	}
	f.Fuzz(func(t *testing.T, p []byte, fix bool) {
		if fix && len(p) >= 10 {
			p = bytes.Clone(p)
			binary.LittleEndian.PutUint64(p[len(p)-8:], CRC64(0, p[:len(p)-8]))
		}
		v, err := ParsePayload(p, keyspace.DefaultEncodingConfig())
		if err != nil {
			if err != ErrPayload && err != ErrBadData {
				t.Fatalf("error %v", err)
			}
			return
		}
		q := DumpPayload(v, false)
		if _, err := ParsePayload(q, keyspace.DefaultEncodingConfig()); err != nil {
			t.Fatalf("re-dumped payload: %v", err)
		}
	})
}
