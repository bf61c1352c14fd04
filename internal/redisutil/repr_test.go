package redisutil

import "testing"

func TestQuote(t *testing.T) {
	if got := string(AppendRepr([]byte("x "), []byte("a\x00"))); got != `x "a\x00"` {
		t.Errorf("AppendRepr = %s", got)
	}
	tests := []struct{ in, want string }{
		{"", `""`},
		{"dump.rdb", `"dump.rdb"`},
		{`a "b" \c`, `"a \"b\" \\c"`},
		{"\n\r\t\a\b", `"\n\r\t\a\b"`},
		{"\x00\x01\x7f\xff", `"\x00\x01\x7f\xff"`},
		{"{title} {listen-addr}", `"{title} {listen-addr}"`},
	}
	for _, tt := range tests {
		if got := Quote(tt.in); got != tt.want {
			t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if back, err := SplitArgs(Quote(tt.in)); err != nil || len(back) != 1 || back[0] != tt.in {
			t.Errorf("SplitArgs(Quote(%q)) = %q, %v", tt.in, back, err)
		}
	}
}
