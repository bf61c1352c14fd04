package server

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// Bitmap commands: WRONGTYPE, the bit arithmetic against simple reference
// models (fixed seeds), write accounting and keyspace events (recorded from
// redis-server 7.0.15, and compared live when it is installed), and a
// randomized differential run against redis-server.

func TestBitmapWrongType(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	put := func() {
		ts.s.mu.Lock()
		ts.s.ks.DBs[0].Set([]byte("l"), notAString{}, ts.clk.Now().UnixMilli())
		ts.s.mu.Unlock()
	}
	put()
	ts.do(c, "SET", "s", "abc")
	wrong := "-" + ErrWrongType
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"GETBIT", "l", "0"}, wrong},
		{[]string{"GETBIT", "l", "x"}, "-" + ErrBitOffset}, // the offset is parsed first
		{[]string{"SETBIT", "l", "0", "1"}, wrong},
		{[]string{"SETBIT", "l", "0", "2"}, "-" + ErrBitValue},
		{[]string{"SETBIT", "l", "-1", "1"}, "-" + ErrBitOffset},
		{[]string{"BITCOUNT", "l"}, wrong},
		{[]string{"BITCOUNT", "l", "a", "b"}, wrong}, // 7.0.15 looks the key up first
		{[]string{"BITCOUNT", "l", "0"}, wrong},
		{[]string{"BITPOS", "l", "1"}, wrong},
		{[]string{"BITPOS", "l", "1", "x"}, wrong},
		{[]string{"BITPOS", "l", "2"}, "-" + ErrBitposBit}, // the bit is parsed first
		{[]string{"BITOP", "AND", "d", "s", "l"}, wrong},
		{[]string{"BITOP", "NOT", "d", "l"}, wrong},
		{[]string{"BITOP", "NOT", "d", "l", "s"}, "-" + ErrBitopNot},
		{[]string{"BITFIELD", "l", "GET", "u8", "0"}, wrong},
		{[]string{"BITFIELD", "l", "SET", "u8", "0", "1"}, wrong},
		{[]string{"BITFIELD", "l"}, wrong},
		{[]string{"BITFIELD", "l", "GET", "u64", "0"}, "-" + ErrBitfieldType}, // parsed before the lookup
		{[]string{"BITFIELD_RO", "l", "GET", "u8", "0"}, wrong},
		{[]string{"BITFIELD_RO", "l", "SET", "u8", "0", "1"}, "-" + ErrBitfieldRO},
	} {
		if got := ts.doR(t, c, tc.cmd...); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.cmd, got, tc.want)
		}
	}
	// Nothing was written to d by the failed BITOPs.
	if got := ts.doR(t, c, "EXISTS", "d"); got != "(integer) 0" {
		t.Errorf("EXISTS d: %s", got)
	}
	// BITOP replaces a destination of any type (setKey), and an empty result
	// deletes it.
	if got := ts.doR(t, c, "BITOP", "OR", "l", "s"); got != "(integer) 3" {
		t.Errorf("BITOP into a non-string: %s", got)
	}
	if got := ts.doR(t, c, "GET", "l"); got != `"abc"` {
		t.Errorf("GET after BITOP: %s", got)
	}
	put()
	if got := ts.doR(t, c, "BITOP", "OR", "l", "nokey"); got != "(integer) 0" {
		t.Errorf("BITOP empty into a non-string: %s", got)
	}
	if got := ts.doR(t, c, "EXISTS", "l"); got != "(integer) 0" {
		t.Errorf("non-string destination not deleted: %s", got)
	}
}

// TestBitfieldKeyFlags: bitfieldGetKeys's flags, as redis-server 7.0.15's
// COMMAND GETKEYSANDFLAGS prints them.
func TestBitfieldKeyFlags(t *testing.T) {
	rw, ro := "RW access update", "RO access"
	for args, want := range map[string]string{
		"BITFIELD k": ro, "BITFIELD k GET u8 0": ro, "BITFIELD k get u8 0 OVERFLOW sat GET i8 1": ro,
		"BITFIELD k SET u8 0 1": rw, "BITFIELD k GET u8 0 INCRBY u8 0 1": rw, "BITFIELD k GET u8": rw,
		"BITFIELD k OVERFLOW": rw, "BITFIELD k FOO": rw, "BITFIELD k SET u8 0": rw,
	} {
		f := strings.Fields(args)
		argv := make([][]byte, len(f))
		for i := range f {
			argv[i] = []byte(f[i])
		}
		if got := strings.Join(bitfieldKeyFlags(argv), " "); got != want {
			t.Errorf("%s: %s, want %s", args, got, want)
		}
	}
}

