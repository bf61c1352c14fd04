package server

import (
	"strconv"
	"strings"
	"testing"
)

// TestScriptPropagatesArgvAmongReads: a script's writes propagate their
// own arguments at the unit's end although the engine reused the memory
// of every read's argv in between (the reads' arguments are longer, so a
// reuse of the writes' memory would overwrite them).
func TestScriptPropagatesArgvAmongReads(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	rec := &Recorder{}
	ts.s.AddPropagator(rec)
	body := `for i = 1, 3000 do
		redis.call('GET', string.rep('r', 64) .. i)
		if i % 500 == 0 then redis.call('SET', 'w' .. i, 'v' .. i * 3) end
	end
	redis.call('INCRBYFLOAT', 'f', 0.5)
	return redis.call('GET', 'w3000')`
	if got := ts.do(c, "EVAL", body, "0"); got != "$5\r\nv9000\r\n" {
		t.Fatalf("EVAL: %q", got)
	}
	want := []string{`["SELECT" "0"]`, `["MULTI"]`}
	for i := 500; i <= 3000; i += 500 {
		want = append(want, `["SET" "w`+strconv.Itoa(i)+`" "v`+strconv.Itoa(i*3)+`"]`)
	}
	want = append(want, `["SET" "f" "0.5" "KEEPTTL"]`, `["EXEC"]`)
	if got := fmtCmds(parseAOF(t, rec.Bytes())); got != strings.Join(want, " ") {
		t.Fatalf("propagated %s\nwant %s", got, strings.Join(want, " "))
	}
}
