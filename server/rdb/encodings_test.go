package rdb

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/server/keyspace"
)

// rdbFile assembles a version-10 file with a checksum from key records
// (type byte, key, value bytes).
func rdbFile(recs ...[]byte) []byte {
	b := []byte("REDIS0010")
	for _, r := range recs {
		b = append(b, r...)
	}
	b = append(b, opEOF)
	return binary.LittleEndian.AppendUint64(b, CRC64(0, b))
}

func rec(t byte, key string, val []byte) []byte {
	b := []byte{t}
	b = appendStr(b, key, false)
	return append(b, val...)
}

func strs(ss ...string) []byte {
	var b []byte
	b = appendLen(b, uint64(len(ss)))
	for _, s := range ss {
		b = appendStr(b, s, false)
	}
	return b
}

// pairsOf is a HASH value: the pair count, then the strings.
func pairsOf(ss ...string) []byte {
	return append(appendLen(nil, uint64(len(ss)/2)), strs(ss...)[len(appendLen(nil, uint64(len(ss)))):]...)
}

func lpOf(ss ...string) []byte {
	lp := newListpack()
	for _, s := range ss {
		lp.addStr(s)
	}
	return appendString(nil, lp.finish(), false)
}

// ziplist builds a ziplist blob of entries (prevlen + encoding), strings
// and integers as given: an int64 marks an integer entry in the given
// encoding byte.
type zlEnt struct {
	s   string
	enc byte // 0: string; else the integer encoding byte
	v   int64
}

func ziplistOf(ents ...zlEnt) []byte {
	b := make([]byte, 10)
	prev, last := 0, 10
	for _, e := range ents {
		start := len(b)
		if prev < 254 {
			b = append(b, byte(prev))
		} else {
			b = append(b, 254)
			b = binary.LittleEndian.AppendUint32(b, uint32(prev))
		}
		switch {
		case e.enc == 0:
			n := len(e.s)
			switch {
			case n < 64:
				b = append(b, byte(n))
			case n < 16384:
				b = append(b, 0x40|byte(n>>8), byte(n))
			default:
				b = append(b, 0x80)
				b = binary.BigEndian.AppendUint32(b, uint32(n))
			}
			b = append(b, e.s...)
		case e.enc == 0xC0:
			b = append(b, 0xC0, byte(e.v), byte(e.v>>8))
		case e.enc == 0xD0:
			b = append(b, 0xD0)
			b = binary.LittleEndian.AppendUint32(b, uint32(e.v))
		case e.enc == 0xE0:
			b = append(b, 0xE0)
			b = binary.LittleEndian.AppendUint64(b, uint64(e.v))
		case e.enc == 0xF0:
			b = append(b, 0xF0, byte(e.v), byte(e.v>>8), byte(e.v>>16))
		case e.enc == 0xFE:
			b = append(b, 0xFE, byte(e.v))
		default: // immediate 0xF1..0xFD
			b = append(b, e.enc)
		}
		prev, last = len(b)-start, start
	}
	b = append(b, 0xFF)
	binary.LittleEndian.PutUint32(b, uint32(len(b)))
	binary.LittleEndian.PutUint32(b[4:], uint32(last))
	binary.LittleEndian.PutUint16(b[8:], uint16(len(ents)))
	return b
}

func zlStrs(ss ...string) []zlEnt {
	var e []zlEnt
	for _, s := range ss {
		e = append(e, zlEnt{s: s})
	}
	return e
}

func zipmapOf(kv ...string) []byte {
	b := []byte{byte(len(kv) / 2)}
	ln := func(n int) {
		if n < 254 {
			b = append(b, byte(n))
		} else {
			b = append(b, 254)
			b = binary.LittleEndian.AppendUint32(b, uint32(n))
		}
	}
	for i := 0; i < len(kv); i += 2 {
		ln(len(kv[i]))
		b = append(b, kv[i]...)
		ln(len(kv[i+1]))
		b = append(b, 2) // 2 free bytes
		b = append(b, kv[i+1]...)
		b = append(b, 0, 0)
	}
	return append(b, 0xFF)
}

func zset2(pairs ...any) []byte {
	b := appendLen(nil, uint64(len(pairs)/2))
	for i := 0; i < len(pairs); i += 2 {
		b = appendStr(b, pairs[i].(string), false)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(pairs[i+1].(float64)))
	}
	return b
}

func zset1(pairs ...string) []byte {
	b := appendLen(nil, uint64(len(pairs)/2))
	for i := 0; i < len(pairs); i += 2 {
		b = appendStr(b, pairs[i], false)
		switch pairs[i+1] {
		case "inf":
			b = append(b, 254)
		case "-inf":
			b = append(b, 255)
		default:
			b = append(b, byte(len(pairs[i+1])))
			b = append(b, pairs[i+1]...)
		}
	}
	return b
}