// refBitRange is the reference normalization of BITCOUNT's and BITPOS's
// range, written from the documentation: negative indexes count from the
// end, then both ends are clamped to the string.
func refBitRange(start, end, nbits int64, unit int64) (lo, hi int64, ok bool) {
	total := nbits / unit
	if start < 0 {
		start = max(total+start, 0)
	}
	if end < 0 {
		end = max(total+end, 0)
	}
	if end >= total {
		end = total - 1
	}
	if start > end {
		return 0, 0, false
	}
	return start * unit, end*unit + unit - 1, true
}

func refBit(s []byte, i int64) int {
	return int(s[i/8]>>(7-i%8)) & 1
}

// refBitCount is BITCOUNT key start end [unit] bit by bit.
func refBitCount(s []byte, start, end int64, isBit bool) int64 {
	unit := int64(8)
	if isBit {
		unit = 1
	}
	if start < 0 && end < 0 && start > end {
		return 0
	}
	lo, hi, ok := refBitRange(start, end, int64(len(s))*8, unit)
	if !ok {
		return 0
	}
	n := int64(0)
	for i := lo; i <= hi; i++ {
		n += int64(refBit(s, i))
	}
	return n
}

// refBitPos is BITPOS key bit start [end [unit]] bit by bit (hasEnd false:
// no end given).
func refBitPos(s []byte, bit int, start, end int64, hasEnd, isBit bool) int64 {
	unit := int64(8)
	if isBit {
		unit = 1
	}
	if !hasEnd {
		end = -1
	}
	lo, hi, ok := refBitRange(start, end, int64(len(s))*8, unit)
	if !ok {
		return -1
	}
	for i := lo; i <= hi; i++ {
		if refBit(s, i) == bit {
			return i
		}
	}
	if bit == 0 && !hasEnd {
		return hi + 1
	}
	return -1
}

// randBitmap returns a random string biased towards runs of equal bytes,
// so that the word-skipping paths are taken.
func randBitmap(rng *rand.Rand) []byte {
	n := rng.IntN(40)
	b := make([]byte, n)
	fill := []byte{0x00, 0xff}[rng.IntN(2)]
	for i := range b {
		switch rng.IntN(10) {
		case 0:
			b[i] = byte(rng.IntN(256))
		case 1:
			b[i] = byte(1) << rng.IntN(8)
			if fill == 0xff {
				b[i] = ^b[i]
			}
		default:
			b[i] = fill
		}
	}
	return b
}

func randIndex(rng *rand.Rand, n int) int64 {
	switch rng.IntN(12) {
	case 0:
		return math.MinInt64 + rng.Int64N(3)
	case 1:
		return math.MaxInt64 - rng.Int64N(3)
	}
	return rng.Int64N(int64(2*n+20)) - int64(n+10)
}

