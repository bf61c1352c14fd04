package keyspace

import "unsafe"

// Key nodes holding an aggregate's header and the key's bytes.
//
// A key created by SADD, HSET, ZADD or RPUSH was three objects besides the
// value's own buffers: the key node (dict link and Entry, 48 bytes), the
// key's string (16 for `hash:12345`) and the value's header (16 to 64).
// SetNew puts all three in one allocation, rounded to a Go size class: the
// same bytes or fewer, one allocation instead of three, and, what matters
// most for RSS, no small long-lived objects left among the short-lived
// ones a value's growth drops (a key's first intset or listpack buffers
// share the 16- and 32-byte size classes with key strings and headers;
// Go's collector does not move objects, so after a load those spans stay
// half used: 6-14 MB of the 200 k-small-values shapes of
// scripts/rss-after-pipe.sh were such holes).

// valNode is a keyNode followed by a value header V and room A for the
// key's bytes.
type valNode[V, A any] struct {
	keyNode
	v    V
	room A
}

// maxEmbedKey is the longest key SetNew puts in the node.
const maxEmbedKey = 192

func embedNode[V, A any](key []byte, v *V) (*keyNode, *V) {
	n := new(valNode[V, A])
	n.v = *v
	b := unsafe.Slice((*byte)(unsafe.Pointer(&n.room)), unsafe.Sizeof(n.room))
	copy(b, key)
	if len(key) > 0 {
		n.key = unsafe.String(&b[0], len(key)) // never written again
	}
	return &n.keyNode, &n.v
}

// embedFor returns a node holding a copy of *v and room for key (the node's
// key set to its copy of key), or nil when key is longer than
// maxEmbedKey. The headers (16, 32 or 64 bytes) after the 48-byte keyNode
// are multiples of 16, so rooms of 16k bytes keep the node on a size class
// up to 256 bytes.
func embedFor[V any](key []byte, v *V) (*keyNode, *V) {
	switch k := len(key); {
	case k <= 16:
		return embedNode[V, [16]byte](key, v)
	case k <= 32:
		return embedNode[V, [32]byte](key, v)
	case k <= 48:
		return embedNode[V, [48]byte](key, v)
	case k <= 64:
		return embedNode[V, [64]byte](key, v)
	case k <= 96:
		return embedNode[V, [96]byte](key, v)
	case k <= 128:
		return embedNode[V, [128]byte](key, v)
	case k <= maxEmbedKey:
		return embedNode[V, [maxEmbedKey]byte](key, v)
	}
	return nil, nil
}

// SetNew is Set of val, a value just made for key (a *Set, *ZSet, *Hash or
// *List that nothing else points to yet): when key is new, val's header is
// copied into the key node with the key's bytes, one allocation. The
// caller must use the returned value from then on, never val (which is
// returned when key existed, or is too long, or val of another type).
func (db *DB) SetNew(key []byte, val Value, now int64) (*Entry, Value) {
	if len(key) <= maxEmbedKey {
		h := hashBytes(key)
		if db.dict.findB(h, key) == nil {
			if n, nv := embedNew(key, val); n != nil {
				return db.insertNode(h, n, nv, now), nv
			}
		}
	}
	return db.set(key, val, now, false), val
}

// embedNew is the node SetNew makes for a new key: one holding key and a
// copy of val's header, with the value that copy is; nil when key is
// longer than maxEmbedKey or val is not a *Set, *ZSet, *Hash or *List.
func embedNew(key []byte, val Value) (*keyNode, Value) {
	switch x := val.(type) {
	case *Set:
		if n, nv := embedFor(key, x); n != nil {
			return n, nv
		}
	case *ZSet:
		if n, nv := embedFor(key, x); n != nil {
			return n, nv
		}
	case *Hash:
		if n, nv := embedFor(key, x); n != nil {
			return n, nv
		}
	case *List:
		if n, nv := embedFor(key, x); n != nil {
			return n, nv
		}
	}
	return nil, nil
}
