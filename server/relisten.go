package server

import (
	"errors"
	"net"

	"github.com/vigil-kv/vigil/internal/netshell"
)

// relistenTCP is changeListenPort and changeBindAddr, the apply functions
// of CONFIG SET port and bind (lock held): the TCP listeners close and
// the configured bind addresses open on the configured port, each served
// by an accept loop; port 0 leaves none. On failure nothing new stays
// open and the error is Redis's apply error (msg); the configuration's
// rollback then applies the old values again, which reopens the old
// listeners. A server that never listened (in-process tests) has nothing
// to move.
func (s *Server) relistenTCP(msg string) error {
	s.listenersMu.Lock()
	defer s.listenersMu.Unlock()
	if !s.listened {
		return nil
	}
	s.dropListeners(func(l net.Listener) bool { // the TCP port's: not the unix socket, not the TLS port's (tls.go)
		return l.Addr().Network() != "unix" && !netshell.IsTLSListener(l)
	})
	port := s.cfg.Port
	if port == 0 {
		return nil
	}
	opened, err := netshell.ListenTCP(s.cfg.Bind, port, "server")
	if err != nil {
		s.log.Warn().Msg(err.Error())
		return errors.New(msg)
	}
	if len(opened) == 0 && len(s.cfg.Bind) > 0 {
		return errors.New(msg)
	}
	s.listeners = append(s.listeners, opened...)
	s.tcpPort = port
	for _, l := range opened {
		go s.acceptLoop(l)
	}
	return nil
}

// dropListeners closes the listeners drop selects and keeps the others
// (listenersMu held).
func (s *Server) dropListeners(drop func(net.Listener) bool) {
	var keep []net.Listener
	for _, l := range s.listeners {
		if drop(l) {
			l.Close()
			continue
		}
		keep = append(keep, l)
	}
	s.listeners = keep
}
