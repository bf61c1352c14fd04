package clock

import (
	"testing"
	"time"
)

func TestFake(t *testing.T) {
	start := time.Unix(1000, 0)
	f := NewFake(start)
	var fired []time.Duration
	f.AfterFunc(2*time.Second, func() { fired = append(fired, f.Now().Sub(start)) })
	stop := f.AfterFunc(3*time.Second, func() { t.Fatal("stopped timer fired") })
	tk := f.NewTicker(time.Second)
	if !stop.Stop() {
		t.Fatal("Stop of pending timer returned false")
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case <-tk.C():
	default:
		t.Fatal("ticker did not tick")
	}
	f.Advance(time.Second)
	if len(fired) != 1 || fired[0] != 2*time.Second {
		t.Fatalf("fired = %v", fired)
	}
	if got := f.Now().Sub(start); got != 2500*time.Millisecond {
		t.Fatalf("now = %v", got)
	}
	tk.Stop()
}
