package replication

import "math/rand"

// IDLen is CONFIG_RUN_ID_SIZE: a replication ID is 40 lowercase hex chars.
const IDLen = 40

// NoID is replid2 when unset (clearReplicationId2 fills it with '0').
const NoID = "0000000000000000000000000000000000000000"

// IDs are a node's replication IDs (server.replid, server.replid2,
// server.second_replid_offset). ID2 is the ID this node's history had before
// the current one, valid for PSYNC up to and including offset SecondOffset
// (-1 when unset).
type IDs struct {
	ID           string
	ID2          string
	SecondOffset int64
}

// NewIDs is a fresh node's IDs: a random ID and no ID2 (initServer:
// changeReplicationId + clearReplicationId2).
func NewIDs(rnd *rand.Rand) IDs {
	return IDs{ID: NewID(rnd), ID2: NoID, SecondOffset: -1}
}

// NewID is getRandomHexChars(CONFIG_RUN_ID_SIZE): 40 lowercase hex chars
// drawn from rnd (a seeded *rand.Rand in tests, a crypto-seeded one in the
// server).
func NewID(rnd *rand.Rand) string {
	const hex = "0123456789abcdef"
	var b [IDLen]byte
	for i := range b {
		b[i] = hex[rnd.Intn(16)]
	}
	return string(b[:])
}

// Change is changeReplicationId: a new random ID, ID2 untouched.
func (ids *IDs) Change(rnd *rand.Rand) { ids.ID = NewID(rnd) }

// ClearID2 is clearReplicationId2: ID2 all zeros, SecondOffset -1.
func (ids *IDs) ClearID2() { ids.ID2, ids.SecondOffset = NoID, -1 }

// Shift is shiftReplicationId, run on promotion (REPLICAOF NO ONE): the
// current ID becomes ID2, valid up to masterReplOffset+1 (the replica asks
// for the first byte it lacks, so a sibling that has our whole history asks
// for exactly masterReplOffset+1), and a new random ID is drawn.
func (ids *IDs) Shift(masterReplOffset int64, rnd *rand.Rand) {
	ids.ID2 = ids.ID
	ids.SecondOffset = masterReplOffset + 1
	ids.Change(rnd)
}

// Reset is what a new history does to the IDs: when a master creates its
// backlog from scratch (first replica, no backlog) or frees it after
// repl-backlog-ttl, Redis runs changeReplicationId + clearReplicationId2.
func (ids *IDs) Reset(rnd *rand.Rand) {
	ids.Change(rnd)
	ids.ClearID2()
}

// AdoptFullSync is the end of a replica's full sync (readSyncBulkPayload):
// the ID becomes the +FULLRESYNC ID and ID2 is cleared.
func (ids *IDs) AdoptFullSync(masterID string) {
	ids.ID = masterID
	ids.ClearID2()
}

// AdoptContinue is slaveTryPartialResynchronization's "+CONTINUE <new id>"
// with an ID different from the cached master's: the cached master's ID
// becomes ID2 up to masterReplOffset+1 and newID becomes the ID. (The caller
// also updates its cached master's ID and disconnects its sub-replicas.)
func (ids *IDs) AdoptContinue(newID, cachedID string, masterReplOffset int64) {
	ids.ID2 = cachedID
	ids.SecondOffset = masterReplOffset + 1
	ids.ID = newID
}

// ValidID reports whether s looks like a replication ID: 40 hex chars.
func ValidID(s string) bool {
	if len(s) != IDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
