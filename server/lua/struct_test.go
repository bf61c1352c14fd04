package lua

import (
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// FuzzStruct runs struct.pack, unpack and size on any format and data: a
// Lua error is fine, a Go panic is not.
func FuzzStruct(f *testing.F) {
	for _, s := range [][2]string{
		{">iHb", "\x00\x00\x00\x01\x00\x02\xfd"},
		{"<i2Bs", "ab\x00"},
		{"bc0", "\x03abcd"},
		{"!4 b i", "\x01\x00\x00\x00\x02\x00\x00\x00"},
		{"i40", ""},
		{"c0", "12"},
		{">I9", "\x01\x00\x00\x00\x00\x00\x00\x00\x02"},
	} {
		f.Add(s[0], s[1], int64(1))
	}
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	openStruct(L, L.G.Global)
	var fns []*lua.LFunction
	for _, code := range []string{
		"struct.size(f)", "struct.unpack(f, d, o)", "struct.unpack(f, d)",
		"struct.pack(f, o, d, o, d, o, d)",
	} {
		fn, err := L.LoadString(code)
		if err != nil {
			f.Fatal(err)
		}
		fns = append(fns, fn)
	}
	f.Fuzz(func(t *testing.T, format, data string, off int64) {
		L.SetGlobal("f", lua.LString(format))
		L.SetGlobal("d", lua.LString(data))
		L.SetGlobal("o", lua.LNumber(off))
		for _, fn := range fns {
			L.Push(fn)
			if err := L.PCall(0, 0, nil); err != nil {
				if ae, ok := err.(*lua.ApiError); !ok || ae.Type != lua.ApiErrorRun {
					t.Fatalf("f=%q d=%q o=%d: %v", format, data, off, err)
				}
			}
		}
		L.SetTop(0)
	})
}
