package rdb

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

func TestCRC64CheckValue(t *testing.T) {
	if got := CRC64(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc = %x", got)
	}
}

// obsFile is rdb.md §11's file, verified against redis-server 7.0.15:
// hex bytes and "quoted" literal strings.
var obsFile = []string{
	"52 45 44 49 53 30 30 31 30",
	"fa 09", `"redis-ver"`, "06", `"7.0.15"`,
	"fa 0a", `"redis-bits"`, "02", `"64"`,
	"fe 00 fb 05 01",
	"fc 00 d8 c3 2c bb 03 00 00",
	"00 01", `"s"`, "05", `"hello"`,
	"01 01", `"l"`, "03 01", `"a"`, "01", `"b"`, "03", `"123"`,
	"02 03", `"set"`, "02 01", `"x"`, "01", `"7"`,
	"04 01", `"h"`, "01 01", `"f"`, "01", `"v"`,
	"05 01", `"z"`, "02 02", `"m1"`, "00 00 00 00 00 00 f8 3f 02", `"m2"`, "00 00 00 00 00 00 00 c0",
	"ff f9 75 6a b0 15 d1 1e 8e",
}

func parts(t testing.TB, ps []string) []byte {
	t.Helper()
	var b []byte
	for _, p := range ps {
		if strings.HasPrefix(p, `"`) {
			b = append(b, p[1:len(p)-1]...)
			continue
		}
		h, err := hex.DecodeString(strings.ReplaceAll(p, " ", ""))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, h...)
	}
	return b
}

func TestLoadObservedFile(t *testing.T) {
	info, recs := loadAll(t, parts(t, obsFile), defOpts())
	if info.Version != 10 || len(info.Aux) != 2 || info.Aux[0] != (AuxField{"redis-ver", "7.0.15"}) || info.Aux[1] != (AuxField{"redis-bits", "64"}) {
		t.Fatalf("info %+v", info)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records", len(recs))
	}
	want := []struct {
		key, dump, enc string
		exp            int64
	}{
		{"s", "hello", "embstr", 4102444800000},
		{"l", "[a b 123]", "quicklist", 0},
		{"set", "{7 x}", "hashtable", 0},
		{"h", "{f:v}", "listpack", 0},
		{"z", "[m2:-2 m1:1.5]", "listpack", 0},
	}
	for i, w := range want {
		r := recs[i]
		if string(r.Key) != w.key || show(r.Value) != w.dump || r.Value.Encoding().String() != w.enc || r.ExpireAt != w.exp || r.Idle != -1 || r.Freq != -1 {
			t.Errorf("record %d: %s %s %s exp %d idle %d freq %d; want %+v", i, r.Key, show(r.Value), r.Value.Encoding(), r.ExpireAt, r.Idle, r.Freq, w)
		}
	}
}

