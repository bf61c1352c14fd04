//go:build unix

package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// minReservedFDs is CONFIG_MIN_RESERVED_FDS: the descriptors kept beside
// the clients' (listeners, files, replication).
const minReservedFDs = 32

// adjustOpenFilesLimit is server.c's adjustOpenFilesLimit for maxclients:
// when the open files limit is below maxclients+32 it is raised, soft and
// hard limit both, to the most the system allows of maxclients+32,
// maxclients+16, ... (Redis tries them down in steps of 16: the first that
// setrlimit takes is the largest at or below the hard limit, or below
// fs.nr_open where the process may raise its hard limit; those two are
// tried directly here), and maxclients is reduced to what the limit it got
// allows, with Redis's warnings. It returns the maxclients the limit
// allows, and an error (Redis exits) when that is none.
func (s *Server) adjustOpenFilesLimit(maxclients int) (int, error) {
	maxfiles := uint64(maxclients) + minReservedFDs
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		s.log.Warn().Msgf("Unable to obtain the current NOFILE limit (%s), assuming 1024 and setting the max clients configuration accordingly.", err)
		return 1024 - minReservedFDs, nil
	}
	old := lim.Cur
	if old >= maxfiles {
		return maxclients, nil
	}
	// The largest of maxfiles, maxfiles-16, ... at or below c.
	below := func(c uint64) uint64 {
		if c >= maxfiles {
			return maxfiles
		}
		return maxfiles - (maxfiles-c+15)/16*16
	}
	cands := []uint64{maxfiles}
	if b, err := os.ReadFile("/proc/sys/fs/nr_open"); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil {
			cands = append(cands, below(n))
		}
	}
	cands = append(cands, below(lim.Max))
	best, lastErr := old, error(nil)
	for _, n := range cands {
		if n <= old || n > maxfiles {
			continue
		}
		err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n})
		if err == nil {
			best = n
			break
		}
		lastErr = err
	}
	if best >= maxfiles {
		s.log.Info().Msgf("Increased maximum number of open files to %d (it was originally set to %d).", maxfiles, old)
		return maxclients, nil
	}
	if best <= minReservedFDs {
		return 0, fmt.Errorf("Your current 'ulimit -n' of %d is not enough for the server to start. Please increase your open file limit to at least %d. Exiting.", old, maxfiles)
	}
	reduced := int(best - minReservedFDs)
	if lastErr == nil {
		lastErr = syscall.EPERM
	}
	s.log.Warn().Msgf("You requested maxclients of %d requiring at least %d max file descriptors.", maxclients, maxfiles)
	s.log.Warn().Msgf("Server can't set maximum open files to %d because of OS error: %s.", maxfiles, strings.ToUpper(lastErr.Error()[:1])+lastErr.Error()[1:])
	s.log.Warn().Msgf("Current maximum open files is %d. maxclients has been reduced to %d to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'.", best, reduced)
	return reduced, nil
}