func intsetOf(width int, vs ...int64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, uint32(width))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vs)))
	for _, v := range vs {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return appendString(nil, b, false)
}

func many(prefix string, n int) []string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, prefix+strconv.Itoa(i))
	}
	return s
}

func quicklist1(nodes ...[]byte) []byte {
	b := appendLen(nil, uint64(len(nodes)))
	for _, n := range nodes {
		b = appendString(b, n, false)
	}
	return b
}

// encodingCases are values in every form Redis 7.0 reads, with the
// contents they hold.
func encodingCases() []struct {
	key  string
	rec  []byte
	want string
} {
	long := strings.Repeat("L", 100)
	hashPairs := func(n int) []string {
		var s []string
		for i := 0; i < n; i++ {
			s = append(s, "f"+strconv.Itoa(i), strconv.Itoa(i))
		}
		return s
	}
	zlInts := []zlEnt{{enc: 0xF1}, {enc: 0xFD}, {enc: 0xFE, v: -100}, {enc: 0xC0, v: -30000}, {enc: 0xF0, v: -8000000}, {enc: 0xD0, v: 2000000000}, {enc: 0xE0, v: math.MinInt64}, {s: strings.Repeat("s", 70)}, {s: strings.Repeat("t", 20000)}}
	return []struct {
		key  string
		rec  []byte
		want string
	}{
		{"set2ints", rec(TypeSet, "set2ints", strs("3", "1", "2")), "{1 2 3}"},
		{"set2mixed", rec(TypeSet, "set2mixed", strs("3", "x", "2")), "{2 3 x}"},
		{"set2big", rec(TypeSet, "set2big", strs(many("", 600)...)), ""},
		{"intset16", rec(TypeSetIntset, "intset16", intsetOf(2, -5, 7)), "{-5 7}"},
		{"intset64small", rec(TypeSetIntset, "intset64small", intsetOf(8, 1, 2)), "{1 2}"},
		{"intsetbig", rec(TypeSetIntset, "intsetbig", intsetOf(4, func() []int64 {
			var v []int64
			for i := 0; i < 600; i++ {
				v = append(v, int64(i*100000))
			}
			return v
		}()...)), ""},
		{"hash4small", rec(TypeHash, "hash4small", pairsOf("f", "v", "g", "1")), "{f:v g:1}"},
		{"hash4long", rec(TypeHash, "hash4long", pairsOf("f", long)), "{f:" + long + "}"},
		{"hash4big", rec(TypeHash, "hash4big", pairsOf(hashPairs(600)...)), ""},
		{"hashlplong", rec(TypeHashListpack, "hashlplong", lpOf("f", long)), "{f:" + long + "}"},
		{"hashlpbig", rec(TypeHashListpack, "hashlpbig", lpOf(hashPairs(600)...)), ""},
		{"zset2small", rec(TypeZSet2, "zset2small", zset2("a", 1.5, "b", -2.0)), "[b:-2 a:1.5]"},
		{"zset2long", rec(TypeZSet2, "zset2long", zset2(long, 1.0)), "[" + long + ":1]"},
		{"zset1", rec(TypeZSet, "zset1", zset1("a", "1.5", "b", "inf", "c", "-inf")), "[c:-Inf a:1.5 b:+Inf]"},
		{"zsetlplong", rec(TypeZSetListpack, "zsetlplong", lpOf(long, "1")), "[" + long + ":1]"},
		{"zsetlpbig", rec(TypeZSetListpack, "zsetlpbig", lpOf(hashPairs(200)...)), ""},
		{"list1", rec(TypeList, "list1", strs("a", "1", long)), "[a 1 " + long + "]"},
		{"listzl", rec(TypeListZiplist, "listzl", appendString(nil, ziplistOf(zlInts...), false)), ""},
		{"quicklist1", rec(TypeListQuicklist, "quicklist1", quicklist1(ziplistOf(zlStrs("a", "b")...), ziplistOf(zlStrs("c")...))), "[a b c]"},
		{"hashzl", rec(TypeHashZiplist, "hashzl", appendString(nil, ziplistOf(zlStrs("f", "v", "n", "12")...), false)), "{f:v n:12}"},
		{"hashzllong", rec(TypeHashZiplist, "hashzllong", appendString(nil, ziplistOf(zlStrs("f", long)...), false)), "{f:" + long + "}"},
		{"zsetzl", rec(TypeZSetZiplist, "zsetzl", appendString(nil, ziplistOf(zlEnt{s: "b"}, zlEnt{s: "0.5"}, zlEnt{s: "a"}, zlEnt{enc: 0xF3}), false)), "[b:0.5 a:2]"},
		{"zipmap", rec(TypeHashZipmap, "zipmap", appendString(nil, zipmapOf("f", "v", "k", "w"), false)), "{f:v k:w}"},
		{"zipmaplong", rec(TypeHashZipmap, "zipmaplong", appendString(nil, zipmapOf("f", strings.Repeat("z", 300)), false)), "{f:" + strings.Repeat("z", 300) + "}"},
	}
}

