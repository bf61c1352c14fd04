package replication

import (
	"strconv"
	"strings"
)

// The empty-restart guard (issue 23; redis/redis#2087): a master that
// restarts without its data sooner than the sentinels' down-after answers
// the replicas' PSYNC with a FULLRESYNC under a new replication ID and an
// empty RDB, and every replica would flush its dataset to load it. A
// replica with the guard on (replica-refuse-empty-sync yes) refuses that
// payload instead: it keeps its data, does not load or ACK, reports the
// refusal in INFO replication (master_sync_refused_empty:1) and retries
// the link later, so that the sentinels, which read the field, can promote
// it.
//
// What counts as the master the replica "already followed": the link to
// this host:port (made by one REPLICAOF or replicaof directive) completed a
// sync (full or partial) before. A new REPLICAOF naming another master
// makes a new link that has followed nothing, so its first sync loads
// whatever that master holds: that is the explicit operator action. A
// REPLICAOF naming the master whose payload is being refused (which would
// otherwise answer "+OK Already connected") clears the guard for that link:
// the next full sync loads even an empty dataset.

// EmptySyncInput is what the replica knows when a full-sync payload has
// been received and before anything of its own data is discarded.
type EmptySyncInput struct {
	// Enabled is replica-refuse-empty-sync.
	Enabled bool
	// Followed: this link completed a sync with this master before.
	Followed bool
	// Overridden: an operator's REPLICAOF naming this master cleared the
	// guard after a refusal.
	Overridden bool
	// LocalKeys is the number of keys this replica holds (all databases).
	LocalKeys int64
	// PayloadEmpty: the master's RDB has no key in any database.
	PayloadEmpty bool
	// MasterFresh: the master's RDB says its history began at its start
	// with no data (vigil-server's aux field vigil-fresh-start): a master
	// that restarted without its files and took writes since.
	MasterFresh bool
	// MasterReplID is the ID of +FULLRESYNC; MyIDs are this node's
	// replication IDs (its history, inherited from the master it followed).
	MasterReplID string
	MyIDs        IDs
	// Host and Port name the master, for the reason.
	Host string
	Port int
}

// RefuseEmptySync decides whether to refuse a full-sync payload. The
// payload is refused when all of these hold: the guard is enabled and not
// overridden, the link followed this master before, the replica holds
// keys, the payload holds none or the master says its history began empty
// at its start (clients write to a restarted master at once, so by the
// time it serves the sync its dataset is seldom quite empty), and the
// master's replication ID is not one
// of this node's (a master that kept its history and is empty was flushed
// by its clients, and the flush is part of that history; a master that
// restarted without its files has a new ID). The reason is for the log and
// INFO.
func RefuseEmptySync(in EmptySyncInput) (refuse bool, reason string) {
	if !in.Enabled || in.Overridden || !in.Followed || in.LocalKeys == 0 || !(in.PayloadEmpty || in.MasterFresh) {
		return false, ""
	}
	id := in.MasterReplID
	if id != "" && (strings.EqualFold(id, in.MyIDs.ID) || strings.EqualFold(id, in.MyIDs.ID2)) {
		return false, ""
	}
	what := "an empty dataset"
	if !in.PayloadEmpty {
		what = "a dataset begun empty at its restart"
	}
	return true, "MASTER " + in.Host + ":" + strconv.Itoa(in.Port) + " offers " + what + " under a new replication ID " +
		id + " while this replica holds " + strconv.FormatInt(in.LocalKeys, 10) +
		" keys: refusing the full sync (replica-refuse-empty-sync yes; REPLICAOF " + in.Host + " " +
		strconv.Itoa(in.Port) + " to accept it)"
}