// TestBitCountBitPosModel compares BITCOUNT and BITPOS (the handlers and
// countBits/findBit) with the bit-by-bit reference on random strings and
// ranges, in both units.
func TestBitCountBitPosModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 15))
	ts := newTestServer(t)
	c := ts.client()
	for iter := 0; iter < 4000; iter++ {
		s := randBitmap(rng)
		ts.do(c, "SET", "k", string(s))
		nbits := len(s) * 8
		if nbits > 0 {
			lo := rng.Int64N(int64(nbits))
			hi := lo + rng.Int64N(int64(nbits)-lo)
			want := int64(0)
			for i := lo; i <= hi; i++ {
				want += int64(refBit(s, i))
			}
			if got := countBits(s, lo, hi); got != want {
				t.Fatalf("countBits(%x, %d, %d) = %d, want %d", s, lo, hi, got, want)
			}
			for bit := 0; bit <= 1; bit++ {
				want := int64(-1)
				for i := lo; i <= hi; i++ {
					if refBit(s, i) == bit {
						want = i
						break
					}
				}
				if got := findBit(s, lo, hi, bit); got != want {
					t.Fatalf("findBit(%x, %d, %d, %d) = %d, want %d", s, lo, hi, bit, got, want)
				}
			}
		}
		start, end := randIndex(rng, nbits), randIndex(rng, nbits)
		isBit := rng.IntN(2) == 0
		unit := "BYTE"
		if isBit {
			unit = "BIT"
		}
		a, b := strconv.FormatInt(start, 10), strconv.FormatInt(end, 10)
		want := fmt.Sprintf("(integer) %d", refBitCount(s, start, end, isBit))
		if got := ts.doR(t, c, "BITCOUNT", "k", a, b, unit); got != want {
			t.Fatalf("BITCOUNT %x %s %s %s = %s, want %s", s, a, b, unit, got, want)
		}
		if !isBit {
			if got := ts.doR(t, c, "BITCOUNT", "k", a, b); got != want {
				t.Fatalf("BITCOUNT %x %s %s = %s, want %s", s, a, b, got, want)
			}
		}
		if got, want := ts.doR(t, c, "BITCOUNT", "k"), fmt.Sprintf("(integer) %d", refBitCount(s, 0, -1, false)); got != want {
			t.Fatalf("BITCOUNT %x = %s, want %s", s, got, want)
		}
		for bit := 0; bit <= 1; bit++ {
			bs := strconv.Itoa(bit)
			cases := []struct {
				args   []string
				hasEnd bool
				isBit  bool
			}{
				{[]string{"BITPOS", "k", bs, a, b, unit}, true, isBit},
				{[]string{"BITPOS", "k", bs, a, b}, true, false},
				{[]string{"BITPOS", "k", bs, a}, false, false},
			}
			for _, tc := range cases {
				want := fmt.Sprintf("(integer) %d", refBitPos(s, bit, start, end, tc.hasEnd, tc.isBit))
				if got := ts.doR(t, c, tc.args...); got != want {
					t.Fatalf("%v on %x = %s, want %s", tc.args, s, got, want)
				}
			}
			// No range: BITPOS k bit is BITPOS k bit 0 (an empty string has
			// no bits at all, so -1 for both).
			want := fmt.Sprintf("(integer) %d", refBitPos(s, bit, 0, 0, false, false))
			if got := ts.doR(t, c, "BITPOS", "k", bs); got != want {
				t.Fatalf("BITPOS %x %d = %s, want %s", s, bit, got, want)
			}
		}
	}
}

// TestBitopModel compares BITOP with a byte-by-byte reference.
func TestBitopModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ts := newTestServer(t)
	c := ts.client()
	for iter := 0; iter < 2000; iter++ {
		n := 1 + rng.IntN(4)
		srcs := make([][]byte, n)
		args := []string{"BITOP", "", "dest"}
		maxlen := 0
		for i := range srcs {
			key := "src" + strconv.Itoa(i)
			if rng.IntN(6) == 0 {
				ts.do(c, "DEL", key)
			} else {
				srcs[i] = randBitmap(rng)
				ts.do(c, "SET", key, string(srcs[i]))
			}
			maxlen = max(maxlen, len(srcs[i]))
			args = append(args, key)
		}
		op := []string{"AND", "OR", "XOR", "NOT"}[rng.IntN(4)]
		if op == "NOT" {
			args, srcs, maxlen = args[:4], srcs[:1], len(srcs[0])
		}
		args[1] = op
		want := make([]byte, maxlen)
		at := func(s []byte, i int) byte {
			if i < len(s) {
				return s[i]
			}
			return 0
		}
		for i := range want {
			x := at(srcs[0], i)
			for _, s := range srcs[1:] {
				switch op {
				case "AND":
					x &= at(s, i)
				case "OR":
					x |= at(s, i)
				case "XOR":
					x ^= at(s, i)
				}
			}
			if op == "NOT" {
				x = ^x
			}
			want[i] = x
		}
		if got := ts.doR(t, c, args...); got != fmt.Sprintf("(integer) %d", maxlen) {
			t.Fatalf("%v: %s, want %d", args, got, maxlen)
		}
		wantGet := "(nil)"
		if maxlen > 0 {
			wantGet = strconv.Quote(string(want))
		}
		if got := ts.doR(t, c, "GET", "dest"); got != wantGet {
			t.Fatalf("%v: dest %s, want %s", args, got, wantGet)
		}
	}
}

