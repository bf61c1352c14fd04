package lua

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/vigil-kv/vigil/internal/resp"
)

// The Lua debugger (Redis 7.0's eval.c ldb* functions, translated; Redis
// is BSD licensed): a session runs one EVAL with a line hook that stops
// the script and talks to the debugging client directly on its
// connection, as Redis does from luaLdbLineHook. The server starts and
// ends the session (StartDebug, EndDebug) and blocks meanwhile.

const (
	ldbMaxLenDefault  = 256 // LDB_MAX_LEN_DEFAULT
	ldbBreakpointsMax = 64  // LDB_BREAKPOINTS_MAX
	ldbMaxValuesDepth = 10  // LDB_MAX_VALUES_DEPTH (LUA_MINSTACK/2)
)

type ldbState struct {
	conn     io.ReadWriter
	src      []string
	bp       []int
	step     bool
	luabp    bool
	maxlen   int
	hintSent bool
	current  int
	logs     []string
	cbuf     []byte
	// The timeout stop (luaLdbLineHook's COUNT event): limit is
	// busy-reply-threshold (5 s when 0), start when the script started
	// or last stopped, on the server's clock now.
	limit time.Duration
	now   func() time.Time
	start time.Time
}

// ldbCountEvery is the instruction count between the hook's COUNT
// events (lua_sethook's count in evalGenericCommandWithDebugging).
const ldbCountEvery = 100000

// StartDebug starts a debugging session for the next RunScript
// (ldbEnable + ldbStartSession): conn is the debugging client's
// connection, body the script as EVAL got it; a script that runs limit
// (on the clock now) without stopping stops with "timeout reached".
func (e *Engine) StartDebug(conn io.ReadWriter, body []byte, limit time.Duration, now func() time.Time) {
	src := string(body)
	src = strings.TrimRight(src, "\r\n")
	d := &ldbState{conn: conn, step: true, maxlen: ldbMaxLenDefault, limit: limit, now: now, start: now()}
	if src != "" {
		d.src = strings.Split(src, "\n")
	}
	e.ldb = d
	e.L.SetLineHook(e.ldbHook, ldbCountEvery)
}

// Debugging reports whether a session is active.
func (e *Engine) Debugging() bool { return e.ldb != nil }

// EndDebug ends the session (ldbEndSession): the logs left and the
// <endsession> mark are sent; the caller then sends the script's reply
// and closes the connection.
func (e *Engine) EndDebug() {
	d := e.ldb
	if d == nil {
		return
	}
	d.log("<endsession>")
	d.send()
	e.L.SetLineHook(nil, 0)
	e.ldb = nil
}

func (d *ldbState) log(s string) { d.logs = append(d.logs, s) }

// logMax is ldbLogWithMaxLen.
func (d *ldbState) logMax(s string) {
	trimmed := false
	if d.maxlen > 0 && len(s) > d.maxlen {
		s = s[:d.maxlen] + " ..."
		trimmed = true
	}
	d.log(s)
	if trimmed && !d.hintSent {
		d.hintSent = true
		d.log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.")
	}
}

// send is ldbSendLogs: the logs as an array of status replies, their
// newlines made spaces.
func (d *ldbState) send() {
	var b []byte
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(d.logs)), 10)
	b = append(b, "\r\n"...)
	for _, l := range d.logs {
		b = append(b, '+')
		b = append(b, strings.Map(func(r rune) rune {
			if r == '\r' || r == '\n' {
				return ' '
			}
			return r
		}, l)...)
		b = append(b, "\r\n"...)
	}
	d.logs = d.logs[:0]
	d.conn.Write(b) // an error shows at the next read, as in Redis
}

func (d *ldbState) line(n int) string {
	if n < 1 || n > len(d.src) {
		return "<out of range source code line>"
	}
	return d.src[n-1]
}

func (d *ldbState) isBP(n int) bool {
	for _, l := range d.bp {
		if l == n {
			return true
		}
	}
	return false
}

func (d *ldbState) logSourceLine(n int) {
	cur, bp := d.current == n, d.isBP(n)
	prefix := "   "
	switch {
	case cur && bp:
		prefix = "->#"
	case cur:
		prefix = "-> "
	case bp:
		prefix = "  #"
	}
	d.log(fmt.Sprintf("%s%-3d %s", prefix, n, d.line(n)))
}

