package netshell

import (
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

func TestBatch(t *testing.T) {
	rd := resp.NewReader(strings.NewReader("a 1\r\nb\r\nc\r\n*1\r\n$x\r\n"), resp.Limits{})
	if err := rd.Fill(); err != nil {
		t.Fatal(err)
	}
	var ran []string
	step := func(argv [][]byte) Step {
		ran = append(ran, string(argv[0]))
		if string(argv[0]) == "b" {
			return Pause
		}
		return Continue
	}
	if st, err := Batch(rd, step); st != Pause || err != nil || strings.Join(ran, " ") != "a b" {
		t.Fatalf("first batch: %v %v ran %q", st, err, ran)
	}
	// The rest stayed buffered; the protocol error closes.
	if st, err := Batch(rd, step); st != Close || err == nil || strings.Join(ran, " ") != "a b c" {
		t.Fatalf("second batch: %v %v ran %q", st, err, ran)
	}
}

type loopConn struct {
	reads   []error
	batches int
	failed  []error
}

func (l *loopConn) BeforeRead() {}
func (l *loopConn) Fill() error {
	err := l.reads[0]
	l.reads = l.reads[1:]
	return err
}
func (l *loopConn) RunBatch() bool { l.batches++; return l.batches < 3 }
func (l *loopConn) ReadFailed(err error) bool {
	l.failed = append(l.failed, err)
	return err == errAgain
}

type loopErr string

func (e loopErr) Error() string { return string(e) }

const errAgain = loopErr("again")

func TestLoop(t *testing.T) {
	l := &loopConn{reads: []error{nil, errAgain, nil, nil}}
	Loop(l)
	if l.batches != 3 || len(l.failed) != 1 || len(l.reads) != 0 {
		t.Fatalf("batches %d failed %v reads left %d", l.batches, l.failed, len(l.reads))
	}
	l = &loopConn{reads: []error{nil, loopErr("eof")}}
	Loop(l)
	if l.batches != 1 || len(l.failed) != 1 {
		t.Fatalf("a read error closes: batches %d failed %v", l.batches, l.failed)
	}
}
