package server

// WATCH / UNWATCH: optimistic locking for MULTI/EXEC, as multi.c of Redis
// 7.0.15. A client watches (db, key) pairs; any change to one of them
// (signalModifiedKey: writes, deletions, expiry, FLUSHDB/FLUSHALL, SWAPDB)
// makes its next EXEC fail with a null array. All state is guarded by
// Server.mu.

// watchedKey is one key watched by one client (multi.c's watchedKey).
type watchedKey struct {
	c   *Client
	db  int
	key string
	// expired: the key was already logically expired when WATCH ran, so
	// its deletion by expiry is no change.
	expired bool
}

// clientWatch is a client's WATCH state: its keys and CLIENT_DIRTY_CAS.
type clientWatch struct {
	keys  []*watchedKey
	dirty bool
}

// watchState is the server's index of watched keys (db->watched_keys).
type watchState struct {
	byKey    map[int]map[string][]*watchedKey
	byClient map[*Client]*clientWatch
}

func init() {
	ls := FlagNoScript | FlagLoading | FlagStale | FlagFast | FlagAllowBusy
	register(
		&Command{Name: "watch", Arity: -2, Flags: ls, FirstKey: 1, LastKey: -1, Step: 1, ACL: []string{"fast", "transaction"}, Handler: cmdWatch},
		&Command{Name: "unwatch", Arity: 1, Flags: ls, ACL: []string{"fast", "transaction"}, Handler: cmdUnwatch},
	)
}

func cmdWatch(c *Client, args [][]byte) {
	if c.multi != nil {
		c.w.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	s := c.srv
	w := &s.watch
	if w.byClient == nil {
		w.byClient = map[*Client]*clientWatch{}
		w.byKey = map[int]map[string][]*watchedKey{}
	}
	cw := w.byClient[c]
	if cw == nil {
		cw = &clientWatch{}
		w.byClient[c] = cw
	}
	if cw.dirty { // no point in watching more
		c.w.OK()
		return
	}
	for _, k := range args[1:] {
		key := string(k)
		dup := false
		for _, wk := range cw.keys {
			if wk.db == c.db && wk.key == key {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		wk := &watchedKey{c: c, db: c.db, key: key, expired: s.keyLogicallyExpired(c.db, k)}
		cw.keys = append(cw.keys, wk)
		if w.byKey[c.db] == nil {
			w.byKey[c.db] = map[string][]*watchedKey{}
		}
		w.byKey[c.db][key] = append(w.byKey[c.db][key], wk)
	}
	c.w.OK()
}

func cmdUnwatch(c *Client, args [][]byte) {
	c.srv.unwatchAll(c, true)
	c.w.OK()
}

// keyLogicallyExpired is keyIsExpired: the key exists with an expire time
// in the past (lookups would delete it).
func (s *Server) keyLogicallyExpired(db int, key []byte) bool {
	d := s.ks.DBs[db]
	e := d.Peek(key)
	return e != nil && e.HasExpire() && s.nowMs > d.ExpireAt(e)
}

// unwatchAll is unwatchAllKeys; with clearDirty it also forgets
// CLIENT_DIRTY_CAS (UNWATCH, EXEC, DISCARD, RESET, disconnection).
func (s *Server) unwatchAll(c *Client, clearDirty bool) {
	w := &s.watch
	cw := w.byClient[c]
	if cw == nil {
		return
	}
	for _, wk := range cw.keys {
		list := w.byKey[wk.db][wk.key]
		for i, x := range list {
			if x == wk {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.byKey[wk.db], wk.key)
		} else {
			w.byKey[wk.db][wk.key] = list
		}
	}
	cw.keys = nil
	if clearDirty || !cw.dirty {
		delete(w.byClient, c)
	}
}

// touchWatched is touchWatchedKey (signalModifiedKey): every client
// watching (db, key) gets CLIENT_DIRTY_CAS and stops watching. Without
// watchers it costs a length test.
func (s *Server) touchWatched(db int, key []byte) {
	if s.tracking.keysOrPrefixes() { // client-side caching (tracking.go)
		s.trackingInvalidateKey(s.current, key, true)
	}
	s.touchWatchers(db, key)
}

// touchWatchers is touchWatched without the tracking invalidation (the
// expiry and eviction paths send theirs as by no client).
func (s *Server) touchWatchers(db int, key []byte) {
	if len(s.blocking.keys) != 0 { // clients blocked on keys (blocking.go)
		s.signalKeyAsReady(db, key)
	}
	if len(s.watch.byClient) == 0 {
		return
	}
	list := s.watch.byKey[db][string(key)]
	if len(list) == 0 {
		return
	}
	var dirty []*Client
	for _, wk := range list {
		if wk.expired {
			// Already expired at WATCH time: its deletion is no change.
			if s.ks.DBs[db].Peek(key) == nil {
				wk.expired = false
				continue
			}
		}
		dirty = append(dirty, wk.c)
	}
	for _, c := range dirty {
		s.watch.byClient[c].dirty = true
		s.unwatchAll(c, false)
	}
}

// touch is touchWatched in the client's selected database.
func (c *Client) touch(key []byte) { c.srv.touchWatched(c.db, key) }

// touchAllWatchedInDB is touchAllWatchedKeysInDb, called before db's keys
// are flushed (replacedWith nil) or swapped with replacedWith's.
func (s *Server) touchAllWatchedInDB(db int, replacedWith int) {
	if replacedWith >= 0 && len(s.blocking.keys) != 0 {
		s.signalDBAsReady(db) // SWAPDB: scanDatabaseForReadyKeys
	} else if len(s.blocking.keys) != 0 {
		s.signalDeletedStreams(db) // a flush: scanDatabaseForDeletedStreams
	}
	if len(s.watch.byClient) == 0 || len(s.watch.byKey[db]) == 0 {
		return
	}
	emptied := s.ks.DBs[db]
	var dirty []*Client
	for key, list := range s.watch.byKey[db] {
		k := []byte(key)
		inEmptied := emptied.Peek(k) != nil
		inReplacement, replacementExpired := false, false
		if replacedWith >= 0 {
			if e := s.ks.DBs[replacedWith].Peek(k); e != nil {
				inReplacement = true
				replacementExpired = e.HasExpire() && s.nowMs > s.ks.DBs[replacedWith].ExpireAt(e)
			}
		}
		if !inEmptied && !inReplacement {
			continue
		}
		for _, wk := range list {
			if wk.expired {
				if !inReplacement {
					wk.expired = false // expired key now deleted: no change
					continue
				}
				if replacementExpired {
					continue // expired key remains expired
				}
			} else if !inEmptied && replacementExpired {
				wk.expired = true // a missing key replaced by an expired one
				continue
			}
			dirty = append(dirty, wk.c)
		}
	}
	for _, c := range dirty {
		if cw := s.watch.byClient[c]; cw != nil {
			cw.dirty = true
		}
	}
}

// execWatchFailed reports whether EXEC must fail for c's watched keys
// (CLIENT_DIRTY_CAS, or isWatchedKeyExpired: a watched key that was alive
// at WATCH time has logically expired since).
func (s *Server) execWatchFailed(c *Client) bool {
	cw := s.watch.byClient[c]
	if cw == nil {
		return false
	}
	if cw.dirty {
		return true
	}
	for _, wk := range cw.keys {
		if !wk.expired && s.keyLogicallyExpired(wk.db, []byte(wk.key)) {
			return true
		}
	}
	return false
}
