package sentinel

import (
	"math/rand"
	"strings"
	"testing"
)

const (
	idA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	idB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	idC = "cccccccccccccccccccccccccccccccccccccccc"
	t0  = int64(1_700_000_000_000)
)

// newCore returns a core with id idA monitoring "mymaster" at
// 127.0.0.1:6379, quorum 2, down-after 5000.
func newCore(t *testing.T) *Core {
	t.Helper()
	c := New(Options{Port: 26379}, rand.New(rand.NewSource(1)))
	cfg := NewConfig()
	cfg.MyID = idA
	cfg.Masters = []MasterConfig{{Name: "mymaster", IP: "127.0.0.1", Port: 6379, Quorum: 2, DownAfter: 5000, FailoverTimeout: 60000}}
	acts := c.Step(t0, ConfigLoaded{Config: cfg})
	if r, ok := last(acts).(Reply); !ok || r.Kind != ReplyOK {
		t.Fatalf("config load: %#v", acts)
	}
	return c
}

func last(acts []Action) Action {
	if len(acts) == 0 {
		return nil
	}
	return acts[len(acts)-1]
}

func notifies(acts []Action) []string {
	var out []string
	for _, a := range acts {
		if n, ok := a.(Notify); ok {
			out = append(out, n.Type+" "+n.Message)
		}
	}
	return out
}

func hasNotify(acts []Action, prefix string) bool {
	for _, n := range notifies(acts) {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

func find[T Action](acts []Action) (T, bool) {
	for _, a := range acts {
		if v, ok := a.(T); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func count[T Action](acts []Action) int {
	n := 0
	for _, a := range acts {
		if _, ok := a.(T); ok {
			n++
		}
	}
	return n
}

func hello(ip string, port int, id string, epoch uint64, mip string, mport int, cfgEpoch uint64) string {
	return Hello{ip, port, id, epoch, "mymaster", mip, mport, cfgEpoch}.String()
}
