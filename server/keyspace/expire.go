package keyspace

import "math/rand/v2"

// Active expiry constants, as Redis 7.0's expire.c (at active-expire-effort
// 1 they are used unscaled).
const (
	// ActiveExpireKeysPerLoop is ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP: keys
	// sampled per iteration (plus a quarter of it per effort step above 1).
	ActiveExpireKeysPerLoop = 20
	// ActiveExpireSlowTimePerc is ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC: the
	// percentage of each 1/hz period a slow cycle may use (plus 2 per
	// effort step).
	ActiveExpireSlowTimePerc = 25
	// ActiveExpireAcceptableStale is ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE:
	// a database is sampled again while more than this percentage of the
	// last sample was expired (minus 1 per effort step).
	ActiveExpireAcceptableStale = 10
	// cronDBsPerCall is CRON_DBS_PER_CALL.
	cronDBsPerCall = 16
)

// ActiveExpireResult reports one ActiveExpireCycle call.
type ActiveExpireResult struct {
	Expired        int   // keys deleted
	Sampled        int   // keys with a TTL examined
	TimeCapReached bool  // the time budget ran out (expired_time_cap_reached_count was incremented)
	ElapsedMicros  int64 // elapsed() at the end of the cycle
}

// SlowCycleBudget is the time limit in microseconds expire.c computes for a
// slow cycle: (ActiveExpireSlowTimePerc + 2*(effort-1)) percent of one
// serverCron period of 1/hz seconds, at least 1. effort < 1 means 1.
func SlowCycleBudget(hz, effort int) int64 {
	if hz < 1 {
		hz = 1
	}
	effort = clampEffort(effort) - 1
	b := int64(ActiveExpireSlowTimePerc+2*effort) * 1000000 / int64(hz) / 100
	return max(b, 1)
}

func clampEffort(e int) int {
	if e < 1 {
		return 1
	}
	if e > 10 {
		return 10
	}
	return e
}

// ActiveExpireCycle is expire.c's activeExpireCycle(ACTIVE_EXPIRE_CYCLE_SLOW)
// as of Redis 7.0, run from the server's cron with the execution lock held.
//
// It visits up to 16 databases (all of them if the previous call ran out of
// time), resuming after the database where the previous call stopped (the
// current_db static). In each it walks the expires table from a saved
// cursor (db->expires_cursor), bucket by bucket, until it has examined
// ActiveExpireKeysPerLoop keys (or 20 times as many buckets), deleting the
// keys expired at now (reported like lazy expiry: Stats.ExpiredKeys and
// OnExpire). It repeats on the same database while more than
// ActiveExpireAcceptableStale percent of the sample was expired. A database
// whose expires table is less than 1% full is skipped until it is resized.
// The sampled TTLs update the database's AvgTTL estimate.
//
// elapsed reports the microseconds used since the caller's start; as in
// Redis it is checked every 16 iterations, and once it exceeds budgetMicros
// the cycle stops and Stats.ExpiredTimeCapReachedCount is incremented. At
// the end Stats.ExpiredStalePerc and Stats.ExpireCycleMicros are updated.
//
// With effort e = ActiveExpireEffort in 1..10, keys per loop are 20+5*(e-1)
// and the acceptable stale percentage 10-(e-1), as Redis; the time budget is
// the caller's (see SlowCycleBudget). rng is unused: Redis 7.0 samples with
// the cursor rather than at random; it is kept so the caller's code does
// not change if sampling does. In Replica mode the cycle does nothing.
func (ks *Keyspace) ActiveExpireCycle(now int64, rng *rand.Rand, budgetMicros int64, elapsed func() int64) ActiveExpireResult {
	_ = rng
	var res ActiveExpireResult
	if ks.Replica || len(ks.DBs) == 0 {
		return res
	}
	effort := clampEffort(ks.ActiveExpireEffort) - 1
	keysPerLoop := ActiveExpireKeysPerLoop + ActiveExpireKeysPerLoop/4*effort
	acceptableStale := ActiveExpireAcceptableStale - effort
	if budgetMicros <= 0 {
		budgetMicros = 1
	}

	dbsPerCall := cronDBsPerCall
	if dbsPerCall > len(ks.DBs) || ks.timelimitExit {
		dbsPerCall = len(ks.DBs)
	}
	ks.timelimitExit = false

	iteration := 0
	for j := 0; j < dbsPerCall && !ks.timelimitExit; j++ {
		db := ks.DBs[ks.currentDB%len(ks.DBs)]
		// Advance now, so running out of time here resumes at the next.
		ks.currentDB = (ks.currentDB + 1) % len(ks.DBs)
		for {
			iteration++
			expired, sampled, stop := db.activeExpireLoop(now, keysPerLoop)
			res.Expired += expired
			res.Sampled += sampled
			if stop {
				break
			}
			if iteration&0xf == 0 && elapsed() > budgetMicros {
				ks.timelimitExit = true
				ks.Stats.ExpiredTimeCapReachedCount++
				res.TimeCapReached = true
				break
			}
			if sampled != 0 && expired*100/sampled <= acceptableStale {
				break
			}
		}
	}

	res.ElapsedMicros = elapsed()
	ks.Stats.ExpireCycleMicros += res.ElapsedMicros
	current := 0.0
	if res.Sampled > 0 {
		current = float64(res.Expired) / float64(res.Sampled)
	}
	ks.Stats.ExpiredStalePerc = current*0.05 + ks.Stats.ExpiredStalePerc*0.95
	return res
}