// refBitfieldStore is the value BITFIELD stores for v (a big integer) in an
// nbits field with the overflow mode, or ok false for FAIL on overflow.
// isSet selects SET's quirk: checkSignedBitfieldOverflow computes max-value
// in 64 bits before checking value's range, so a signed SET value at or
// below max-2^63 reads as an overflow and saturates to max.
func refBitfieldStore(v *big.Int, signed bool, nbits int, ow string, isSet bool) (*big.Int, bool) {
	lo, hi := big.NewInt(0), new(big.Int).Lsh(big.NewInt(1), uint(nbits))
	if signed {
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(nbits-1)))
		hi = new(big.Int).Lsh(big.NewInt(1), uint(nbits-1))
	}
	hi.Sub(hi, big.NewInt(1))
	if v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0 {
		return v, true
	}
	switch ow {
	case "SAT":
		wrapsLow := signed && isSet && new(big.Int).Sub(hi, v).Cmp(new(big.Int).Lsh(big.NewInt(1), 63)) >= 0
		if v.Cmp(lo) < 0 && !wrapsLow {
			return lo, true
		}
		return hi, true
	case "FAIL":
		return nil, false
	}
	mod := new(big.Int).Lsh(big.NewInt(1), uint(nbits))
	w := new(big.Int).Mod(v, mod) // 0 <= w < 2^nbits
	if signed && w.Cmp(hi) > 0 {
		w.Sub(w, mod)
	}
	return w, true
}

// TestBitfieldModel drives BITFIELD SET and INCRBY on random fields and
// values and checks each reply and the stored field against arbitrary-
// precision arithmetic. Redis takes an unsigned field's SET value as the
// 64-bit two's complement of the argument (SET u8 0 -1 saturates to 255).
func TestBitfieldModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ts := newTestServer(t)
	c := ts.client()
	randVal := func() int64 {
		switch rng.IntN(6) {
		case 0:
			return math.MinInt64 + rng.Int64N(4)
		case 1:
			return math.MaxInt64 - rng.Int64N(4)
		case 2:
			return rng.Int64()
		case 3:
			return -rng.Int64()
		}
		return rng.Int64N(600) - 300
	}
	for iter := 0; iter < 20000; iter++ {
		signed := rng.IntN(2) == 0
		nbits := 1 + rng.IntN(64)
		typ := "i"
		if !signed {
			typ = "u"
			nbits = min(nbits, 63)
		}
		typ += strconv.Itoa(nbits)
		off := strconv.Itoa(rng.IntN(20))
		ow := []string{"WRAP", "SAT", "FAIL"}[rng.IntN(3)]
		// The current field, as a GET reads it.
		cur, ok := new(big.Int).SetString(strings.TrimSuffix(strings.TrimPrefix(ts.doR(t, c, "BITFIELD", "k", "GET", typ, off), "[(integer) "), "]"), 10)
		if !ok {
			t.Fatal("GET reply")
		}
		v := randVal()
		arg := strconv.FormatInt(v, 10)
		var want string
		var stored *big.Int
		if rng.IntN(2) == 0 {
			in := big.NewInt(v)
			if !signed {
				in.SetUint64(uint64(v))
			}
			nv, ok := refBitfieldStore(in, signed, nbits, ow, true)
			want = "[(nil)]"
			stored = cur
			if ok {
				want = "[(integer) " + cur.String() + "]"
				stored = nv
			}
			if got := ts.doR(t, c, "BITFIELD", "k", "OVERFLOW", ow, "SET", typ, off, arg); got != want {
				t.Fatalf("OVERFLOW %s SET %s %s %s on %s: %s, want %s", ow, typ, off, arg, cur, got, want)
			}
		} else {
			nv, ok := refBitfieldStore(new(big.Int).Add(cur, big.NewInt(v)), signed, nbits, ow, false)
			want = "[(nil)]"
			stored = cur
			if ok {
				want = "[(integer) " + nv.String() + "]"
				stored = nv
			}
			if got := ts.doR(t, c, "BITFIELD", "k", "OVERFLOW", ow, "INCRBY", typ, off, arg); got != want {
				t.Fatalf("OVERFLOW %s INCRBY %s %s %s on %s: %s, want %s", ow, typ, off, arg, cur, got, want)
			}
		}
		if got, want := ts.doR(t, c, "BITFIELD_RO", "k", "GET", typ, off), "[(integer) "+stored.String()+"]"; got != want {
			t.Fatalf("GET %s %s after the write: %s, want %s", typ, off, got, want)
		}
	}
}

