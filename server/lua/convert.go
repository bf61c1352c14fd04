package lua

import (
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// respToLua is redisProtocolToLuaType.
func respToLua(L *lua.LState, v resp.Value, proto int) lua.LValue {
	switch v.Kind {
	case resp.KindInt:
		return L.BoxNumber(lua.LNumber(v.Int))
	case resp.KindBulk:
		return lua.LString(v.Str)
	case resp.KindSimple:
		// A table of one key is sized for it from the start: the node part
		// lua_newtable's growth would give it on the first key, without
		// the rehash.
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", lua.LString(v.Str))
		return t
	case resp.KindError, resp.KindBlobErr:
		return errTable(L, v.Str)
	case resp.KindNull:
		if proto == 3 {
			return lua.LNil
		}
		return lua.LFalse
	case resp.KindArray, resp.KindPush:
		t := L.NewTable() // lua_newtable: the layout of Lua 5.1's growth
		for i, el := range v.Elems {
			t.RawSetInt(i+1, respToLua(L, el, proto))
		}
		return t
	case resp.KindMap:
		m := L.NewTable()
		for i := 0; i+1 < len(v.Elems); i += 2 {
			m.RawSet(respToLua(L, v.Elems[i], proto), respToLua(L, v.Elems[i+1], proto))
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("map", m)
		return t
	case resp.KindSet:
		m := L.NewTable()
		for _, el := range v.Elems {
			m.RawSet(respToLua(L, el, proto), lua.LTrue)
		}
		t := L.CreateTable(0, 1)
		t.RawSetString("set", m)
		return t
	case resp.KindDouble:
		f, _ := strconv.ParseFloat(v.Str, 64)
		t := L.CreateTable(0, 1)
		t.RawSetString("double", lua.LNumber(f))
		return t
	case resp.KindBool:
		return lua.LBool(v.Int != 0)
	case resp.KindBigNum:
		t := L.CreateTable(0, 1)
		t.RawSetString("big_number", lua.LString(v.Str))
		return t
	case resp.KindVerbatim:
		vt := L.NewTable()
		format, text := "txt", v.Str
		if len(text) >= 4 && text[3] == ':' {
			format, text = text[:3], text[4:]
		}
		vt.RawSetString("string", lua.LString(text))
		vt.RawSetString("format", lua.LString(format))
		t := L.CreateTable(0, 1)
		t.RawSetString("verbatim_string", vt)
		return t
	}
	return lua.LFalse
}

// luaToResp is luaReplyToRedisReply, in the caller's protocol.
// A boolean follows the script's protocol (redis.setresp): with 2, true is
// 1 and false a null; with 3 a RESP3 boolean (1/0 to a RESP2 caller).
func luaToResp(w *resp.Writer, v lua.LValue, proto, depth int) (counted bool) {
	switch x := v.(type) {
	case lua.LString:
		w.Bulk([]byte(string(x)))
	case lua.LBool:
		if proto == 2 {
			if x {
				w.Int(1)
			} else {
				w.Null()
			}
		} else {
			w.Bool(bool(x))
		}
	case lua.LNumber:
		w.Int(int64(float64(x)))
	case *lua.LTable:
		if depth > 1000 {
			w.Error("ERR reached lua stack limit")
			return
		}
		if ev, ok := x.RawGetString("err").(lua.LString); ok {
			if depth == 0 && lua.LVAsBool(x.RawGetString("ignore_error_stats_update")) {
				counted = true
			}
			w.Error(string(ev))
			return
		}
		if ok, is := x.RawGetString("ok").(lua.LString); is {
			w.Simple(string(ok))
			return
		}
		if d, is := x.RawGetString("double").(lua.LNumber); is {
			w.Double(float64(d))
			return
		}
		if b, is := x.RawGetString("big_number").(lua.LString); is {
			// sdsmapchars(big_num, "\r\n", "  ", 2), as luaReplyToRedisReply
			w.BigNumber(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(b)))
			return
		}
		if m, is := x.RawGetString("map").(*lua.LTable); is {
			var ks, vs []lua.LValue
			m.ForEach(func(k, v lua.LValue) { ks, vs = append(ks, k), append(vs, v) })
			w.MapLen(len(ks))
			for i := range ks {
				luaToResp(w, ks[i], proto, depth+1)
				luaToResp(w, vs[i], proto, depth+1)
			}
			return
		}
		if m, is := x.RawGetString("set").(*lua.LTable); is {
			var ks []lua.LValue
			m.ForEach(func(k, _ lua.LValue) { ks = append(ks, k) })
			w.SetLen(len(ks))
			for _, k := range ks {
				luaToResp(w, k, proto, depth+1)
			}
			return
		}
		if vt, is := x.RawGetString("verbatim_string").(*lua.LTable); is {
			f, _ := vt.RawGetString("format").(lua.LString)
			t, _ := vt.RawGetString("string").(lua.LString)
			w.Verbatim(string(f), string(t))
			return
		}
		n := 0
		for x.RawGetInt(n+1) != lua.LNil {
			n++
		}
		w.ArrayLen(n)
		for i := 1; i <= n; i++ {
			luaToResp(w, x.RawGetInt(i), proto, depth+1)
		}
	default:
		w.Null()
	}
	return counted
}

// FlatArray reports whether b is one RESP array reply whose elements are
// all bulk strings or integers, or null bulks in RESP2 (where they read
// as false, leaving no hole): LRANGE's, HGETALL's, SMEMBERS', MGET's...,
// which FlatArrayToLua converts without building a resp.Value first.
func FlatArray(b []byte, proto int) bool {
	_, ok := parseFlat[[]byte](nil, b, proto)
	return ok
}

// FlatArrayToLua is respToLua of the array FlatArray accepted in b: the
// table lua_newtable then rawseti build (NewArrayTable's layout), its
// strings slices of b, boxed in one block.
func FlatArrayToLua(L *lua.LState, b string, proto int) lua.LValue {
	v, _ := parseFlat(L, b, proto)
	return v
}

// parseFlat checks b's shape (L nil) or converts it.
func parseFlat[S string | []byte](L *lua.LState, b S, proto int) (lua.LValue, bool) {
	line := func(i int) (int64, int, bool) { // the integer from i up to CRLF, and the index after it
		j := i
		for j < len(b) && b[j] != '\r' {
			j++
		}
		if j+1 >= len(b) || b[j+1] != '\n' {
			return 0, 0, false
		}
		n, ok := redisutil.String2ll(b[i:j])
		return n, j + 2, ok
	}
	if len(b) < 4 || b[0] != '*' {
		return nil, false
	}
	n, i, ok := line(1)
	if !ok || n < 0 || n > int64(len(b)) {
		return nil, false
	}
	var s string
	var vals []lua.LValue
	var strIdx []int32
	var strs []string
	if L != nil {
		s = string(b)
		vals = make([]lua.LValue, n)
		strIdx = make([]int32, 0, n)
		strs = make([]string, 0, n)
	}
	for k := 0; k < int(n); k++ {
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case '$':
			l, j, ok := line(i + 1)
			if !ok {
				return nil, false
			}
			if l == -1 && proto == 2 {
				if L != nil {
					vals[k] = lua.LFalse
				}
				i = j
				continue
			}
			if l < 0 || int64(len(b)-j) < l+2 || b[j+int(l)] != '\r' || b[j+int(l)+1] != '\n' {
				return nil, false
			}
			if L != nil {
				strIdx = append(strIdx, int32(k))
				strs = append(strs, s[j:j+int(l)])
			}
			i = j + int(l) + 2
		case ':':
			v, j, ok := line(i + 1)
			if !ok {
				return nil, false
			}
			if L != nil {
				vals[k] = L.BoxNumber(lua.LNumber(v))
			}
			i = j
		default:
			return nil, false
		}
	}
	if i != len(b) {
		return nil, false
	}
	if L == nil {
		return nil, true
	}
	lua.BoxStrings(vals, strIdx, strs)
	return lua.NewArrayTable(vals), true
}