// activeExpireLoop is one iteration of activeExpireCycle's inner loop on db.
// stop reports that the database has nothing (worth) sampling now.
func (db *DB) activeExpireLoop(now int64, keysPerLoop int) (expired, sampled int, stop bool) {
	ex := &db.expires
	num := ex.Len()
	if num == 0 {
		db.avgTTL = 0
		return 0, 0, true
	}
	// Less than 1% of the buckets used: sampling is too expensive. Redis
	// waits for serverCron's tryResizeHashTables and incrementallyRehash;
	// a bounded share of that work is done here, so expiry does not stall
	// on a server whose cron does not call DB.ResizeIfNeeded and Rehash.
	if slots := ex.Buckets(); slots > dictInitialSize && num*100/slots < 1 {
		if !ex.IsRehashing() {
			ex.Shrink()
		}
		if ex.pauseRehash == 0 {
			ex.Rehash(100)
		}
		if slots = ex.Buckets(); slots > dictInitialSize && num*100/slots < 1 {
			return 0, 0, true
		}
	}
	num = min(num, keysPerLoop)
	maxBuckets := num * 20
	checked := 0
	var ttlSum int64
	ttlSamples := 0

	for sampled < num && checked < maxBuckets {
		for t := 0; t < 2; t++ {
			if t == 1 && !ex.IsRehashing() {
				break
			}
			tbl := ex.ht[t]
			if len(tbl) == 0 {
				continue
			}
			checked++
			// Keep the chain in place while its keys are deleted, then
			// do the rehash steps the deletes skipped (Redis's
			// dictDelete does one each).
			ex.pauseRehash++
			before := expired
			for x := tbl[db.expiresCursor&uint64(len(tbl)-1)]; x != nil; {
				next := x.next
				if at := expEnt(x).at; at != 0 {
					ttl := at - now
					if now > at {
						key := expEnt(x).node.key()
						h := hashString(key)
						if de := db.dict.findS(h, key); de != nil {
							db.expire(h, de)
						} else {
							ex.remove(h, x) // cannot happen: index out of sync
						}
						expired++
					}
					if ttl > 0 {
						ttlSum += ttl
						ttlSamples++
					}
					sampled++
				}
				x = next
			}
			ex.pauseRehash--
			for i := before; i < expired && ex.IsRehashing(); i++ {
				ex.rehashStep()
			}
		}
		db.expiresCursor++
	}

	if ttlSamples > 0 {
		avg := ttlSum / int64(ttlSamples)
		// Running average: 2% weight to the new sample, as Redis.
		if db.avgTTL == 0 {
			db.avgTTL = avg
		}
		db.avgTTL = db.avgTTL/50*49 + avg/50
	}
	return expired, sampled, false
}

// RememberReplicaKeyWithExpire is expire.c's rememberSlaveKeyWithExpire,
// called by setExpire on a writable replica (replica-read-only no) when a
// client other than the master gives key a TTL in database db: the master
// never sends a DEL for such a key, so ExpireReplicaKeys deletes it when it
// expires. Databases above 63 are not tracked, as in Redis.
func (ks *Keyspace) RememberReplicaKeyWithExpire(db int, key []byte) {
	if db < 0 || db > 63 {
		return
	}
	if ks.replicaExpires == nil {
		ks.replicaExpires = map[string]uint64{}
	}
	ks.replicaExpires[string(key)] |= 1 << uint(db)
}

// ReplicaKeysWithExpire is getSlaveKeyWithExpireCount: the number of keys
// remembered by RememberReplicaKeyWithExpire (INFO's
// slave_expires_tracked_keys).
func (ks *Keyspace) ReplicaKeysWithExpire() int { return len(ks.replicaExpires) }

// FlushReplicaKeysWithExpire is flushSlaveKeysWithExpireList: the
// remembered keys are forgotten (FLUSHALL, a new dataset from a master).
func (ks *Keyspace) FlushReplicaKeysWithExpire() { ks.replicaExpires = nil }

// ExpireReplicaKeys is expire.c's expireSlaveKeys, run by the cron of a
// replica instead of ActiveExpireCycle: it visits the remembered keys (in
// the map's random order, as dictGetRandomKey), deletes those expired at
// now in each database of their bitmap (reported as any expiry:
// Stats.ExpiredKeys and OnExpire), forgets the keys that no longer have a
// TTL there, and stops once more than 3 keys could not be expired or, every
// 64 keys, once more than 1 ms (elapsedMicros) was spent. It ignores
// Replica mode: these keys are the replica's own.
func (ks *Keyspace) ExpireReplicaKeys(now int64, elapsedMicros func() int64) (expired int) {
	if len(ks.replicaExpires) == 0 {
		return 0
	}
	cycles, noexpire := 0, 0
	for key, dbids := range ks.replicaExpires {
		var keep uint64
		h := hashString(key)
		for id := 0; dbids != 0 && id < len(ks.DBs); id, dbids = id+1, dbids>>1 {
			if dbids&1 == 0 {
				continue
			}
			db := ks.DBs[id]
			de := db.dict.findS(h, key)
			if de == nil || nodeEntry(de).flags&expireFlag == 0 {
				continue
			}
			if db.expired(h, de, nodeEntry(de), now) {
				db.expire(h, de)
				expired++
				continue
			}
			noexpire++
			keep |= 1 << uint(id)
		}
		if keep != 0 {
			ks.replicaExpires[key] = keep
		} else {
			delete(ks.replicaExpires, key)
		}
		cycles++
		if noexpire > 3 || (cycles%64 == 0 && elapsedMicros() > 1000) || len(ks.replicaExpires) == 0 {
			break
		}
	}
	return expired
}