// bitmapEventCases are commands with what redis-server 7.0.15 did for
// each: the server.dirty increment and the keyevent notifications
// (notify-keyspace-events EAnm), in order.
var bitmapEventCases = []eventCase{
	{[]string{"SETBIT", "k", "7", "1"}, 1, []string{"new k", "setbit k"}},
	{[]string{"SETBIT", "k", "7", "1"}, 0, nil}, // unchanged
	{[]string{"SETBIT", "k", "7", "0"}, 1, []string{"setbit k"}},
	{[]string{"SETBIT", "k", "20", "0"}, 1, []string{"setbit k"}}, // grows
	{[]string{"SETBIT", "k", "x", "0"}, 0, nil},
	{[]string{"GETBIT", "k", "0"}, 0, nil},
	{[]string{"GETBIT", "nokey", "0"}, 0, []string{"keymiss nokey"}},
	{[]string{"BITCOUNT", "nokey", "0", "1"}, 0, []string{"keymiss nokey"}},
	{[]string{"BITPOS", "nokey", "1"}, 0, []string{"keymiss nokey"}},
	{[]string{"BITFIELD", "k", "SET", "u8", "0", "0"}, 0, nil},
	{[]string{"BITFIELD", "k", "SET", "u8", "0", "1", "SET", "u8", "8", "1", "GET", "u8", "0"}, 2, []string{"setbit k"}},
	{[]string{"BITFIELD", "k", "SET", "u8", "0", "1", "SET", "u8", "32", "0"}, 2, []string{"setbit k"}}, // grows: every write counts
	{[]string{"BITFIELD", "k", "OVERFLOW", "FAIL", "SET", "u8", "0", "256"}, 0, nil},
	{[]string{"BITFIELD", "new", "OVERFLOW", "FAIL", "SET", "u8", "0", "256"}, 0, []string{"new new"}}, // created, not a write
	{[]string{"BITFIELD", "nokey", "GET", "u8", "0"}, 0, []string{"keymiss nokey"}},
	{[]string{"BITFIELD_RO", "nokey", "GET", "u8", "0"}, 0, []string{"keymiss nokey"}},
	{[]string{"BITFIELD", "k2", "INCRBY", "i5", "3", "1", "INCRBY", "i5", "3", "1"}, 2, []string{"new k2", "setbit k2"}},
	{[]string{"BITOP", "OR", "d", "k", "nokey"}, 1, []string{"keymiss nokey", "new d", "set d"}},
	{[]string{"BITOP", "AND", "d", "k", "k2"}, 1, []string{"set d"}},
	{[]string{"BITOP", "AND", "d", "nokey"}, 1, []string{"keymiss nokey", "del d"}},
	{[]string{"BITOP", "AND", "d", "nokey"}, 0, []string{"keymiss nokey"}},
	{[]string{"BITOP", "NOT", "d", "k"}, 1, []string{"new d", "set d"}},
}

// TestBitmapWritesAndEvents checks Vigil against bitmapEventCases.
func TestBitmapWritesAndEvents(t *testing.T) {
	l := startLive(t, "--notify-keyspace-events", "EAnm")
	eventRun(t, bitmapEventCases, l.dial(t), l.dial(t), l.dial(t))
}

// TestBitmapWritesAndEventsRedis (interop) checks bitmapEventCases against
// a live redis-server.
func TestBitmapWritesAndEventsRedis(t *testing.T) {
	eventRunRedis(t, bitmapEventCases)
}