func TestLegacyAndEncodingForms(t *testing.T) {
	for _, c := range encodingCases() {
		_, recs := loadAll(t, rdbFile(c.rec), defOpts())
		if len(recs) != 1 {
			t.Fatalf("%s: %d records", c.key, len(recs))
		}
		if c.want != "" && show(recs[0].Value) != c.want {
			t.Errorf("%s: %.300s, want %.300s", c.key, show(recs[0].Value), c.want)
		}
	}
	// every ziplist integer encoding
	_, recs := loadAll(t, rdbFile(rec(TypeListZiplist, "l", appendString(nil, ziplistOf(
		zlEnt{enc: 0xF1}, zlEnt{enc: 0xFD}, zlEnt{enc: 0xFE, v: -100}, zlEnt{enc: 0xC0, v: -30000},
		zlEnt{enc: 0xF0, v: -8000000}, zlEnt{enc: 0xD0, v: 2000000000}, zlEnt{enc: 0xE0, v: math.MinInt64},
		zlEnt{s: strings.Repeat("s", 70)}, zlEnt{s: "x"}), false))), defOpts())
	want := "[0 12 -100 -30000 -8000000 2000000000 -9223372036854775808 " + strings.Repeat("s", 70) + " x]"
	if got := show(recs[0].Value); got != want {
		t.Errorf("ziplist ints: %s", got)
	}
	// a 20000-byte string entry needs the 32-bit length and a 5-byte prevlen
	_, recs = loadAll(t, rdbFile(rec(TypeListZiplist, "l", appendString(nil, ziplistOf(zlStrs(strings.Repeat("t", 20000), "after")...), false))), defOpts())
	if l := recs[0].Value.(*keyspace.List); l.Len() != 2 || string(l.Index(1)) != "after" {
		t.Errorf("long ziplist entry: %s", show(l))
	}
}

// TestLoadedEncodingsMatchRedis writes each form to a file, loads it in
// redis-server and compares OBJECT ENCODING and the contents with ours.
func TestLoadedEncodingsMatchRedis(t *testing.T) {
	needRedis(t)
	cases := encodingCases()
	var all [][]byte
	for _, c := range cases {
		all = append(all, c.rec)
	}
	dir := t.TempDir()
	file := rdbFile(all...)
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	_, recs := loadAll(t, file, defOpts())
	p := startRedis(t, dir)
	c := p.client(0)
	defer c.Close()
	ctx := context.Background()
	if n := c.DBSize(ctx).Val(); int(n) != len(cases) {
		log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
		t.Fatalf("redis loaded %d keys of %d\n%s", n, len(cases), log)
	}
	for _, r := range recs {
		key := string(r.Key)
		if enc := c.ObjectEncoding(ctx, key).Val(); enc != r.Value.Encoding().String() {
			t.Errorf("%s: encoding %s, redis %s", key, r.Value.Encoding(), enc)
		}
		if got, want := show(r.Value), redisShow(t, c, key); got != want {
			t.Errorf("%s: %.200s, redis %.200s", key, got, want)
		}
		p := DumpPayload(r.Value, true)
		if rp := c.Dump(ctx, key).Val(); !bytes.Equal(p, []byte(rp)) && r.Value.Encoding() != keyspace.EncodingHashtable {
			t.Errorf("%s: DUMP differs", key)
		}
	}
}

func TestOpcodes(t *testing.T) {
	// EXPIRETIME in seconds, IDLE, FREQ, RESIZEDB, FUNCTION2, legacy versions.
	body := []byte{opExpire}
	body = binary.LittleEndian.AppendUint32(body, 1700000000)
	body = append(body, opIdle)
	body = appendLen(body, 300)
	body = append(body, opFreq, 5, opResizeDB, 1, 1, opFunction2)
	body = appendStr(body, "#!lua name=x\n", false)
	body = append(body, rec(TypeString, "k", appendStr(nil, "v", false))...)
	for ver := 1; ver <= 10; ver++ {
		b := []byte("REDIS" + strconv.Itoa(10000 + ver)[1:])
		b = append(b, body...)
		b = append(b, opEOF)
		if ver >= 5 {
			b = binary.LittleEndian.AppendUint64(b, CRC64(0, b))
		}
		info, recs := loadAll(t, b, defOpts())
		if info.Version != ver || len(recs) != 1 || recs[0].ExpireAt != 1700000000000 || recs[0].Idle != 300 || recs[0].Freq != 5 ||
			len(info.Functions) != 1 || info.Expires != 1 {
			t.Errorf("version %d: %+v %+v", ver, info, recs)
		}
	}
	// A module type id names its module.
	id := uint64(0)
	for _, c := range "hellotype" {
		id = id<<6 | uint64(strings.IndexRune("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", c))
	}
	id = id<<10 | 3
	if moduleName(id) != "hellotype" {
		t.Errorf("moduleName = %q", moduleName(id))
	}
	b := append([]byte("REDIS0010"), rec(TypeModule2, "k", appendLen(nil, id))...)
	if _, err := Load(bytes.NewReader(b), defOpts(), func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "module type hellotype not supported") {
		t.Errorf("module: %v", err)
	}
	b = append([]byte("REDIS0010"), opModuleAux)
	b = appendLen(b, id)
	if _, err := Load(bytes.NewReader(b), defOpts(), func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "module type hellotype not supported") {
		t.Errorf("module aux: %v", err)
	}
}

