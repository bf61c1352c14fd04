package lua

import (
	"bufio"
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/vigil-kv/vigil/internal/resp"
)

// keepHost keeps the argv of SET (as propagation keeps a write's) and
// lets the engine reuse every other argv at once.
type keepHost struct {
	fakeHost
	kept [][][]byte
	want []string
}

func (h *keepHost) Call(argv [][]byte, proto int, repl Repl) (resp.Value, string, string, bool) {
	if string(argv[0]) == "SET" {
		h.kept = append(h.kept, argv)
		h.want = append(h.want, string(argv[1])+"="+string(argv[2]))
		return resp.Value{Kind: resp.KindSimple, Str: "OK"}, "", "", true
	}
	return resp.Value{Kind: resp.KindBulk, Str: "v"}, "", "", false
}

// TestArenaReusesUnkeptArgv: a long loop of calls whose argv nothing keeps
// runs in the arenas' first blocks, and the argv the host kept (SETs
// among thousands of GETs with longer arguments) still read as they were
// when the script ends.
func TestArenaReusesUnkeptArgv(t *testing.T) {
	h := &keepHost{}
	e := New(h)
	defer e.Close()
	body := `for i = 1, 20000 do
		redis.call('GET', string.rep('x', 100) .. i)
		if i % 1000 == 0 then redis.call('SET', 'k' .. i, i * 7) end
	end
	return 1`
	if got := eval(t, e, body, nil, nil); got != ":1\r\n" {
		t.Fatalf("script: %q", got)
	}
	if len(h.kept) != 20 {
		t.Fatalf("%d SETs kept, want 20", len(h.kept))
	}
	for i, argv := range h.kept {
		if got := string(argv[1]) + "=" + string(argv[2]); got != h.want[i] {
			t.Fatalf("kept argv %d reads %q, was %q", i, got, h.want[i])
		}
		if want := "k" + strconv.Itoa((i+1)*1000) + "=" + strconv.Itoa((i+1)*7000); h.want[i] != want {
			t.Fatalf("SET %d was %q, want %q", i, h.want[i], want)
		}
	}
	// 20000 GETs of about 105 bytes would take 2 MB of bytes and 40000
	// argv slots without reuse.
	if c := cap(e.byteArena); c > 64<<10 {
		t.Fatalf("byte arena grew to %d bytes", c)
	}
	if c := cap(e.argArena); c > 1024 {
		t.Fatalf("argv arena grew to %d slots", c)
	}
}

// TestLuaArgNumbersAsRedis: a number argument reads as glibc's "%.17g"
// formats it (luaRedisGenericCommand), integers through the fast path
// included, infinities and NaNs spelled as C spells them.
func TestLuaArgNumbersAsRedis(t *testing.T) {
	e := New(&fakeHost{})
	defer e.Close()
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 7, 123456, -98765, 1e15, 1e16, 99999999999999999, 1e17, -1e17,
		1.5e17, 2e20, 1 << 53, -(1 << 53), 0.5, -0.25, 1.0 / 3, 1e-5, 123.456, 4503599627370495.5} {
		got, ok := e.luaArg(e.L.BoxNumber(lua.LNumber(f)))
		if !ok {
			t.Fatalf("%v: not an argument", f)
		}
		if want := strconv.FormatFloat(f, 'g', 17, 64); string(got) != want {
			t.Fatalf("%v: %q, want %q", f, got, want)
		}
	}
	for f, want := range map[float64]string{math.Inf(1): "inf", math.Inf(-1): "-inf"} {
		if got, _ := e.luaArg(lua.LNumber(f)); string(got) != want {
			t.Fatalf("%v: %q, want %q", f, got, want)
		}
	}
	nan := math.NaN()
	for _, c := range []struct {
		f    float64
		want string
	}{{math.Copysign(nan, -1), "-nan"}, {math.Copysign(nan, 1), "nan"}} {
		if got, _ := e.luaArg(lua.LNumber(c.f)); string(got) != c.want {
			t.Fatalf("NaN: %q, want %q", got, c.want)
		}
	}
}