// TestBitmapDifferentialRandom (interop) sends the same random stream of
// bitmap commands (valid and invalid arguments, a handful of keys) to Vigil
// and to a live redis-server and compares every reply.
func TestBitmapDifferentialRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial, aof := startRedisAOF(t)
	rc, rbr := dial(2)
	ts := newTestServer(t)
	c := ts.client()
	rng := rand.New(rand.NewPCG(2026, 11))
	keys := []string{"a", "b", "c", "n"}
	key := func() string { return keys[rng.IntN(len(keys))] }
	idx := func() string {
		switch rng.IntN(20) {
		case 0:
			return []string{"x", "", "-0", "1.5", "#3", "9223372036854775807", "-9223372036854775808"}[rng.IntN(7)]
		case 1, 2:
			return strconv.Itoa(-rng.IntN(400))
		}
		return strconv.Itoa(rng.IntN(400))
	}
	offset := func() string {
		switch rng.IntN(30) {
		case 0:
			// (Not 4294967295: a write there allocates 512MB.)
			return []string{"-1", "x", "4294967296", "#-1", "#4294967296"}[rng.IntN(5)]
		case 1, 2:
			return "#" + strconv.Itoa(rng.IntN(30))
		}
		return strconv.Itoa(rng.IntN(300))
	}
	unit := func() []string {
		switch rng.IntN(8) {
		case 0:
			return nil
		case 1:
			return []string{"foo"}
		case 2, 3, 4:
			return []string{"BIT"}
		}
		return []string{"byte"}
	}
	ftype := func() string {
		if rng.IntN(25) == 0 {
			return []string{"u64", "i65", "u0", "x8"}[rng.IntN(4)]
		}
		if rng.IntN(2) == 0 {
			return "i" + strconv.Itoa(1+rng.IntN(64))
		}
		return "u" + strconv.Itoa(1+rng.IntN(63))
	}
	value := func() string {
		switch rng.IntN(6) {
		case 0:
			return strconv.FormatInt(rng.Int64(), 10)
		case 1:
			return strconv.FormatInt(-rng.Int64(), 10)
		case 2:
			return []string{"x", "9223372036854775807", "-9223372036854775808", "0"}[rng.IntN(4)]
		}
		return strconv.Itoa(rng.IntN(1000) - 500)
	}
	gen := func() []string {
		switch rng.IntN(9) {
		case 0, 1:
			bit := "1"
			if rng.IntN(3) == 0 {
				bit = "0"
			}
			if rng.IntN(30) == 0 {
				bit = "2"
			}
			return []string{"SETBIT", key(), offset(), bit}
		case 2:
			return []string{"GETBIT", key(), offset()}
		case 3:
			args := []string{"BITCOUNT", key()}
			if rng.IntN(6) > 0 {
				args = append(args, idx(), idx())
				args = append(args, unit()...)
			}
			return args
		case 4:
			bit := strconv.Itoa(rng.IntN(2))
			if rng.IntN(30) == 0 {
				bit = "-1"
			}
			args := []string{"BITPOS", key(), bit}
			switch rng.IntN(4) {
			case 1:
				args = append(args, idx())
			case 2:
				args = append(args, idx(), idx())
			case 3:
				args = append(args, idx(), idx())
				args = append(args, unit()...)
			}
			return args
		case 5:
			op := []string{"AND", "OR", "XOR", "NOT", "not", "nand"}[rng.IntN(6)]
			args := []string{"BITOP", op, key()}
			for n := 1 + rng.IntN(3); n > 0; n-- {
				args = append(args, key())
			}
			return args
		case 6:
			return []string{"SET", key(), string(randBitmap(rng))}
		}
		name := "BITFIELD"
		if rng.IntN(4) == 0 {
			name = "BITFIELD_RO"
		}
		args := []string{name, key()}
		for n := rng.IntN(4); n > 0; n-- {
			switch rng.IntN(7) {
			case 0, 1:
				args = append(args, "GET", ftype(), offset())
			case 2, 3:
				args = append(args, "SET", ftype(), offset(), value())
			case 4, 5:
				args = append(args, "INCRBY", ftype(), offset(), value())
			default:
				args = append(args, "OVERFLOW", []string{"WRAP", "SAT", "FAIL", "bad"}[rng.IntN(4)])
			}
		}
		return args
	}
	mark := aof.begin(t, ts, rc, rbr, c)
	rawDo(t, rc, rbr, "SET", "n", "12345")
	ts.do(c, "SET", "n", "12345")
	compared := 0
	for i := 0; i < 3000; i++ {
		args := gen()
		if i%50 == 49 {
			args = []string{"MGET", "a", "b", "c", "n"}
		}
		want, err := render(rawDo(t, rc, rbr, args...))
		if err != nil {
			t.Fatal(err)
		}
		got := ts.doR(t, c, args...)
		if got != want {
			t.Fatalf("command %d %q:\n vigil: %s\n redis: %s", i, args, got, want)
		}
		compared++
	}
	// Both propagated the same write stream (SETBIT, BITOP, BITFIELD as
	// sent, and only when they changed something).
	aof.check(t, ts, mark, nil)
	for _, k := range keys {
		for _, cmd := range [][]string{{"GET", k}, {"OBJECT", "ENCODING", k}} {
			want, _ := render(rawDo(t, rc, rbr, cmd...))
			if got := ts.doR(t, c, cmd...); got != want {
				t.Errorf("%v: vigil %s, redis %s", cmd, got, want)
			}
		}
	}
	t.Logf("%d random bitmap commands answered as redis-server does", compared)
}