func (d *ldbState) list(around, ctx int) {
	for j := 1; j <= len(d.src); j++ {
		if around != 0 && abs(around-j) > ctx {
			continue
		}
		d.logSourceLine(j)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ldbHook is luaLdbLineHook, for the LINE and the COUNT events.
func (e *Engine) ldbHook(L *lua.LState, line int, count bool) {
	d := e.ldb
	if d == nil {
		return
	}
	d.current = line
	bp := d.isBP(line) || d.luabp
	dbg, ok := L.GetStack(0)
	if !ok {
		return
	}
	if src, _ := L.FrameLine(dbg); !strings.Contains(src, "user_script") {
		return
	}
	// The COUNT event stops a script that ran too long: an infinite
	// loop?
	timeout := false
	if count && !d.step && !bp {
		if d.now().Sub(d.start) < d.limit {
			return
		}
		timeout, d.step = true, true
	}
	if !d.step && !bp {
		return
	}
	reason := "step over"
	if bp {
		reason = "break point"
		if d.luabp {
			reason = "redis.breakpoint() called"
		}
	} else if timeout {
		reason = "timeout reached, infinite loop?"
	}
	d.step, d.luabp = false, false
	d.log(fmt.Sprintf("* Stopped at %d, stop reason = %s", line, reason))
	d.logSourceLine(line)
	d.send()
	if !e.ldbRepl(L) && timeout {
		// The client closed the connection during a timeout stop: the
		// script is killed, else the server would stay blocked.
		e.ldbRaise(L, "timeout during Lua debugging with client closing connection")
	}
	d.start = d.now()
}

// parse is ldbReplParseCommand: a command from cbuf, or nil to read
// more; perr is a protocol error.
func (d *ldbState) parse() (argv []string, perr bool) {
	if len(d.cbuf) == 0 {
		return nil, false
	}
	p := d.cbuf
	i := bytes.IndexByte(p, '*')
	if i < 0 {
		return nil, true
	}
	p = p[i+1:]
	j := bytes.Index(p, []byte("\r\n"))
	if j < 0 {
		return nil, false
	}
	argc := atoi(p[:j])
	p = p[j+2:]
	if argc <= 0 || argc > 1024 {
		return nil, true
	}
	for len(argv) < argc {
		if len(p) == 0 {
			return nil, false
		}
		if p[0] != '$' {
			return nil, true
		}
		j := bytes.Index(p, []byte("\r\n"))
		if j < 0 {
			return nil, false
		}
		n := atoi(p[1:j])
		p = p[j+2:]
		if n <= 0 || n > 1024 {
			return nil, true
		}
		if len(p) < n+2 {
			return nil, false
		}
		argv = append(argv, string(p[:n]))
		if p[n] != '\r' || p[n+1] != '\n' {
			return nil, true
		}
		p = p[n+2:]
	}
	return argv, false
}

// atoi is C's atoi: leading digits, 0 when none.
func atoi(b []byte) int {
	s := strings.TrimLeft(string(b), " \t")
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
		if n > 1<<31 {
			break
		}
	}
	if neg {
		return -n
	}
	return n
}

var ldbHelp = []string{
	"Redis Lua debugger help:",
	"[h]elp               Show this help.",
	"[s]tep               Run current line and stop again.",
	"[n]ext               Alias for step.",
	"[c]ontinue           Run till next breakpoint.",
	"[l]ist               List source code around current line.",
	"[l]ist [line]        List source code around [line].",
	"                     line = 0 means: current position.",
	"[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
	"                     to show before/after [line].",
	"[w]hole              List all source code. Alias for 'list 1 1000000'.",
	"[p]rint              Show all the local variables.",
	"[p]rint <var>        Show the value of the specified variable.",
	"                     Can also show global vars KEYS and ARGV.",
	"[b]reak              Show all breakpoints.",
	"[b]reak <line>       Add a breakpoint to the specified line.",
	"[b]reak -<line>      Remove breakpoint from the specified line.",
	"[b]reak 0            Remove all breakpoints.",
	"[t]race              Show a backtrace.",
	"[e]val <code>        Execute some Lua code (in a different callframe).",
	"[r]edis <cmd>        Execute a Redis command.",
	"[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
	"                     Specifying zero as <len> means unlimited.",
	"[a]bort              Stop the execution of the script. In sync",
	"                     mode dataset changes will be retained.",
	"",
	"Debugger functions you can call from Lua scripts:",
	"redis.debug()        Produce logs in the debugger console.",
	"redis.breakpoint()   Stop execution like if there was a breakpoint in the",
	"                     next line of code.",
}

// ldbRepl reads and runs debugger commands until one resumes the script;
// false: the client is gone (its read failed), the script runs on
// without stopping.
func (e *Engine) ldbRepl(L *lua.LState) bool {
	d := e.ldb
	for {
		var argv []string
		for {
			var perr bool
			argv, perr = d.parse()
			if argv != nil {
				break
			}
			if perr {
				e.ldbRaise(L, "protocol error")
			}
			buf := make([]byte, 1024)
			n, err := d.conn.Read(buf)
			if n <= 0 || err != nil && n == 0 {
				// The client is gone: the script runs on without input.
				d.step = false
				d.bp = nil
				return false
			}
			d.cbuf = append(d.cbuf, buf[:n]...)
			if len(d.cbuf) > 1<<20 {
				d.cbuf = nil
				e.ldbRaise(L, "max client buffer reached")
			}
		}
		d.cbuf = d.cbuf[:0]
		switch strings.ToLower(argv[0]) {
		case "h", "help":
			for _, l := range ldbHelp {
				d.log(l)
			}
			d.send()
		case "s", "step", "n", "next":
			d.step = true
			return true
		case "c", "continue":
			return true
		case "t", "trace":
			e.ldbTrace(L)
			d.send()
		case "m", "maxlen":
			if len(argv) == 2 {
				v := atoi([]byte(argv[1]))
				d.hintSent = true
				if v != 0 && v <= 60 {
					v = 60
				}
				d.maxlen = v
			}
			if d.maxlen != 0 {
				d.log(fmt.Sprintf("<value> replies are truncated at %d bytes.", d.maxlen))
			} else {
				d.log("<value> replies are unlimited.")
			}
			d.send()
		case "b", "break":
			d.breakCmd(argv)
			d.send()
		case "e", "eval":
			e.ldbEval(L, argv)
			d.send()
		case "a", "abort":
			e.ldbRaise(L, "script aborted for user request")
		case "p", "print":
			if len(argv) == 2 {
				e.ldbPrint(L, argv[1])
			} else {
				e.ldbPrintAll(L)
			}
			d.send()
		case "l", "list":
			around, ctx := d.current, 5
			if len(argv) > 1 {
				if n := atoi([]byte(argv[1])); n > 0 {
					around = n
				}
			}
			if len(argv) > 2 {
				ctx = atoi([]byte(argv[2]))
			}
			d.list(around, ctx)
			d.send()
		case "w", "whole":
			d.list(1, 1000000)
			d.send()
		default:
			if len(argv) > 1 && (strings.EqualFold(argv[0], "r") || strings.EqualFold(argv[0], "redis")) {
				e.ldbRedis(L, argv)
				d.send()
				continue
			}
			d.log("<error> Unknown Redis Lua debugger command or wrong number of arguments.")
			d.send()
		}
	}
}

// ldbRaise raises msg (lua_error: no position in the text) from the
// hook, the error handler citing the line the script stopped at.
func (e *Engine) ldbRaise(L *lua.LState, msg string) {
	if dbg, ok := L.GetStack(0); ok {
		if src, line := L.FrameLine(dbg); line > 0 {
			e.errSource, e.errLine = src, line
		}
	}
	L.Error(lua.LString(msg), 0)
}

func (d *ldbState) breakCmd(argv []string) {
	if len(argv) == 1 {
		if len(d.bp) == 0 {
			d.log("No breakpoints set. Use 'b <line>' to add one.")
			return
		}
		d.log(fmt.Sprintf("%d breakpoints set:", len(d.bp)))
		for _, l := range d.bp {
			d.logSourceLine(l)
		}
		return
	}
	for _, arg := range argv[1:] {
		line, err := strconv.ParseInt(arg, 10, 64) // string2l
		if err != nil || (len(arg) > 1 && arg[0] == '0') || arg == "-0" || strings.HasPrefix(arg, "+") {
			d.log(fmt.Sprintf("Invalid argument:'%s'", arg))
			continue
		}
		switch {
		case line == 0:
			d.bp = d.bp[:0]
			d.log("All breakpoints removed.")
		case line > 0:
			if len(d.bp) == ldbBreakpointsMax {
				d.log("Too many breakpoints set.")
			} else if line <= int64(len(d.src)) && !d.isBP(int(line)) {
				d.bp = append(d.bp, int(line))
				d.list(int(line), 1)
			} else {
				d.log("Wrong line number.")
			}
		default:
			removed := false
			for i, l := range d.bp {
				if int64(l) == -line {
					d.bp = append(d.bp[:i], d.bp[i+1:]...)
					removed = true
					break
				}
			}
			if removed {
				d.log("Breakpoint removed.")
			} else {
				d.log("No breakpoint in the specified line.")
			}
		}
	}
}

// ldbEval compiles the code as an expression ("return " prepended), else
// as a statement, and logs what it returns.
func (e *Engine) ldbEval(L *lua.LState, argv []string) {
	d := e.ldb
	code := strings.Join(argv[1:], " ")
	fn, msg := loadLua(L, "return "+code, "ldb_eval")
	if msg != "" {
		fn, msg = loadLua(L, code, "ldb_eval")
		if msg != "" {
			d.log("<error> " + msg)
			return
		}
	}
	fn.Env = e.env
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		text := err.Error()
		if ae, ok := err.(*lua.ApiError); ok {
			text = e.errText(ae.Object)
		}
		d.log("<error> " + text)
		return
	}
	v := L.Get(-1)
	L.Pop(1)
	d.logMax("<retval> " + e.catValue(v, 0))
}

