package keyspace

import (
	"bytes"
	"strings"
	"testing"
)

func TestTypeAndEncodingNames(t *testing.T) {
	types := map[Type]string{TypeString: "string", TypeList: "list", TypeSet: "set", TypeZSet: "zset",
		TypeHash: "hash", TypeStream: "stream", 5: "unknown"}
	for ty, want := range types {
		if ty.String() != want {
			t.Errorf("Type(%d) = %q, want %q", ty, ty.String(), want)
		}
	}
	encs := map[Encoding]string{EncodingRaw: "raw", EncodingInt: "int", EncodingHashtable: "hashtable",
		EncodingIntset: "intset", EncodingSkiplist: "skiplist", EncodingEmbstr: "embstr",
		EncodingQuicklist: "quicklist", EncodingStream: "stream", EncodingListpack: "listpack", 3: "unknown"}
	for e, want := range encs {
		if e.String() != want {
			t.Errorf("Encoding(%d) = %q, want %q", e, e.String(), want)
		}
	}
}

func TestString2ll(t *testing.T) {
	for _, tc := range []struct {
		in string
		n  int64
		ok bool
	}{
		{"0", 0, true}, {"12", 12, true}, {"-12", -12, true},
		{"9223372036854775807", 1<<63 - 1, true}, {"-9223372036854775808", -1 << 63, true},
		{"9223372036854775808", 0, false}, {"-0", 0, false}, {"012", 0, false}, {"-", 0, false},
		{"", 0, false}, {"+1", 0, false}, {" 1", 0, false}, {"1a", 0, false}, {"00", 0, false},
		{"123456789012345678901", 0, false},
	} {
		n, ok := string2ll([]byte(tc.in))
		if n != tc.n || ok != tc.ok {
			t.Errorf("string2ll(%q) = %d, %v; want %d, %v", tc.in, n, ok, tc.n, tc.ok)
		}
	}
}

// TestStringEncoding: OBJECT ENCODING of a string follows how it was made.
func TestStringEncoding(t *testing.T) {
	long := strings.Repeat("a", 45)
	for _, tc := range []struct {
		val  string
		kind StringKind
		want Encoding
	}{
		{"12", StringAuto, EncodingInt},
		{"012", StringAuto, EncodingEmbstr},
		{strings.Repeat("a", 44), StringAuto, EncodingEmbstr},
		{long, StringAuto, EncodingRaw},
		{"12", StringRaw, EncodingRaw},
		{"12", StringEmbstr, EncodingEmbstr},
		{long, StringEmbstr, EncodingRaw},
		{"7", StringIntUnshared, EncodingInt},
	} {
		s := NewString([]byte(tc.val), tc.kind)
		if got := s.Encoding(); got != tc.want {
			t.Errorf("%.10q kind %d: %v, want %v", tc.val, tc.kind, got, tc.want)
		}
		if s.Type() != TypeString {
			t.Fatal("not a string")
		}
	}
}

// TestStringDup: a copy of its own (dupStringObject): an integer becomes
// unshared, other kinds stay, the bytes are not aliased.
func TestStringDup(t *testing.T) {
	for _, tc := range []struct {
		val  string
		kind StringKind
		want StringKind
	}{
		{"12", StringAuto, StringIntUnshared},
		{"abc", StringAuto, StringAuto},
		{"12", StringRaw, StringRaw},
		{"12", StringEmbstr, StringEmbstr},
	} {
		s := NewString([]byte(tc.val), tc.kind)
		d := s.Dup().(*String)
		if d.Kind() != tc.want || string(d.Bytes()) != tc.val || d.Encoding() != s.Encoding() {
			t.Errorf("Dup of %q kind %d: %q kind %d", tc.val, tc.kind, d.Bytes(), d.Kind())
		}
		d.Bytes()[0] = 'X'
		if string(s.Bytes()) != tc.val {
			t.Error("Dup aliases the bytes")
		}
	}
}

// TestInlineStrings: newStringCopy keeps small strings' bytes after their
// 8-byte header, with the size class's slack as spare capacity; Set takes
// an array within them and refuses a new one; external gives a header of
// its own on the same bytes.
func TestInlineStrings(t *testing.T) {
	for n := 0; n <= 300; n++ {
		b := bytes.Repeat([]byte{'x'}, n)
		s := newStringCopy(b, StringEmbstr)
		if !bytes.Equal(s.Bytes(), b) || s.Kind() != StringEmbstr || s.inline() != (n <= 248) {
			t.Fatalf("len %d: %q kind %v inline %v", n, s.Bytes(), s.Kind(), s.inline())
		}
		if d := s.Dup().(*String); !bytes.Equal(d.Bytes(), b) {
			t.Fatalf("len %d: Dup %q", n, d.Bytes())
		}
	}
	s := newStringCopy([]byte("ab"), StringAuto)
	s.Set(append(s.Bytes(), 'c'), StringRaw)
	if string(s.Bytes()) != "abc" || !s.inline() || s.Kind() != StringRaw {
		t.Fatalf("append within the spare: %q inline %v kind %v", s.Bytes(), s.inline(), s.Kind())
	}
	x := s.external()
	if x.inline() || &x.Bytes()[0] != &s.Bytes()[0] || x.Kind() != StringRaw {
		t.Fatal("external does not share the bytes")
	}
	x.Set([]byte("new array"), StringRaw)
	if string(x.Bytes()) != "new array" || string(s.Bytes()) != "abc" {
		t.Fatalf("external Set: %q, inline %q", x.Bytes(), s.Bytes())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Set of a new array on an inline string did not panic")
		}
	}()
	s.Set([]byte("elsewhere"), StringRaw)
}

// TestOverwriteString: the same length overwrites in place without an
// allocation, another length replaces the value; a loaded string gets an
// inline node whose key the expires index shares.
func TestOverwriteString(t *testing.T) {
	db := NewDB()
	e := db.SetString([]byte("k"), []byte("v1"), StringAuto, 1, false)
	if n := testing.AllocsPerRun(100, func() { db.OverwriteString([]byte("k"), e, []byte("v2"), StringAuto) }); n != 0 {
		t.Errorf("same-length overwrite: %v allocations", n)
	}
	db.OverwriteString([]byte("k"), e, []byte("longer value"), StringAuto)
	if got := db.Peek([]byte("k")); got != e || str(e) != "longer value" {
		t.Fatalf("got %q", str(e))
	}
	le, ok := db.LoadAdd([]byte("loaded"), NewString([]byte("12345"), StringAuto), 500, 1)
	if !ok || !le.Value().(*String).inline() || str(le) != "12345" || db.ExpireAt(le) != 500 {
		t.Fatalf("LoadAdd: ok %v %q expire %d", ok, str(le), db.ExpireAt(le))
	}
	if err := db.Keyspace().Check(); err != nil {
		t.Fatal(err)
	}
}
