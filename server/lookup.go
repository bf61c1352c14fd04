package server

import (
	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/server/keyspace"
)

// Key lookups (db.c lookupKey*) and the typed lookups of the data-type
// handlers (lookupKeyReadOrReply plus checkType).

// lookupKeyRead is lookupKeyRead: expires the key if due, updates the access
// time and counts a keyspace hit or miss.
func (c *Client) lookupKeyRead(key []byte) *keyspace.Entry {
	e := c.selectedDB().Lookup(key, c.srv.nowMs)
	c.countLookup(e)
	if e == nil {
		c.notify(configs.NotifyKeyMiss, "keymiss", key)
	}
	return e
}

// lookupKeyReadNoTouch is lookupKeyReadWithFlags(LOOKUP_NOTOUCH): counted,
// but the access time is left alone (EXISTS, TYPE, TTL, OBJECT).
func (c *Client) lookupKeyReadNoTouch(key []byte) *keyspace.Entry {
	e := c.selectedDB().LookupNoTouch(key, c.srv.nowMs)
	c.countLookup(e)
	if e == nil {
		c.notify(configs.NotifyKeyMiss, "keymiss", key)
	}
	return e
}

// lookupKeyWrite is lookupKeyWrite: like a read but not counted in the
// keyspace hit/miss statistics.
func (c *Client) lookupKeyWrite(key []byte) *keyspace.Entry {
	return c.selectedDB().Lookup(key, c.srv.nowMs)
}

func (c *Client) countLookup(e *keyspace.Entry) {
	if e == nil {
		c.srv.stats.keyspaceMisses++
	} else {
		c.srv.stats.keyspaceHits++
	}
}

// lookupRead is lookupKeyRead plus checkType: the T at key. A missing key
// gives the zero T (a nil pointer) and ok; a key holding another type
// replies WRONGTYPE and gives !ok.
func lookupRead[T keyspace.Value](c *Client, key []byte) (v T, ok bool) {
	return valueAs[T](c, c.lookupKeyRead(key))
}

// lookupWrite is lookupKeyWrite plus checkType: the T at key and its entry
// (for DB.Mutable and DB.InPlace). A missing key gives the zero T, a nil
// entry and ok; a key holding another type replies WRONGTYPE and gives
// !ok.
func lookupWrite[T keyspace.Value](c *Client, key []byte) (v T, e *keyspace.Entry, ok bool) {
	e = c.lookupKeyWrite(key)
	v, ok = valueAs[T](c, e)
	return v, e, ok
}

// valueAs is checkType on an entry already looked up: e's value as a T.
// A nil e gives the zero T and ok; a value of another type replies
// WRONGTYPE and gives !ok.
func valueAs[T keyspace.Value](c *Client, e *keyspace.Entry) (v T, ok bool) {
	if e == nil {
		return v, true
	}
	if v, ok = e.Value().(T); !ok {
		c.w.Error(ErrWrongType)
	}
	return v, ok
}