// errText is an error value's text for the debugger's <error> lines.
func (e *Engine) errText(v lua.LValue) string {
	if t, ok := v.(*lua.LTable); ok {
		if s, ok := t.RawGetString("err").(lua.LString); ok {
			return string(s)
		}
	}
	return v.String()
}

// ldbRedis runs redis.call with the arguments, logging the command and
// its reply.
func (e *Engine) ldbRedis(L *lua.LState, argv []string) {
	d := e.ldb
	L.Push(L.NewFunction(func(L *lua.LState) int { return e.redisCall(L, true) }))
	for _, a := range argv[1:] {
		L.Push(lua.LString(a))
	}
	d.step = true
	err := L.PCall(len(argv)-1, 1, nil)
	d.step = false
	if err == nil { // an error leaves nothing on the stack
		L.Pop(1)
	}
}

// ldbPrint prints the first local named name from the innermost frame
// outwards, else the global KEYS or ARGV.
func (e *Engine) ldbPrint(L *lua.LState, name string) {
	d := e.ldb
	for level := 0; level < 1000; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		for i := 1; ; i++ {
			n, v := L.LocalAt(dbg, i)
			if n == "" {
				break
			}
			if n == name {
				d.logMax("<value> " + e.catValue(v, 0))
				return
			}
		}
	}
	if name == "ARGV" || name == "KEYS" {
		d.logMax("<value> " + e.catValue(e.globals.RawGetString(name), 0))
		return
	}
	d.log("No such variable.")
}

