package netshell

import (
	"sort"

	"github.com/vigil-kv/vigil/internal/redistext"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO as networking.c's
// clientCommand of Redis 7.0.15, for both binaries: redis-sentinel runs
// the same code (it accepts CLIENT TRACKING ON but, having no keyspace,
// never sends an invalidation). What tracking does with keys is
// vigil-server's (server/tracking.go); the parsing, the errors and the
// replies are here.

// Tracking is a tracking client's flags and options (CLIENT_TRACKING*);
// a client that does not track has none (nil).
type Tracking struct {
	Redir                                 int64 // REDIRECT's client id, 0: none
	BCast, OptIn, OptOut, Caching, NoLoop bool
	BrokenRedir                           bool                // CLIENT_TRACKING_BROKEN_REDIR
	Prefixes                              map[string]struct{} // BCAST prefixes
}

// TrackingArgs is CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]...
// [BCAST] [OPTIN] [OPTOUT] [NOLOOP], parsed.
type TrackingArgs struct {
	On                           bool
	Redir                        int64
	BCast, OptIn, OptOut, NoLoop bool
	Prefixes                     []string // in the order given
}

// Errors of CLIENT TRACKING and CLIENT CACHING (networking.c).
const (
	ErrCachingNoTracking   = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled"
	errTrackingRedirOne    = "ERR A client can only redirect to a single other client"
	errTrackingRedirGone   = "ERR The client ID you want redirect to does not exist"
	errTrackingPrefixBcast = "ERR PREFIX option requires BCAST mode to be enabled"
	errTrackingBcastSwitch = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	errTrackingOptBcast    = "ERR OPTIN and OPTOUT are not compatible with BCAST"
	errTrackingOptBoth     = "ERR You can't specify both OPTIN mode and OPTOUT mode"
	errTrackingOptSwitch   = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	errCachingYes          = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
	errCachingNo           = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."
)

// ParseTracking parses CLIENT TRACKING's arguments and checks them against
// the client's state cur (nil: not tracking); redirExists is
// lookupClientByID. When ok is false the error was replied and nothing
// changes. When ok is true the caller enables (a.On) or disables tracking
// and replies +OK: an error may already have been replied then, as 7.0.15
// does for a PREFIX overlapping a later one given in the same command
// (checkPrefixCollisionsOrReply's index, see checkPrefixCollisions).
func ParseTracking(w *resp.Writer, argv [][]byte, cur *Tracking, redirExists func(int64) bool) (a TrackingArgs, ok bool) {
	for j := 3; j < len(argv); j++ {
		more := len(argv) - 1 - j
		switch arg := argv[j]; {
		case keyword(arg, "redirect") && more > 0:
			j++
			if a.Redir != 0 {
				w.Error(errTrackingRedirOne)
				return a, false
			}
			id, isInt := redisutil.String2ll(argv[j])
			if !isInt {
				w.Error(redistext.ErrNotInteger)
				return a, false
			}
			a.Redir = id
			if !redirExists(id) {
				w.Error(errTrackingRedirGone)
				return a, false
			}
		case keyword(arg, "bcast"):
			a.BCast = true
		case keyword(arg, "optin"):
			a.OptIn = true
		case keyword(arg, "optout"):
			a.OptOut = true
		case keyword(arg, "noloop"):
			a.NoLoop = true
		case keyword(arg, "prefix") && more > 0:
			j++
			a.Prefixes = append(a.Prefixes, string(argv[j]))
		default:
			w.Error(redistext.ErrSyntax)
			return a, false
		}
	}
	switch {
	case keyword(argv[2], "on"):
		a.On = true
		switch {
		case !a.BCast && len(a.Prefixes) > 0:
			w.Error(errTrackingPrefixBcast)
			return a, false
		case cur != nil && cur.BCast != a.BCast:
			w.Error(errTrackingBcastSwitch)
			return a, false
		case a.BCast && (a.OptIn || a.OptOut):
			w.Error(errTrackingOptBcast)
			return a, false
		case a.OptIn && a.OptOut:
			w.Error(errTrackingOptBoth)
			return a, false
		case cur != nil && (a.OptIn && cur.OptOut || a.OptOut && cur.OptIn):
			w.Error(errTrackingOptSwitch)
			return a, false
		}
		if a.BCast && !checkPrefixCollisions(w, cur, a.Prefixes) {
			return a, false
		}
	case keyword(argv[2], "off"):
	default:
		w.Error(redistext.ErrSyntax)
		return a, false
	}
	return a, true
}

// prefixesOverlap is stringCheckPrefix: one is a prefix of the other.
func prefixesOverlap(a, b string) bool {
	n := min(len(a), len(b))
	return a[:n] == b[:n]
}

// checkPrefixCollisions is checkPrefixCollisionsOrReply. Redis 7.0 returns
// the index of the first prefix found overlapping a later one given in the
// same command, which is "success" unless that index is 0: then the error
// is replied and tracking is still enabled (and answered +OK), as
// redis-server and redis-sentinel 7.0.15 do.
func checkPrefixCollisions(w *resp.Writer, cur *Tracking, prefixes []string) bool {
	for i, p := range prefixes {
		if cur != nil {
			for _, q := range SortedPrefixes(cur) {
				if prefixesOverlap(q, p) {
					w.Error("ERR Prefix '" + cString(p) + "' overlaps with an existing prefix '" + cString(q) + "'. Prefixes for a single client must not overlap.")
					return false
				}
			}
		}
		for _, q := range prefixes[i+1:] {
			if prefixesOverlap(p, q) {
				w.Error("ERR Prefix '" + cString(p) + "' overlaps with another provided prefix '" + cString(q) + "'. Prefixes for a single client must not overlap.")
				return i != 0
			}
		}
	}
	return true
}

// cString is a string as %s prints it: up to its first NUL.
func cString(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return s[:i]
		}
	}
	return s
}

