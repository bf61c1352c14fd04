package keyspace

import "sync/atomic"

// resizeBlocks counts the servers of this process with a background save
// child (Redis's hasActiveChildProcess): while it is not zero, dict.c's
// dict_can_resize is DICT_RESIZE_AVOID (updateDictResizePolicy in the
// parent), else DICT_RESIZE_ENABLE. Like Redis's static flag it is
// process-wide and covers every dict (databases, expires, hashtable sets,
// hashes and sorted sets), so that the snapshot's values are not all
// copied: a table does not grow unless it holds more than
// dictForceResizeRatio times as many elements as it has buckets, does not
// shrink (dictResize), and a rehash under way is not advanced unless one
// table is at least dictForceResizeRatio times the other's size.
var resizeBlocks atomic.Int32

// dictForceResizeRatio is dict_force_resize_ratio.
const dictForceResizeRatio = 5

// DisableResize is dictDisableResize; each call is undone by one
// EnableResize (a process may run several servers).
func DisableResize() { resizeBlocks.Add(1) }

// EnableResize undoes one DisableResize (dictEnableResize).
func EnableResize() { resizeBlocks.Add(-1) }

// canResize is dict_can_resize.
func canResize() bool { return resizeBlocks.Load() <= 0 }

// rehashAllowed is dictRehash's check of dict_can_resize for tables of
// s0 and s1 buckets.
func rehashAllowed(s0, s1 int) bool {
	if canResize() {
		return true
	}
	return !(s1 > s0 && s1/s0 < dictForceResizeRatio || s1 < s0 && s0/s1 < dictForceResizeRatio)
}

// expandAllowed is _dictExpandIfNeeded's condition once used >= size.
func expandAllowed(used, size int) bool {
	return canResize() || used/size > dictForceResizeRatio
}