func (e *Engine) ldbPrintAll(L *lua.LState) {
	d := e.ldb
	vars := 0
	if dbg, ok := L.GetStack(0); ok {
		for i := 1; ; i++ {
			n, v := L.LocalAt(dbg, i)
			if n == "" {
				break
			}
			if strings.Contains(n, "(*temporary)") {
				continue
			}
			d.logMax(fmt.Sprintf("<value> %s = ", n) + e.catValue(v, 0))
			vars++
		}
	}
	if vars == 0 {
		d.log("No local variables in the current context.")
	}
}

// frameName is Lua 5.1's getfuncname as lua_getinfo's "n" gives it: the
// name the calling instruction used for the function at level, "" when
// the frame was tail called or its caller is not Lua code.
func frameName(L *lua.LState, level int) string {
	f, ok := stackFrame(L, level)
	if !ok || f.tailCall > 0 {
		return ""
	}
	caller, ok := viewFrame(f.parent)
	if !ok || caller.fn.IsG || caller.fn.Proto == nil || caller.pc < 0 || caller.pc >= len(caller.fn.Proto.Code) {
		return ""
	}
	i := caller.fn.Proto.Code[caller.pc]
	switch opcode(i) {
	case lua.OP_CALL, lua.OP_TAILCALL, lua.OP_TFORLOOP:
		if kind, name := objName(caller, caller.pc, argA(i)); kind != "" {
			return name
		}
	}
	return ""
}

// ldbTrace logs the script's frames from the current one out, each named
// as Lua 5.1 names it ("top level" when it has no name).
func (e *Engine) ldbTrace(L *lua.LState) {
	d := e.ldb
	level := 0
	for ; level < 1000; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		src, line := L.FrameLine(dbg)
		if !strings.Contains(src, "user_script") {
			continue
		}
		where := "From"
		if level == 0 {
			where = "In"
		}
		name := frameName(L, level)
		if name == "" {
			name = "top level"
		}
		d.log(where + " " + name + ":")
		d.logSourceLine(line)
	}
	if level == 0 {
		d.log("<error> Can't retrieve Lua stack.")
	}
}