// streamValue is a minimal type-19 stream: one node, one group with one
// consumer owning one pending entry, with the given mutations.
func streamValue(dupGroup, orphanConsumerPEL, shortKey bool) []byte {
	return streamValueT(TypeStreamListpacks2, dupGroup, orphanConsumerPEL, shortKey)
}

func streamValueT(t int, dupGroup, orphanConsumerPEL, shortKey bool) []byte {
	id := make([]byte, 16)
	id[7] = 1
	lp := newListpack()
	for _, s := range []string{"1", "0", "1", "f", "0", "2", "0", "0", "v", "4"} {
		lp.addStr(s)
	}
	b := appendLen(nil, 1)
	if shortKey {
		b = appendString(b, id[:15], false)
	} else {
		b = appendString(b, id, false)
	}
	b = appendString(b, lp.finish(), false)
	b = append(b, 1, 1, 0) // length 1, last id 1-0
	if t == TypeStreamListpacks2 {
		b = append(b, 1, 0, 0, 0, 1) // first id, max deleted, entries added
	}
	groups := 1
	if dupGroup {
		groups = 2
	}
	b = appendLen(b, uint64(groups))
	for g := 0; g < groups; g++ {
		b = appendStr(b, "grp", false)
		b = append(b, 1, 0) // last id 1-0
		if t == TypeStreamListpacks2 {
			b = append(b, 1) // entries read
		}
		b = appendLen(b, 1)
		b = append(b, id...)
		b = binary.LittleEndian.AppendUint64(b, 1234)
		b = appendLen(b, 1)
		b = appendLen(b, 1)
		b = appendStr(b, "alice", false)
		b = binary.LittleEndian.AppendUint64(b, 1234)
		b = appendLen(b, 1)
		if orphanConsumerPEL {
			other := append([]byte(nil), id...)
			other[15] = 9
			b = append(b, other...)
		} else {
			b = append(b, id...)
		}
	}
	return b
}

func TestStream(t *testing.T) {
	v := streamValue(false, false, false)
	_, recs := loadAll(t, rdbFile(rec(TypeStreamListpacks2, "st", v)), defOpts())
	st, ok := recs[0].Value.(*keyspace.Stream)
	if !ok || st.Len() != 1 || st.NumGroups() != 1 || st.LastID() != (keyspace.StreamID{Ms: 1}) || st.Type().String() != "stream" || st.Encoding().String() != "stream" {
		t.Fatalf("stream: %#v", recs[0].Value)
	}
	p := DumpPayload(st, false)
	if !bytes.Equal(p[1:len(p)-10], v) || p[0] != TypeStreamListpacks2 {
		t.Errorf("stream payload not byte-identical")
	}
	v15 := streamValueT(TypeStreamListpacks, false, false, false)
	_, recs = loadAll(t, rdbFile(rec(TypeStreamListpacks, "st", v15)), defOpts())
	if st, ok := recs[0].Value.(*keyspace.Stream); !ok || st.Len() != 1 || st.EntriesAdded() != 1 || st.FirstID() != (keyspace.StreamID{Ms: 1}) {
		t.Errorf("type 15 stream: %#v", recs[0].Value)
	} else if p := DumpPayload(st, false); !bytes.Equal(p[1:len(p)-10], v) || p[0] != TypeStreamListpacks2 {
		t.Errorf("type 15 stream not written as Redis 7.0 writes it: %q", p)
	}
	for name, c := range map[string]struct {
		v    []byte
		want string
	}{
		"dup group": {streamValue(true, false, false), "Duplicated consumer group name"},
		"orphan":    {streamValue(false, true, false), "Consumer entry not found in group global PEL"},
		"short key": {streamValue(false, false, true), "not the size of a stream ID"},
	} {
		_, err := Load(bytes.NewReader(rdbFile(rec(TypeStreamListpacks2, "st", c.v))), defOpts(), func(Record) error { return nil })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