// TestFastIndexFollowsMetatable: a proxy's fast index answers the lookups
// that miss in it as its metatable's __index would, and a new metatable
// takes over from it (SetMetatable clears it).
func TestFastIndexFollowsMetatable(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	real1, real2 := L.NewTable(), L.NewTable()
	real1.RawSetString("k", lua.LString("one"))
	real2.RawSetString("k", lua.LString("two"))
	p := L.NewTable()
	mt := L.NewTable()
	mt.RawSetString("__index", real1)
	L.SetMetatable(p, mt)
	p.SetFastIndex(real1)
	L.SetGlobal("p", p)
	get := func(expr string) string {
		t.Helper()
		if err := L.DoString("return " + expr); err != nil {
			t.Fatal(err)
		}
		v := L.Get(-1)
		L.Pop(1)
		return v.String()
	}
	if got := get("p.k"); got != "one" {
		t.Fatalf("p.k = %s", got)
	}
	if got := get("p['k']"); got != "one" {
		t.Fatalf("p['k'] = %s", got)
	}
	if got := get("p.missing"); got != "nil" {
		t.Fatalf("p.missing = %s", got)
	}
	mt2 := L.NewTable()
	mt2.RawSetString("__index", real2)
	L.SetMetatable(p, mt2)
	if got := get("p.k"); got != "two" {
		t.Fatalf("after setmetatable, p.k = %s", got)
	}
	p.RawSetString("k", lua.LString("own"))
	if got := get("p.k"); got != "own" {
		t.Fatalf("own key: %s", got)
	}
}

// TestFlatArrayLikeReadValue: a flat array reply converted from its text
// is the table respToLua makes of the value ReadValue reads from it (the
// same sizes, so the same #t and traversal, and the same elements), and
// FlatArray refuses every other shape and any cut or extended text.
func TestFlatArrayLikeReadValue(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 3000; iter++ {
		proto := 2 + rng.IntN(2)
		n := rng.IntN(40)
		if iter%100 == 0 {
			n = 1000 + rng.IntN(100)
		}
		var b []byte
		b = append(b, '*')
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, "\r\n"...)
		for i := 0; i < n; i++ {
			switch rng.IntN(5) {
			case 0:
				b = append(b, ':')
				b = strconv.AppendInt(b, rng.Int64N(1<<40)-1<<39, 10)
				b = append(b, "\r\n"...)
			case 1:
				if proto == 2 {
					b = append(b, "$-1\r\n"...)
					continue
				}
				fallthrough
			default:
				v := strings.Repeat(string(rune('a'+rng.IntN(26))), rng.IntN(20))
				if rng.IntN(10) == 0 {
					v = "x\r\ny"
				}
				b = append(b, '$')
				b = strconv.AppendInt(b, int64(len(v)), 10)
				b = append(b, "\r\n"...)
				b = append(b, v...)
				b = append(b, "\r\n"...)
			}
		}
		if !FlatArray(b, proto) {
			t.Fatalf("proto %d: %q refused", proto, b)
		}
		rv, err := resp.ReadValue(bufio.NewReader(bytes.NewReader(b)), resp.DefaultReplyLimits)
		if err != nil {
			t.Fatal(err)
		}
		want := respToLua(L, rv, proto).(*lua.LTable)
		got := FlatArrayToLua(L, string(b), proto).(*lua.LTable)
		wa, wn := want.Sizes()
		ga, gn := got.Sizes()
		if wa != ga || wn != gn || want.Len() != got.Len() {
			t.Fatalf("sizes %d/%d len %d, want %d/%d len %d", ga, gn, got.Len(), wa, wn, want.Len())
		}
		for i := 1; i <= n; i++ {
			w, g := want.RawGetInt(i), got.RawGetInt(i)
			if w.Type() != g.Type() || w.String() != g.String() {
				t.Fatalf("element %d: %v (%s), want %v (%s)", i, g, g.Type(), w, w.Type())
			}
		}
		// cut texts and a trailing byte are not flat arrays
		if len(b) > 4 {
			if cut := b[:1+rng.IntN(len(b)-1)]; FlatArray(cut, proto) {
				t.Fatalf("cut text %q accepted", cut)
			}
		}
		if FlatArray(append(b[:len(b):len(b)], ':'), proto) {
			t.Fatalf("%q with a trailing byte accepted", b)
		}
	}
	for _, c := range []struct {
		b     string
		proto int
	}{
		{"*1\r\n*0\r\n", 2}, {"*1\r\n+OK\r\n", 2}, {"*1\r\n$-1\r\n", 3}, {"*1\r\n_\r\n", 3},
		{"%1\r\n$1\r\na\r\n:1\r\n", 3}, {"~1\r\n$1\r\na\r\n", 3}, {"*-1\r\n", 2}, {"*1\r\n,1.5\r\n", 3},
		{"*2\r\n$1\r\na\r\n", 2}, {"*1\r\n$2\r\na\r\n", 2}, {"*1\r\n:1x\r\n", 2},
	} {
		if FlatArray([]byte(c.b), c.proto) {
			t.Fatalf("proto %d: %q accepted", c.proto, c.b)
		}
	}
}