// catValue is ldbCatStackValueRec.
func (e *Engine) catValue(v lua.LValue, level int) string {
	if level == ldbMaxValuesDepth {
		return "<max recursion level reached! Nested table?>"
	}
	level++
	switch x := v.(type) {
	case lua.LString:
		return repr(string(x))
	case lua.LBool:
		if x {
			return "true"
		}
		return "false"
	case lua.LNumber:
		return cfmtG(float64(x))
	case *lua.LNilType:
		return "nil"
	case *lua.LTable:
		if r, ok := e.real[x]; ok {
			x = r
		}
		var r1, r2 []string
		isArray, expected := true, 1
		for k, val := x.Next(lua.LNil); k != lua.LNil; k, val = x.Next(k) {
			if n, ok := k.(lua.LNumber); isArray && (!ok || float64(n) != float64(expected)) {
				isArray = false
			}
			r1 = append(r1, e.catValue(val, level))
			r2 = append(r2, "["+e.catValue(k, level)+"]="+e.catValue(val, level))
			expected++
		}
		if isArray {
			return "{" + strings.Join(r1, "; ") + "}"
		}
		return "{" + strings.Join(r2, "; ") + "}"
	case *lua.LFunction:
		return fmt.Sprintf("\"function@%p\"", x)
	case *lua.LUserData:
		return fmt.Sprintf("\"userdata@%p\"", x)
	case *lua.LState:
		return fmt.Sprintf("\"thread@%p\"", x)
	}
	return "\"<unknown-lua-type>\""
}

// cfmtG is C's printf("%g").
func cfmtG(f float64) string { return formatG(f, 6) }

// repr is sdscatrepr.
func repr(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString("\\n")
		case '\r':
			b.WriteString("\\r")
		case '\t':
			b.WriteString("\\t")
		case '\a':
			b.WriteString("\\a")
		case '\b':
			b.WriteString("\\b")
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "\\x%02x", c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ldbLogCall logs a redis.call about to run, while stepping.
func (e *Engine) ldbLogCall(args [][]byte) {
	d := e.ldb
	if d == nil || !d.step {
		return
	}
	var b strings.Builder
	b.WriteString("<redis>")
	for j, a := range args {
		if j == 10 {
			fmt.Fprintf(&b, " ... (%d more)", len(args)-j-1)
			break
		}
		b.WriteByte(' ')
		b.Write(a)
	}
	d.log(b.String())
}

// ldbLogError logs an error of redis.call (luaPushErrorBuff's log).
func (e *Engine) ldbLogError(msg string) {
	if d := e.ldb; d != nil && d.step {
		d.log("<error> " + msg)
	}
}

// ldbErrBuffer is the err_buffer luaPushErrorBuff logs for msg, a
// refusal of the host's checks (scriptCall's): Redis's own messages
// there carry no code (msg's "ERR " is the error table's), while the
// shared replies it copies (-READONLY, -NOREPLICAS, -OOM, -MISCONF) keep
// their "-" and CRLF, which the log's line shows as two spaces.
func ldbErrBuffer(msg string) string {
	if m, ok := strings.CutPrefix(msg, "ERR "); ok {
		return m
	}
	return "-" + msg + "\r\n"
}

// ldbLogReply is ldbLogRedisReply.
func (e *Engine) ldbLogReply(v resp.Value) {
	if d := e.ldb; d != nil && d.step {
		d.logMax("<reply> " + human(v, e.resp))
	}
}

// human is ldbRedisProtocolToHuman.
func human(v resp.Value, proto int) string {
	switch v.Kind {
	case resp.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case resp.KindBulk, resp.KindVerbatim:
		return repr(v.Str)
	case resp.KindSimple:
		return repr("+" + v.Str)
	case resp.KindError:
		return repr("-" + v.Str)
	case resp.KindNull:
		if proto == 3 {
			return "(null)"
		}
		return "NULL"
	case resp.KindArray, resp.KindSet:
		parts := make([]string, len(v.Elems))
		for i, el := range v.Elems {
			parts[i] = human(el, proto)
		}
		if v.Kind == resp.KindSet {
			return "~(" + strings.Join(parts, ",") + ")"
		}
		return "[" + strings.Join(parts, ",") + "]"
	case resp.KindMap:
		var parts []string
		for i := 0; i+1 < len(v.Elems); i += 2 {
			parts = append(parts, human(v.Elems[i], proto)+" => "+human(v.Elems[i+1], proto))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case resp.KindBool:
		if v.Int != 0 {
			return "#true"
		}
		return "#false"
	case resp.KindDouble:
		return "(double) " + v.Str
	}
	return ""
}
