package keyspace

import "unsafe"

// Key nodes holding an aggregate's header and the key's bytes.
//
// A key created by SADD, HSET, ZADD or RPUSH was three objects besides the
// value's own buffers: the key node (dict link, Entry and key string, 48
// bytes: a keyStrNode), the key's string (16 for `hash:12345`) and the
// value's header (16 to 64).
// SetNew puts all three in one allocation, rounded to a Go size class: the
// same bytes or fewer, one allocation instead of three, and, what matters
// most for RSS, no small long-lived objects left among the short-lived
// ones a value's growth drops (a key's first intset or listpack buffers
// share the 16- and 32-byte size classes with key strings and headers;
// Go's collector does not move objects, so after a load those spans stay
// half used: 6-14 MB of the 200 k-small-values shapes of
// scripts/rss-after-pipe.sh were such holes).

// valNode is a keyStrNode (its key string pointing into room) followed by
// a value header V and room A for the key's bytes.
type valNode[V, A any] struct {
	keyStrNode
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
// maxEmbedKey. The headers (16, 32 or 64 bytes; the 8-byte Set has
// embedSetFor) after the 48-byte keyStrNode are multiples of 16, so rooms of
// 16k bytes keep the node on a size class up to 256 bytes.
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

// embedSetFor is embedFor for a Set, whose header is 8 bytes: rooms of 16k
// + 8 bytes keep its node on a size class.
func embedSetFor(key []byte, v *Set) (*keyNode, *Set) {
	switch k := len(key); {
	case k <= 24:
		return embedNode[Set, [24]byte](key, v)
	case k <= 40:
		return embedNode[Set, [40]byte](key, v)
	case k <= 56:
		return embedNode[Set, [56]byte](key, v)
	case k <= 72:
		return embedNode[Set, [72]byte](key, v)
	case k <= 104:
		return embedNode[Set, [104]byte](key, v)
	case k <= 136:
		return embedNode[Set, [136]byte](key, v)
	case k <= maxEmbedKey+8:
		return embedNode[Set, [maxEmbedKey + 8]byte](key, v)
	}
	return nil, nil
}

// SetNew is Set of val, a value just made for key (a *Set, *ZSet, *Hash,
// *List or *String that nothing else points to yet): when key is new,
// val's header is copied into the key node with the key's bytes, one
// allocation (a string's bytes too, as SetString and LoadAdd make its
// node, unless it is StringSized). The caller must use the returned value
// from then on, never val (which is returned when key existed, or is too
// long, or val of another type).
func (db *DB) SetNew(key []byte, val Value, now int64) (*Entry, Value) {
	if len(key) <= maxEmbedKey {
		h := hashBytes(key)
		if db.dict.findB(h, key) == nil {
			if s, ok := val.(*String); ok {
				if s.Kind() != StringSized {
					if n, str := newInlineStringNode(key, s.Bytes(), s.Kind()); n != nil {
						return db.insertNode(h, n, str, now), str
					}
				}
			} else if n, nv := embedNew(key, val); n != nil {
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
		if x.ht() == nil {
			if n, nv := newIntsetNode(key, x.isBytes()); n != nil {
				return n, nv
			}
		}
		if n, nv := embedSetFor(key, x); n != nil {
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

// setNode is a keyStrNode, a Set header and room A, which holds an inline
// intset (intset.go) followed by the key's bytes at its end.
type setNode[A any] struct {
	keyStrNode
	v    Set
	room A
}

// minInlineIntset is the least room newIntsetNode leaves an intset: its
// header and 16 bytes of elements (8 of width 2, 4 of width 4), so that a
// set of a few members never moves out. With a key of up to 16 bytes, the
// node is 96 bytes: what the key node (80) and an intset of one or two
// members (16) took apart, 16 bytes less from three members on (80 + 24
// or 32), and no intset buffer to drop as the set grows.
const minInlineIntset = intsetHdr + 16

func newSetNode[A any](key, is []byte) (*keyNode, *Set) {
	n := new(setNode[A])
	b := unsafe.Slice((*byte)(unsafe.Pointer(&n.room)), unsafe.Sizeof(n.room))
	c := len(b) - len(key)
	kb := b[c:]
	copy(kb, key)
	if len(key) > 0 {
		n.key = unsafe.String(&kb[0], len(key)) // never written again
	}
	copy(b, is)
	b[intsetCapByte] = byte(c)
	n.v.p = unsafe.Pointer(&b[0])
	return &n.keyNode, &n.v
}

// setNodeSize is the size of a setNode without room; the rooms fill it up
// to Go's size classes.
const setNodeSize = unsafe.Sizeof(keyStrNode{}) + unsafe.Sizeof(Set{})

// newIntsetNode returns a node holding key and an inline copy of the
// intset is (its bytes in use) with room to grow, or nil when they need
// more than a 256-byte node (the room must fit intsetCapByte's byte).
func newIntsetNode(key, is []byte) (*keyNode, *Set) {
	switch need := len(key) + max(len(is), minInlineIntset); {
	case need <= int(96-setNodeSize):
		return newSetNode[[96 - setNodeSize]byte](key, is)
	case need <= int(112-setNodeSize):
		return newSetNode[[112 - setNodeSize]byte](key, is)
	case need <= int(128-setNodeSize):
		return newSetNode[[128 - setNodeSize]byte](key, is)
	case need <= int(160-setNodeSize):
		return newSetNode[[160 - setNodeSize]byte](key, is)
	case need <= int(192-setNodeSize):
		return newSetNode[[192 - setNodeSize]byte](key, is)
	case need <= int(256-setNodeSize):
		return newSetNode[[256 - setNodeSize]byte](key, is)
	}
	return nil, nil
}
