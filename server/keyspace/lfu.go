package keyspace

import "math/rand/v2"

// LFUInitVal is LFU_INIT_VAL: the counter of a new key, so it is not evicted
// before it has a chance to be accessed.
const LFUInitVal = 5

// LFULogIncr is evict.c's LFULogIncr: increment the logarithmic counter with
// probability 1/((counter-LFUInitVal)*logFactor+1); 255 saturates.
func LFULogIncr(counter uint8, logFactor int, rng *rand.Rand) uint8 {
	if counter == 255 {
		return 255
	}
	base := float64(counter) - LFUInitVal
	if base < 0 {
		base = 0
	}
	if rng.Float64() < 1.0/(base*float64(logFactor)+1) {
		counter++
	}
	return counter
}

// LFUDecay is evict.c's LFUDecrAndReturn: e.Freq decremented by one for
// every decayTime minutes (counted on a minute clock, as LFUTimeElapsed)
// since e.LastAccess, floored at 0. It does not modify e. OBJECT FREQ
// replies with this value. decayTime <= 0 disables decay.
//
// Redis keeps the decrement time in 16 bits of minutes, which wraps after
// about 45 days; this uses the full LastAccess.
//
// For a key last written under LRU it is Redis's reading of the LRU clock
// as LFU data: the low 8 bits the counter, the high 16 the minutes.
func (e *Entry) LFUDecay(now int64, decayTime int) uint8 {
	if e.flags&lfuFlag == 0 {
		lru := e.LRUField()
		ldt, counter := int64(lru>>8), int64(lru&255)
		if decayTime <= 0 {
			return uint8(counter)
		}
		// LFUTimeElapsed on 16 bits of minutes.
		mins := now / 60000 & 0xffff
		elapsed := mins - ldt
		if mins < ldt {
			elapsed = 65535 - ldt + mins
		}
		return uint8(max(0, counter-elapsed/int64(decayTime)))
	}
	if decayTime <= 0 {
		return e.Freq
	}
	elapsed := now/60000 - int64(e.lastAccess)/60
	if elapsed <= 0 {
		return e.Freq
	}
	periods := elapsed / int64(decayTime)
	if periods >= int64(e.Freq) {
		return 0
	}
	return e.Freq - uint8(periods)
}
