package keyspace

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// checkFixtureDB builds a database with one value of every type and encoding and
// a TTL, which Check must accept.
func checkFixtureDB(t *testing.T) *DB {
	t.Helper()
	db := NewDB()
	cfg := db.ks.Encodings
	l := NewList(cfg.ListMaxListpackSize)
	l.PushBack([]byte("a"))
	l.PushBack([]byte("b"))
	db.Set([]byte("list"), l, 0)
	is := NewIntSet()
	is.Add([]byte("3"), cfg.SetMaxIntsetEntries)
	is.Add([]byte("70000"), cfg.SetMaxIntsetEntries)
	db.Set([]byte("intset"), is, 0)
	hs := NewSetFor([]byte("x"))
	hs.Add([]byte("x"), cfg.SetMaxIntsetEntries)
	db.Set([]byte("hset"), hs, 0)
	zl := NewZSet(true)
	zl.Set("m", 1)
	zl.Set("n", 2)
	db.Set([]byte("zlp"), zl, 0)
	zs := NewZSet(false)
	for i := 0; i < 300; i++ {
		zs.Set("m"+strconv.Itoa(i), float64(i%7))
	}
	db.Set([]byte("zsl"), zs, 0)
	h := NewHash()
	h.Set([]byte("f"), "v", cfg)
	db.Set([]byte("hash"), h, 0)
	hh := NewHash()
	hh.Set([]byte("f"), strings.Repeat("v", 100), cfg)
	db.Set([]byte("hashht"), hh, 0)
	db.Set([]byte("str"), NewString([]byte("v"), StringAuto), 0)
	db.SetExpire([]byte("str"), 1e15)
	if err := db.Check(); err != nil {
		t.Fatalf("a consistent database fails the check: %v", err)
	}
	return db
}

func TestCheckAcceptsEveryType(t *testing.T) {
	db := checkFixtureDB(t)
	ks := New(3)
	ks.DBs[1] = db
	db.id, db.ks = 1, ks
	if err := ks.Check(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFindsViolations breaks one invariant at a time.
func TestCheckFindsViolations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		breakIt func(db *DB)
		want    string
	}{
		{"empty list", func(db *DB) { l := db.Peek([]byte("list")).Value().(*List); l.PopFront(); l.PopFront() }, "empty list"},
		{"empty set", func(db *DB) { db.Peek([]byte("intset")).Value().(*Set).p = unsafe.Pointer(newIntsetBuf(2, 0)) }, "empty set"},
		{"intset order", func(db *DB) {
			db.Peek([]byte("intset")).Value().(*Set).p = unsafe.Pointer(newIntsetFromInts([]int64{5, 1}, 2))
		}, "not ascending"},
		{"intset too big", func(db *DB) { db.ks.Encodings.SetMaxIntsetEntries = 1 }, "set-max-intset-entries"},
		{"zset map", func(db *DB) { sl := db.Peek([]byte("zsl")).Value().(*ZSet).sl(); sl.dict.del(sl.dict.getS("m5")) }, "member map"},
		{"zset span", func(db *DB) {
			sl := db.Peek([]byte("zsl")).Value().(*ZSet).sl()
			sl.zsl.header.lv(sl.zsl.level-1).span++
		}, "span"},
		{"zset listpack value", func(db *DB) { db.ks.Encodings.ZSetMaxListpackValue = 0 }, "zset-max-listpack-value"},
		{"hash listpack value", func(db *DB) { db.ks.Encodings.HashMaxListpackValue = 0 }, "hash-max-listpack-value"},
		{"empty hash", func(db *DB) { db.Peek([]byte("hash")).Value().(*Hash).Delete([]byte("f")) }, "empty hash"},
		{"expire without index", func(db *DB) { db.Peek([]byte("list")).flags |= expireFlag }, "expires index"},
		{"index without key", func(db *DB) {
			db.expires.insert(hashString("ghost"), &(&expireEntry{node: newKeyStrNode("ghost"), at: 1}).dictEntry)
		}, "not a key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := checkFixtureDB(t)
			tc.breakIt(db)
			err := db.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an error about %q", err, tc.want)
			}
		})
	}
}
