package lua

import (
	"math/rand/v2"
	"strconv"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// tableLayout is a table's array and node parts slot by slot (what
// next() walks), as text.
func tableLayout(t *lua.LTable) string {
	asize, nsize := t.Sizes()
	s := "a" + strconv.Itoa(asize) + ":"
	for i := 1; i <= asize; i++ {
		s += t.RawGetInt(i).String() + ","
	}
	s += " n" + strconv.Itoa(nsize) + ":"
	for j := 0; j < nsize; j++ {
		k, v := t.Node(j)
		if k == nil {
			s += "_,"
			continue
		}
		s += k.String() + "=" + v.String() + ","
	}
	return s
}

// TestCjsonTableBuilders checks the tables the decoder builds at once
// (StringTableBuilder.Build, NewArrayTable) against those lua_newtable and
// rawsets in order build: the same slots, and the same slots again after
// more keys are set (the same free pointer and sizes).
func TestCjsonTableBuilders(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b lua.StringTableBuilder
	more := func(t *lua.LTable) {
		for i := 0; i < 7; i++ {
			t.RawSetString("more"+strconv.Itoa(i), lua.LNumber(i))
			t.RawSetInt(t.Len()+1, lua.LTrue)
		}
		t.RawSetInt(100, lua.LFalse)
	}
	for n := 0; n < 3000; n++ {
		count := rng.IntN(70)
		if n%100 == 0 {
			count = rng.IntN(2000)
		}
		keys := make([]lua.LValue, count)
		vals := make([]lua.LValue, count)
		for i := range keys {
			var k string
			switch rng.IntN(4) {
			case 0:
				k = "k" + strconv.Itoa(rng.IntN(count+1))
			case 1:
				k = strconv.Itoa(rng.IntN(50))
			default:
				k = "x" + strconv.Itoa(rng.IntN(100000))
			}
			keys[i], vals[i] = lua.LString(k), lua.LNumber(i)
		}
		// the third build of the same keys comes from the shape cache
		for rep := 0; rep < 3; rep++ {
			wantT := newTableForTest()
			for i := range keys {
				wantT.RawSetString(string(keys[i].(lua.LString)), vals[i])
			}
			got := b.Build(keys, vals)
			if g, w := tableLayout(got), tableLayout(wantT); g != w {
				t.Fatalf("object %v (build %d):\n got %s\nwant %s", keys, rep, g, w)
			}
			more(got)
			more(wantT)
			if g, w := tableLayout(got), tableLayout(wantT); g != w {
				t.Fatalf("object %v (build %d) then more:\n got %s\nwant %s", keys, rep, g, w)
			}
			vals = append([]lua.LValue(nil), vals...)
			for i := range vals {
				vals[i] = lua.LNumber(rep*1000 + i)
			}
		}
		arr := newTableForTest()
		for i := range vals {
			arr.RawSetInt(i+1, vals[i])
		}
		gotArr := lua.NewArrayTable(vals)
		if g, w := tableLayout(gotArr), tableLayout(arr); g != w || gotArr.Len() != arr.Len() {
			t.Fatalf("array of %d:\n got %s\nwant %s", count, g, w)
		}
		more(gotArr)
		more(arr)
		if g, w := tableLayout(gotArr), tableLayout(arr); g != w || gotArr.Len() != arr.Len() {
			t.Fatalf("array of %d then more:\n got %s\nwant %s", count, g, w)
		}
	}
}

func newTableForTest() *lua.LTable {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	return L.NewTable()
}
