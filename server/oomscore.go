package server

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// oom-score-adj, as server.c's setOOMScoreAdj (Redis 7.0): with
// oom-score-adj yes/relative the process's /proc/self/oom_score_adj is the
// score it had before Redis first changed it plus oom-score-adj-values' entry
// for its class (master, replica), clamped to -1000..1000; with absolute the
// entry itself; with no, the score it had before is restored. Set at start,
// on CONFIG SET of either directive and when the role changes.

// The classes of oom-score-adj-values (CONFIG_OOM_MASTER, _REPLICA,
// _BGCHILD).
const (
	oomMaster  = 0
	oomReplica = 1
	oomBgchild = 2
)

// bgchildOOMScore is the score setOOMScoreAdj(CONFIG_OOM_BGCHILD) gives
// a fork child: "" when oom-score-adj is no (the child keeps the score
// it inherits). The base is what the process had before Vigil changed it
// (its current score if it never did), as the child's inherited state.
func (s *Server) bgchildOOMScore() string {
	mode, _ := s.cfg.Value("oom-score-adj")
	if mode == "no" {
		return ""
	}
	oomState.Lock()
	base, adjusted := oomState.base, oomState.adjusted
	oomState.Unlock()
	if !adjusted {
		b, err := os.ReadFile(oomScoreFile)
		if err != nil {
			return ""
		}
		base = atoiC(string(b))
	}
	val := s.cfg.OOMScoreAdjValues[oomBgchild]
	if mode != "absolute" {
		val += base
	}
	return strconv.Itoa(min(max(val, -1000), 1000))
}

// oomScoreFile is the file setOOMScoreAdj reads and writes (a variable for
// tests; guarded by oomState).
var oomScoreFile = "/proc/self/oom_score_adj"

// oomState is setOOMScoreAdj's statics: the score is the process's, so the
// state is too.
var oomState struct {
	sync.Mutex
	adjusted bool // oom_score_adjusted_by_redis
	base     int  // oom_score_adj_base
}

var errOOMScore = errors.New("oom_score_adj")

// setOOMScoreAdj sets the process's score for class (-1: the server's role);
// it logs and returns an error when the file cannot be read or written.
func (s *Server) setOOMScoreAdj(class int) error {
	if class < 0 {
		class = oomMaster
		if s.cfg.ReplicaOf.Host != "" {
			class = oomReplica
		}
	}
	mode, _ := s.cfg.Value("oom-score-adj")
	oomState.Lock()
	defer oomState.Unlock()
	var val int
	switch {
	case mode != "no":
		if !oomState.adjusted {
			b, err := os.ReadFile(oomScoreFile)
			if err != nil {
				s.log.Warn().Msgf("Unable to read oom_score_adj: %s", redisutil.Strerror(err))
				return errOOMScore
			}
			oomState.adjusted = true
			oomState.base = atoiC(string(b))
		}
		val = s.cfg.OOMScoreAdjValues[class]
		if mode != "absolute" {
			val += oomState.base
		}
		val = min(max(val, -1000), 1000)
	case oomState.adjusted:
		oomState.adjusted = false
		val = oomState.base
	default:
		return nil
	}
	f, err := os.OpenFile(oomScoreFile, os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(strconv.Itoa(val) + "\n")
		f.Close()
	}
	if err != nil {
		s.log.Warn().Msgf("Unable to write oom_score_adj: %s", redisutil.Strerror(err))
		return errOOMScore
	}
	return nil
}

// atoiC is atoi: leading blanks, a sign and the digits that follow; 0 when
// there are none.
func atoiC(str string) int {
	str = strings.TrimLeft(str, " \t\n\v\f\r")
	end := 0
	if end < len(str) && (str[end] == '-' || str[end] == '+') {
		end++
	}
	for end < len(str) && str[end] >= '0' && str[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(str[:end])
	return n
}
