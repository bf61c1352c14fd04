package keyspace

import "testing"

// SwapWith exchanges every database's keys and TTLs with the other
// keyspace's; the *DB objects (what clients hold) stay in place.
func TestSwapWith(t *testing.T) {
	ks, tmp := New(2), New(2)
	db0, db1 := ks.DBs[0], ks.DBs[1]
	db0.Set([]byte("old"), NewString([]byte("o"), StringAuto), 0)
	tmp.DBs[0].Set([]byte("new"), NewString([]byte("n"), StringAuto), 0)
	tmp.DBs[0].SetExpire([]byte("new"), 5000)
	tmp.DBs[1].Set([]byte("new1"), NewString([]byte("n1"), StringAuto), 0)
	ks.SwapWith(tmp)
	if ks.DBs[0] != db0 || ks.DBs[1] != db1 {
		t.Fatal("the DB objects moved")
	}
	if db0.Peek([]byte("new")) == nil || db0.Peek([]byte("old")) != nil || db1.Peek([]byte("new1")) == nil {
		t.Fatalf("after the swap: db0 %d keys, db1 %d keys", db0.Len(), db1.Len())
	}
	if db0.ExpiresLen() != 1 || db0.ExpireAt(db0.Peek([]byte("new"))) != 5000 {
		t.Fatalf("TTL not swapped: expires %d", db0.ExpiresLen())
	}
	if tmp.DBs[0].Peek([]byte("old")) == nil || tmp.DBs[0].ExpiresLen() != 0 || tmp.Len() != 1 {
		t.Fatalf("the other keyspace holds %d keys", tmp.Len())
	}
}
