package lua

import (
	"strings"
	"testing"
)

// TestVMFastPathsLikeRedis: the values and errors of the instructions
// gopher-lua's loop runs inline (arithmetic, comparisons, numeric for),
// and the boxed numbers it makes, as redis-server 7.0's Lua 5.1 gives
// them (the replies taken from Debian's redis-server 7.0.15): -0 keeps
// its sign (the allocator's preloaded small numbers are only for +0 to
// 127), NaN compares false, strings go through the slow paths.
func TestVMFastPathsLikeRedis(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"local z=0 local m=-1 return {tostring(z*m), tostring(z/m), tostring(z-0), tostring(m*0), tostring(1/(z*m))}",
			"-0 -0 0 -0 -inf"},
		{"local a,b,c = 2,0.5,1e10 return {tostring(a^53), tostring(a^53+1), tostring(0.1+0.2), tostring(1/3), tostring(c*c*c*1e300), tostring(-(c*c*c*1e300)), tostring(7%-3), tostring(-7%3), tostring(a^b), tostring(10/a), tostring(a*64-1), tostring(a*64)}",
			"9.007199254741e+15 9.007199254741e+15 0.3 0.33333333333333 inf -inf -2 2 1.4142135623731 5 127 128"},
		{"local n=0/0 local one, two = 1, 2 return {tostring(n==n), tostring(n<n), tostring(n<=n), tostring(one<two), tostring(two<=two), tostring(one==1.0), tostring('a'<'b'), tostring('10'+one), tostring(one=='1'), tostring(two<one), tostring(n~=n)}",
			"false false false true true true true 11 false false true"},
		// Lua 5.1's a - floor(a/b)*b, and numbers in concatenations as
		// "%.14g" (tostring's spelling)
		{"local a,b,c,d,e=-4,2,5.3,1.1,-7.5 return {tostring(a%b), tostring(c%d), tostring(e%d), tostring(e%-2), tostring(1e308%3), tostring(a%0), tostring(c%-d), tostring(0.3%0.1), tostring(-0.0%1)}",
			"0 0.9 0.2 -1.5 0 -nan -0.2 0.1 0"},
		{"local a,b=0.1,0.2 local big=2^63 return {(a+b)..'', 1e15 ..'', (2^53)..'', big..'', (-a*0)..'', (1/0)..'', (1/3)..'x', 99999999999999 ..'', 123456789012345 ..'', -7 ..'', 2^31 ..''}",
			"0.3 1e+15 9.007199254741e+15 9.2233720368548e+18 -0 inf 0.33333333333333x 99999999999999 1.2345678901234e+14 -7 2147483648"},
		{"local z=0 local n=z/z return {tostring(n), tostring(-n), n..'', (-n)..'', tostring(math.huge-math.huge), table.concat({n, 1.5, -z}, ',')}",
			"-nan nan -nan nan -nan -nan,1.5,-0"},
		// OP_FORPREP converts string operands as arithmetic does
		{"local s=0 for i=' 2','5','0x1' do s=s+i end local r={} for i=1,'3' do r[#r+1]=type(i) end return {s, type(s), unpack(r)}",
			"14 number number number number"},
		// a multiple assignment evaluates every value before it assigns
		{"local a,b=1,2 a,b=b,a return {a,b}",
			"2 1"},
		{"local a,b=0,1 for i=1,30 do a,b=b,a+b end return {a,b}",
			"832040 1346269"},
		{"local t={} local a=5 t[1],a = a,2 return {t[1], a}",
			"5 2"},
		{"local function f() return 7,8,9 end local a,b,c=1,2,3 a,b,c = c,f() return {a,b,c}",
			"3 7 8"},
		{"local a,b,c=1,2,3 a,b,c = b return {tostring(a),tostring(b),tostring(c)}",
			"2 nil nil"},
		{"local a,b=1,2 a,b = b,a,a+b return {a,b}",
			"2 1"},
		{"local t={1,2} local i=1 t[i],t[i+1] = t[i+1],t[i] return t",
			"2 1"},
		{"local a,b,c = 1,2,3 a,b,c = c,a,b return {a,b,c}",
			"3 1 2"},
		{"local u,v=1,2 local function g() u,v = v,u end g() return {u,v}",
			"2 1"},
		{"local t={a=1,b=2} t.a,t.b = t.b,t.a local a=3 a,t.a = t.a,a return {t.a,t.b,a}",
			"3 1 2"},
		// GETTABLE and SETTABLE on array parts, holes, metamethods
		{"local t={1,2,3,4} local log={} setmetatable(t,{__index=function(t,k) log[#log+1]='i'..k return 0 end, __newindex=function(t,k,v) log[#log+1]='n'..k rawset(t,k,v) end}) t[2]=nil local a=t[2] t[2]=5 t[3]=6 local b=t[3]+t[4] t[1.5]=7 local c=t[0] return {a,b,t[2],table.concat(log,',')}",
			"0 10 5 i2,n2,n1.5,i0"},
		{"local t={} for i=1,10 do t[i]=i end t[10]=nil t[5]=nil local n1=#t t[5]=5 local s=0 for i=1,10 do s=s+(t[i] or 100) end t[1]=nil return {n1, #t, s, tostring(t[1]), tostring(t[2.5])}",
			"9 9 145 nil nil"},
		{"local t={10,20,30} local k=2 t[k]=t[k]+t[k+1] t[k+1]=nil return {t[1],t[2],tostring(t[3]),#t}",
			"10 50 nil 2"},
		{"local s=0 local c=0 for i=10,1,-3 do s=s+i c=c+1 end for i=0,1,0.25 do s=s+i c=c+1 end for i=1,0 do c=c+100 end return {s, c}",
			"24 9"},
		{"local t={} for i=1,3 do local x=i*1000 t[#t+1]=function() return x+i end end return {t[1](), t[2](), t[3]()}",
			"1001 2002 3003"},
		{"local t={} for i=1,200 do t[i]=i end local s=0 for i=1,#t do if t[i] == i then s=s+t[i] end end return s",
			"20100"},
		// the generic for over pairs' and ipairs' iterators (run without
		// a call) and over the iterators called as functions
		{"local t={10,20,nil,40,x=1} local o={} for i,v in ipairs(t) do o[#o+1]=i..'='..v end for k in pairs({5,6}) do o[#o+1]=k end for k,v,x in pairs({7}) do o[#o+1]=tostring(k)..tostring(v)..tostring(x) end local n=0 for k,v in pairs({a=1,b=2,c=3,1,2}) do n=n+v end o[#o+1]=n local t2={a=1,b=2,c=3} for k in pairs(t2) do t2[k]=nil end o[#o+1]=tostring(next(t2)) local f,s,c=ipairs({9}) o[#o+1]=table.concat({f(s,c)},',') o[#o+1]=select('#', f(s,1)) return o",
			"1=10 2=20 1 2 17nil 9 nil 1,9 0"},
		{"local n=0 for k,v in pairs(_G) do n=n+1 end return n>10", "1"},
		// pairs over one table nested, clearing fields while it runs,
		// after a break, rewriting every value
		{"local t={} for i=1,50 do t['k'..i]=i end local s,c=0,0 for k,v in pairs(t) do for k2,v2 in pairs(t) do c=c+1 end s=s+v if v%2==0 then t[k]=nil end end local n=0 for k in pairs(t) do n=n+1 if n==3 then break end end local m=0 for k,v in pairs(t) do m=m+v t[k]=v*2 end local m2=0 for k,v in pairs(t) do m2=m2+v end return {s,c,m,m2}",
			"1275 1938 625 1250"},
		// a for variable in the state's box (its body only computes with
		// it): the metamethods it reaches keep their own copies, the
		// values are each iteration's
		{"local saved={} local o=setmetatable({},{__add=function(a,b) saved[#saved+1]=b return 0 end}) for i=1,3 do local _ = o + i end return saved",
			"1 2 3"},
		{"local seen={} local p=setmetatable({}, {__index=function(t,k) seen[#seen+1]=k return nil end}) for i=1,3 do local _ = p[i] end return seen",
			"1 2 3"},
		// loop accumulators in the state's boxes: their values leave
		// the loop in boxes of their own (after it, nested, with a
		// break, captured by a closure, seen by metamethods)
		{"local x=0 for i=1,10 do x=x+i end local t={x} x = x + 1 return {t[1], x}",
			"55 56"},
		{"local r={} for j=1,3 do local x=0 for i=1,4 do x=x+i*j end r[j]=x end return r",
			"10 20 30"},
		{"local x=0 for i=1,10 do x=x+i if i==4 then break end end local t={x} for i=1,3 do x=x+1 end return {t[1], x}",
			"10 13"},
		{"local x=0 local saved={} local function keep() saved[#saved+1]=x end local p=setmetatable({}, {__index=function(t,k) keep() end}) for i=1,3 do x=x+i local _=p[i] end return saved",
			"1 3 6"},
		{"local saved={} local o=setmetatable({},{__add=function(a,b) saved[#saved+1]=b return 0 end}) local x=0 for i=1,3 do x=x+i local _=o+x end return saved",
			"1 3 6"},
		{"local a,b=0,1 for i=1,30 do local t=a+b a=b b=t end local s=0 for i=1,5 do local y=i*i s=s+y end local u=0 for i=1,5 do u=u-i*0.5 u=u*2 end return {a, b, s, tostring(u)}",
			"832040 1346269 55 -57"},
		{"local s=0 local c={} for i=1,3 do for j=i,4,2 do s=s+i*j end c[#c+1]=i end for k=5,1,-2 do if k>2 then s=s+k end end local t={1,2,3} local u=0 for i=1,3 do u=u+t[i]*i end return {s, u, #c}",
			"33 14 3"},
	} {
		if got := flat(eval(t, New(&fakeHost{}), c.body, nil, nil)); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.body, got, c.want)
		}
	}
	for _, c := range []struct{ body, want string }{
		{"local x = nil return x + 1", "-ERR user_script:1: attempt to perform arithmetic on local 'x' (a nil value)"},
		{"local t = {} return t < 1", "-ERR user_script:1: attempt to compare table with number"},
		{"local one = 1 return one < 'x'", "-ERR user_script:1: attempt to compare number with string"},
		{"local f=ipairs({}) return f({1}, 'x')", "-ERR user_script:1: bad argument #2 to 'f' (number expected, got string)"},
		{"for i=1,'x' do end", "-ERR user_script:1: 'for' limit must be a number"},
		{"for i='y',2 do end", "-ERR user_script:1: 'for' initial value must be a number"},
		{"for i=1,2,'z' do end", "-ERR user_script:1: 'for' step must be a number"},
		{"for i=1,{} do end", "-ERR user_script:1: 'for' limit must be a number"},
		{"for k,v in ipairs(nil) do end", "-ERR user_script:1: bad argument #1 to 'ipairs' (table expected, got nil)"},
	} {
		if got := eval(t, New(&fakeHost{}), c.body, nil, nil); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got %q, want %q...", c.body, got, c.want)
		}
	}
}

// flat is a reply's values, space separated (a test's shorthand).
func flat(reply string) string {
	var out []string
	bulk := false
	for _, l := range strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n") {
		if bulk {
			out, bulk = append(out, l), false
			continue
		}
		switch l[0] {
		case '*':
		case '$':
			bulk = true
		default:
			out = append(out, l[1:])
		}
	}
	return strings.Join(out, " ")
}