// SortedPrefixes is t's BCAST prefixes in the order of Redis's radix tree
// (bytewise).
func SortedPrefixes(t *Tracking) []string {
	out := make([]string, 0, len(t.Prefixes))
	for p := range t.Prefixes {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Enable is enableTracking's change of a client's flags: the options
// replace the old ones, the BCAST prefixes (the empty one when none is
// given) add to them; it returns the state (t, or a new one when t is
// nil) and the prefixes that are new for the client.
func (t *Tracking) Enable(a TrackingArgs) (_ *Tracking, added []string) {
	if t == nil {
		t = &Tracking{}
	}
	t.Redir = a.Redir
	t.BrokenRedir, t.BCast, t.OptIn, t.OptOut, t.NoLoop = false, false, false, false, false
	if a.BCast {
		t.BCast = true
		ps := a.Prefixes
		if len(ps) == 0 {
			ps = []string{""}
		}
		for _, p := range ps {
			if _, ok := t.Prefixes[p]; ok {
				continue
			}
			if t.Prefixes == nil {
				t.Prefixes = map[string]struct{}{}
			}
			t.Prefixes[p] = struct{}{}
			added = append(added, p)
		}
	}
	t.OptIn, t.OptOut, t.NoLoop = a.OptIn, a.OptOut, a.NoLoop
	return t, added
}

// Caching is CLIENT CACHING YES|NO for a client with tracking state t
// (nil: off): it sets t.Caching and replies +OK, or replies the error.
func Caching(w *resp.Writer, t *Tracking, arg []byte) {
	if t == nil {
		w.Error(ErrCachingNoTracking)
		return
	}
	switch {
	case keyword(arg, "yes"):
		if !t.OptIn {
			w.Error(errCachingYes)
			return
		}
	case keyword(arg, "no"):
		if !t.OptOut {
			w.Error(errCachingNo)
			return
		}
	default:
		w.Error(redistext.ErrSyntax)
		return
	}
	t.Caching = true
	w.OK()
}

// GetRedir is CLIENT GETREDIR: the redirection, 0 without one, -1 when
// the client does not track.
func GetRedir(w *resp.Writer, t *Tracking) {
	if t == nil {
		w.Int(-1)
		return
	}
	w.Int(t.Redir)
}

// TrackingInfo is CLIENT TRACKINGINFO for a client with tracking state t
// (nil: off).
func TrackingInfo(w *resp.Writer, t *Tracking) {
	if t == nil {
		w.MapLen(3)
		w.BulkString("flags")
		w.SetLen(1)
		w.BulkString("off")
		w.BulkString("redirect")
		w.Int(-1)
		w.BulkString("prefixes")
		w.ArrayLen(0)
		return
	}
	flags := []string{"on"}
	if t.BCast {
		flags = append(flags, "bcast")
	}
	if t.OptIn {
		flags = append(flags, "optin")
		if t.Caching {
			flags = append(flags, "caching-yes")
		}
	}
	if t.OptOut {
		flags = append(flags, "optout")
		if t.Caching {
			flags = append(flags, "caching-no")
		}
	}
	if t.NoLoop {
		flags = append(flags, "noloop")
	}
	if t.BrokenRedir {
		flags = append(flags, "broken_redirect")
	}
	w.MapLen(3)
	w.BulkString("flags")
	w.SetLen(len(flags))
	for _, f := range flags {
		w.BulkString(f)
	}
	w.BulkString("redirect")
	w.Int(t.Redir)
	w.BulkString("prefixes")
	ps := SortedPrefixes(t)
	w.ArrayLen(len(ps))
	for _, p := range ps {
		w.BulkString(p)
	}
}

// TrackingFlags appends CLIENT LIST's tracking flags (t, R, B) of a client
// with tracking state t (nil: none).
func TrackingFlags(b []byte, t *Tracking) []byte {
	if t == nil {
		return b
	}
	b = append(b, 't')
	if t.BrokenRedir {
		b = append(b, 'R')
	}
	if t.BCast {
		b = append(b, 'B')
	}
	return b
}
