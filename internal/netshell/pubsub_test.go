package netshell

import (
	"sort"
	"testing"
)

type sub struct{ own [3]map[string]struct{} }

func TestHub(t *testing.T) {
	h := NewHub[*sub]()
	a, b := &sub{}, &sub{}
	if !h.Subscribe(Channel, a, &a.own[Channel], "news") || h.Subscribe(Channel, a, &a.own[Channel], "news") {
		t.Fatal("Subscribe reports a new subscription once")
	}
	h.Subscribe(Pattern, a, &a.own[Pattern], "n*")
	h.Subscribe(Pattern, b, &b.own[Pattern], "")
	h.Subscribe(Shard, b, &b.own[Shard], "news")
	var got []string
	n := h.Publish([]byte("news"), func(s *sub, pat string, isPat bool) {
		who := "a"
		if s == b {
			who = "b"
		}
		if isPat {
			who += " " + pat
		}
		got = append(got, who)
	})
	sort.Strings(got)
	if n != 2 || len(got) != 2 || got[0] != "a" || got[1] != "a n*" {
		t.Fatalf("Publish(news) = %d %q", n, got)
	}
	got = got[:0]
	if n := h.Publish([]byte(""), func(s *sub, pat string, isPat bool) {
		if s != b || !isPat || pat != "" {
			t.Errorf("the empty pattern: %v %q %v", s == b, pat, isPat)
		}
	}); n != 1 {
		t.Fatalf("the empty pattern matches the empty channel: %d", n)
	}
	if h.Count(Channel) != 1 || h.Count(Pattern) != 2 || h.Count(Shard) != 1 {
		t.Fatalf("counts %d %d %d", h.Count(Channel), h.Count(Pattern), h.Count(Shard))
	}
	if !h.Unsubscribe(Channel, a, a.own[Channel], "news") || h.Unsubscribe(Channel, a, a.own[Channel], "news") {
		t.Fatal("Unsubscribe reports a removal once")
	}
	h.UnsubscribeAll(Pattern, a, a.own[Pattern])
	h.UnsubscribeAll(Pattern, b, b.own[Pattern])
	h.UnsubscribeAll(Shard, b, b.own[Shard])
	if h.Count(Channel)+h.Count(Pattern)+h.Count(Shard) != 0 {
		t.Fatal("names left after every unsubscription")
	}
	if s := Sorted(map[string]struct{}{"b": {}, "a": {}}); len(s) != 2 || s[0] != "a" {
		t.Fatalf("Sorted %q", s)
	}
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		proto int
		pat   string
		isPat bool
		want  string
	}{
		{2, "", false, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"},
		{3, "", false, ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\nm\r\n"},
		{2, "c*", true, "*4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$1\r\nm\r\n"},
		{3, "", true, ">4\r\n$8\r\npmessage\r\n$0\r\n\r\n$2\r\nch\r\n$1\r\nm\r\n"},
	} {
		if got := string(Message(tc.proto, tc.pat, tc.isPat, []byte("ch"), []byte("m"))); got != tc.want {
			t.Errorf("Message(%d, %q, %v) = %q, want %q", tc.proto, tc.pat, tc.isPat, got, tc.want)
		}
	}
}