// show renders a value canonically (sets and hashes sorted).
func show(v keyspace.Value) string {
	switch x := v.(type) {
	case *keyspace.String:
		return string(x.Bytes())
	case *keyspace.List:
		var s []string
		for i := 0; i < x.Len(); i++ {
			s = append(s, string(x.Index(i)))
		}
		return fmt.Sprint(s)
	case *keyspace.Set:
		var s []string
		x.Range(func(m keyspace.Member) bool { s = append(s, m.String()); return true })
		slices.Sort(s)
		return "{" + strings.Join(s, " ") + "}"
	case *keyspace.Hash:
		var s []string
		x.Range(func(f, v string) bool { s = append(s, f+":"+v); return true })
		slices.Sort(s)
		return "{" + strings.Join(s, " ") + "}"
	case *keyspace.ZSet:
		var s []string
		x.ForEach(func(m string, sc float64) bool {
			s = append(s, m+":"+strconv.FormatFloat(sc, 'g', -1, 64))
			return true
		})
		return "[" + strings.Join(s, " ") + "]"
	}
	return fmt.Sprintf("%T", v)
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadAll(t *testing.T, b []byte, opts LoadOptions) (Info, []Record) {
	t.Helper()
	var recs []Record
	info, err := Load(bytes.NewReader(b), opts, func(r Record) error {
		r.Key = bytes.Clone(r.Key) // valid only during the call
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return info, recs
}

func defOpts() LoadOptions {
	return LoadOptions{VerifyChecksum: true, Enc: keyspace.DefaultEncodingConfig()}
}

type testItem struct {
	key string
	v   keyspace.Value
	exp int64
}

func sampleItems() []testItem {
	cfg := keyspace.DefaultEncodingConfig()
	var items []testItem
	add := func(k string, v keyspace.Value, exp int64) { items = append(items, testItem{k, v, exp}) }
	str := func(s string, kind keyspace.StringKind) *keyspace.String { return keyspace.NewString([]byte(s), kind) }
	add("int", str("12345", keyspace.StringAuto), 0)
	add("neg", str("-5", keyspace.StringAuto), 0)
	add("bigint", str("9223372036854775807", keyspace.StringAuto), 0)
	add("notint", str("0123", keyspace.StringAuto), 0)
	add("short", str("hello", keyspace.StringAuto), 1700000000123)
	add("long", str(strings.Repeat("abcdefgh", 100), keyspace.StringAuto), 0)
	add("raw", str("x", keyspace.StringRaw), 0)
	big := make([]byte, 1<<20+3)
	for i := range big {
		big[i] = byte(i*7 + i>>9)
	}
	add("big", keyspace.NewString(big, keyspace.StringAuto), 0)
	add("\x00bin\xffkey\r\n", str("\x00\x01\x02", keyspace.StringAuto), 0)
	add("", str("empty key", keyspace.StringAuto), 0)

	l := keyspace.NewList(-2)
	for _, s := range []string{"a", "1", "-70000", "9999999999", strings.Repeat("z", 5000)} {
		l.PushBack([]byte(s))
	}
	add("list", l, 0)
	bl := keyspace.NewList(-2)
	for i := 0; i < 20000; i++ {
		bl.PushBack([]byte("element-" + strconv.Itoa(i)))
	}
	bl.PushFront([]byte("head"))
	add("biglist", bl, 0)
	// Lists created under list-compress-depth 1 and 2: their inner nodes
	// are held, and written, LZF-compressed.
	for d := 1; d <= 2; d++ {
		cl := keyspace.NewList(-2)
		cl.SetCompressDepth(d)
		for i := 0; i < 5000; i++ {
			cl.PushBack([]byte("compressible element " + strconv.Itoa(i%10)))
		}
		cl.PushFront([]byte("head"))
		add("compressedlist"+strconv.Itoa(d), cl, 0)
	}

	is := keyspace.NewIntSet()
	for _, v := range []string{"1", "-3", "70000"} {
		is.Add([]byte(v), cfg.SetMaxIntsetEntries)
	}
	add("intset", is, 0)
	is8 := keyspace.NewIntSet()
	is8.Add([]byte("1"), 512)
	is8.Add([]byte("-9223372036854775808"), 512)
	add("intset8", is8, 0)
	hs := keyspace.NewSetFor([]byte("x"))
	hs.Add([]byte("x"), 512)
	hs.Add([]byte("7"), 512)
	add("hset", hs, 0)
	bs := keyspace.NewIntSet()
	for i := 0; i < 12000; i++ {
		bs.Add([]byte(strconv.Itoa(i*3)), cfg.SetMaxIntsetEntries)
	}
	add("bigset", bs, 0)

	h := keyspace.NewHash()
	h.Set([]byte("f"), "v", cfg)
	h.Set([]byte("n"), "-12", cfg)
	add("hash", h, 0)
	bh := keyspace.NewHash()
	for i := 0; i < 11000; i++ {
		bh.Set([]byte("field:"+strconv.Itoa(i)), strconv.Itoa(i*i), cfg)
	}
	add("bighash", bh, 5)
	lh := keyspace.NewHash()
	lh.Set([]byte("k"), strings.Repeat("v", 100), cfg)
	add("longvalhash", lh, 0)

	z := keyspace.NewZSet(true)
	z.Set("a", 1.5)
	z.Set("b", -2)
	z.Set("c", math.Inf(1))
	z.Set("d", 0)
	z.Set("1", 1e300)
	add("zset", z, 0)
	bz := keyspace.NewZSet(false)
	for i := 0; i < 15000; i++ {
		bz.Set("m"+strconv.Itoa(i), float64(i)/3)
	}
	bz.Set("neg", math.Inf(-1))
	add("bigzset", bz, 0)
	return items
}

func encodeItems(t testing.TB, items []testItem, opts EncodeOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	e, err := NewEncoder(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, it := range items {
		db := 0
		if i%3 == 2 {
			db = 2
		}
		if err := e.WriteItem(keyspace.Item{DB: db, Key: it.key, Value: it.v, ExpireAt: it.exp, LastAccess: 1000, Freq: 7}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	items := sampleItems()
	for _, opts := range []EncodeOptions{
		{},
		{Compress: true, Checksum: true, Aux: []AuxField{{"redis-ver", "7.0.15"}, {"redis-bits", "64"}}, Functions: []string{"#!lua name=lib\nredis.register_function('f', function() return 1 end)"}},
		{Compress: true, Checksum: true, LRU: true, Now: 61000},
		{LFU: true},
		// Decayed as LFUDecrAndReturn: 3 minutes after the access
		// (LastAccess 1000 ms), one decrement every 2 minutes.
		{LFU: true, Now: 3*60000 + 1000, LFUDecayTime: 2},
	} {
		t.Run(fmt.Sprintf("compress=%v,lru=%v,lfu=%v,decay=%d", opts.Compress, opts.LRU, opts.LFU, opts.LFUDecayTime), func(t *testing.T) {
			b := encodeItems(t, items, opts)
			info, recs := loadAll(t, b, defOpts())
			if len(recs) != len(items) || info.Keys != len(items) {
				t.Fatalf("%d records", len(recs))
			}
			if !slices.Equal(info.Aux, opts.Aux) || !slices.Equal(info.Functions, opts.Functions) {
				t.Errorf("aux %v functions %v", info.Aux, info.Functions)
			}
			for i, it := range items {
				r := recs[i]
				wantDB := 0
				if i%3 == 2 {
					wantDB = 2
				}
				if string(r.Key) != it.key || r.DB != wantDB || r.ExpireAt != it.exp {
					t.Errorf("%q: key %q db %d exp %d", it.key, r.Key, r.DB, r.ExpireAt)
				}
				if show(r.Value) != show(it.v) {
					t.Errorf("%q: value differs", it.key)
				}
				if r.Value.Encoding() != loadedEncoding(it.v) {
					t.Errorf("%q: encoding %v, want %v", it.key, r.Value.Encoding(), loadedEncoding(it.v))
				}
				wantIdle, wantFreq := int64(-1), -1
				if opts.LRU {
					wantIdle = 60
				}
				if opts.LFU {
					wantFreq = 7
					if opts.LFUDecayTime > 0 {
						wantFreq = 6
					}
				}
				if r.Idle != wantIdle || r.Freq != wantFreq {
					t.Errorf("%q: idle %d freq %d", it.key, r.Idle, r.Freq)
				}
				// DUMP / RESTORE payloads.
				p := DumpPayload(it.v, opts.Compress)
				v, err := ParsePayload(p, keyspace.DefaultEncodingConfig())
				if err != nil {
					t.Fatalf("%q: ParsePayload: %v", it.key, err)
				}
				if show(v) != show(it.v) || v.Encoding() != loadedEncoding(it.v) {
					t.Errorf("%q: payload round trip differs", it.key)
				}
			}
		})
	}
}

func TestEncodeStringForms(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "c000"},
		{"-128", "c080"},
		{"127", "c07f"},
		{"12345", "c13930"},
		{"-32769", "c2ff7fffff"},
		{"2147483647", "c2ffffff7f"},
		{"2147483648", "0a32313437343833363438"},
		{"-0", "022d30"},
		{"007", "03303037"},
		{"", "00"},
	} {
		if got := hex.EncodeToString(appendString(nil, []byte(c.in), true)); got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		n    uint64
		want string
	}{{0, "00"}, {63, "3f"}, {64, "4040"}, {16383, "7fff"}, {16384, "8000004000"}, {1<<32 - 1, "80ffffffff"}, {1 << 32, "810000000100000000"}} {
		if got := hex.EncodeToString(appendLen(nil, c.n)); got != c.want {
			t.Errorf("len %d: %s, want %s", c.n, got, c.want)
		}
		rd := newReader(bytes.NewReader(appendLen(nil, c.n)), false)
		if n, err := rd.len(); err != nil || n != c.n {
			t.Errorf("len %d read back %d %v", c.n, n, err)
		}
	}
	// LZF only when it saves 4 bytes.
	long := strings.Repeat("a", 21)
	if b := appendString(nil, []byte(long), true); b[0] != 0xC3 {
		t.Errorf("21 a's not compressed: %x", b)
	}
	if b := appendString(nil, []byte(long[:20]), true); b[0] != 20 {
		t.Errorf("20 a's compressed: %x", b)
	}
}

func TestListpackEntryEncodings(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0001"},
		{"127", "7f01"},
		{"128", "c08002"},
		{"-1", "dfff02"},
		{"-4096", "d00002"},
		{"4095", "cfff02"},
		{"4096", "f1001003"},
		{"-32768", "f1008003"},
		{"32768", "f200800004"},
		{"-8388608", "f200008004"},
		{"8388608", "f30000800005"},
		{"2147483648", "f4000000800000000009"},
		{"-9223372036854775808", "f4000000000000008009"},
		{"abc", "8361626304"},
		{"", "8001"},
		{"007", "8330303704"},
	} {
		if got := hex.EncodeToString(lpAppendEntry(nil, []byte(c.in))); got != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
		lp := newListpack()
		lp.add([]byte(c.in))
		ents, ok := parseListpack(lp.finish())
		if !ok || len(ents) != 1 || string(ents[0]) != c.in {
			t.Errorf("%q: parsed %q %v", c.in, ents, ok)
		}
	}
	for _, n := range []int{63, 64, 127, 128, 4095, 4096, 16383, 70000} {
		s := strings.Repeat("x", n)
		lp := newListpack()
		lp.add([]byte(s))
		lp.add([]byte("y"))
		ents, ok := parseListpack(lp.finish())
		if !ok || len(ents) != 2 || string(ents[0]) != s || string(ents[1]) != "y" {
			t.Errorf("string of %d: parse failed", n)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	good := parts(t, obsFile)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"signature", []byte("REDIX0010\xff"), "Wrong signature"},
		{"version 11", []byte("REDIS0011\xff"), "Can't handle RDB format version 11"},
		{"version 0", []byte("REDIS0000\xff"), "Can't handle RDB format version 0"},
		{"checksum", append(slices.Clone(good[:len(good)-1]), 0x8f), "Wrong RDB checksum"},
		{"unknown type", []byte("REDIS0010\x2a\x01k"), "Unknown RDB encoding type 42"},
		{"huge string", []byte("REDIS0010\x00\x81\x00\x00\x00\x01\x00\x00\x00\x00"), "Short read"},
		{"huge string 32", []byte("REDIS0010\x00\x01k\x80\xff\xff\xff\xffabc"), "Short read"},
		{"huge lzf", []byte("REDIS0010\x00\x01k\xc3\x02\x80\xff\xff\xff\xff\x00a"), "Invalid LZF"},
		{"huge list", []byte("REDIS0010\x01\x01k\x80\xff\xff\xff\xff\x01a"), "Short read"},
		{"selectdb", []byte("REDIS0010\xfe\x10"), "more than 16 databases"},
		{"module", []byte("REDIS0010\x07\x01k\x81\x00\x00\x00\x00\x00\x00\x00\x00"), "not supported"},
		{"function", []byte("REDIS0010\xf6"), "Pre-release function format"},
		{"dup set", []byte("REDIS0010\x02\x01k\x02\x01a\x01a"), "Duplicate"},
		{"dup hash", []byte("REDIS0010\x04\x01k\x02\x01a\x01b\x01a\x01c"), "Hash with dup elements"},
		{"dup zset", []byte("REDIS0010\x05\x01k\x02\x01a" + "\x00\x00\x00\x00\x00\x00\x00\x00\x01a\x00\x00\x00\x00\x00\x00\x00\x00"), "Duplicate"},
		{"nan zset", []byte("REDIS0010\x05\x01k\x01\x01a\x00\x00\x00\x00\x00\x00\xf8\x7f"), "NAN"},
		{"bad intset", []byte("REDIS0010\x0b\x01k\x0a\x02\x00\x00\x00\x02\x00\x00\x00\x01\x00"), "Intset integrity"},
		{"empty intset", []byte("REDIS0010\x0b\x01k\x08\x02\x00\x00\x00\x00\x00\x00\x00"), "Intset integrity"},
		{"bad length", []byte("REDIS0010\x00\x01k\x82"), "Unknown length encoding"},
	} {
		_, err := Load(bytes.NewReader(c.b), defOpts(), func(Record) error { return nil })
		var re *Error
		if !errors.As(err, &re) || !strings.Contains(re.Reason, c.want) {
			t.Errorf("%s: err %v, want %q", c.name, err, c.want)
		}
	}
	// Every truncation of a valid file fails cleanly.
	for i := 0; i < len(good); i++ {
		if _, err := Load(bytes.NewReader(good[:i]), defOpts(), func(Record) error { return nil }); err == nil {
			t.Errorf("truncated at %d: no error", i)
		}
	}
	// Checksum 0 is not verified; VerifyChecksum false skips a mismatch.
	zero := append(slices.Clone(good[:len(good)-8]), make([]byte, 8)...)
	loadAll(t, zero, defOpts())
	bad := append(slices.Clone(good[:len(good)-1]), 0x8f)
	loadAll(t, bad, LoadOptions{Enc: keyspace.DefaultEncodingConfig()})
}

func TestEmptyCollectionsSkipped(t *testing.T) {
	b := []byte("REDIS0010\x02\x01a\x00\x04\x01b\x00\x01\x01c\x00\x12\x01d\x00\x00\x01e\x01x\xff")
	b = binary64(b, CRC64(0, b))
	info, recs := loadAll(t, b, defOpts())
	if len(recs) != 1 || string(recs[0].Key) != "e" || info.Skipped != 4 {
		t.Fatalf("recs %v info %+v", recs, info)
	}
}

func binary64(b []byte, v uint64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func TestParsePayloadErrors(t *testing.T) {
	p := DumpPayload(keyspace.NewString([]byte("hello"), keyspace.StringAuto), false)
	if hex.EncodeToString(p[:len(p)-8]) != "000568656c6c6f0a00" {
		t.Fatalf("payload %x", p)
	}
	for name, q := range map[string][]byte{
		"short":    p[:9],
		"version":  func() []byte { q := slices.Clone(p); q[len(q)-10] = 11; return q }(),
		"checksum": func() []byte { q := slices.Clone(p); q[len(q)-1]++; return q }(),
	} {
		if _, err := ParsePayload(q, keyspace.DefaultEncodingConfig()); err != ErrPayload {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := []byte{TypeSet, 0}
	bad = append(bad, 10, 0)
	bad = binary64(bad, CRC64(0, bad))
	if _, err := ParsePayload(bad, keyspace.DefaultEncodingConfig()); err != ErrBadData {
		t.Errorf("empty set: %v", err)
	}
}

// loadedEncoding is the encoding Redis gives v once saved and loaded: a
// string goes through tryObjectEncoding (int, embstr or raw by content).
func loadedEncoding(v keyspace.Value) keyspace.Encoding {
	if s, ok := v.(*keyspace.String); ok {
		return keyspace.NewString(s.Bytes(), keyspace.StringAuto).Encoding()
	}
	return v.Encoding()
}

func TestLoadLeavesBufioAfterChecksum(t *testing.T) {
	in := append(parts(t, obsFile), "+CONTINUE\r\n"...)
	br := bufio.NewReader(bytes.NewReader(in))
	info, err := Load(br, defOpts(), func(Record) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	if string(rest) != "+CONTINUE\r\n" || info.Bytes != int64(len(in)-len(rest)) {
		t.Fatalf("rest %q, bytes %d", rest, info.Bytes)
	}
}

func TestEncoderSkipsEmptyAggregates(t *testing.T) {
	b := encodeItems(t, []testItem{
		{"l", keyspace.NewList(-2), 0}, {"s", keyspace.NewIntSet(), 0}, {"h", keyspace.NewHash(), 0},
		{"z", keyspace.NewZSet(true), 0}, {"k", keyspace.NewString([]byte("v"), keyspace.StringAuto), 0},
	}, EncodeOptions{Checksum: true})
	info, recs := loadAll(t, b, defOpts())
	if len(recs) != 1 || info.Skipped != 0 || string(recs[0].Key) != "k" {
		t.Fatalf("records %v, info %+v", recs, info)
	}
}

// TestHugeClaimsDoNotAllocate: lengths claiming gigabytes in a tiny input
// fail after allocating no more than the bounded read-ahead.
func TestHugeClaimsDoNotAllocate(t *testing.T) {
	for _, in := range []string{
		"REDIS0010\x00\x01k\x81\x00\x00\x00\x01\x00\x00\x00\x00abc",          // 4 GB string
		"REDIS0010\x00\x01k\x80\xff\xff\xff\xffabc",                          // 4 GB string, 32-bit length
		"REDIS0010\x00\x01k\xc3\x02\x80\xff\xff\xff\xff\x00a",                // LZF claiming 4 GB
		"REDIS0010\x02\x01k\x80\xff\xff\xff\xff\x01a",                        // set of 4G members
		"REDIS0010\x04\x01k\x80\xff\xff\xff\xff\x01a\x01b",                   // hash of 4G fields
		"REDIS0010\x12\x01k\x80\xff\xff\xff\xff\x02\x80\xff\xff\xff\xff",     // quicklist node of 4 GB
		"REDIS0010\x13\x01k\x80\xff\xff\xff\xff\x10\x00\x00\x00\x00\x00\x00", // stream of 4G nodes
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Load(strings.NewReader(in), defOpts(), func(Record) error { return nil })
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%q: loaded", in)
		}
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Errorf("%q: allocated %d bytes", in, d)
		}
	}
}
