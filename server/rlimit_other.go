//go:build !unix

package server

// adjustOpenFilesLimit: no RLIMIT_NOFILE here; maxclients stands.
func (s *Server) adjustOpenFilesLimit(maxclients int) (int, error) { return maxclients, nil }
