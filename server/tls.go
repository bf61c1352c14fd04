package server

import (
	"errors"

	"github.com/vigil-kv/vigil/internal/netshell"
)

// TLS (netshell/tls.go): the tls-port's listeners, CONFIG SET of the
// tls-* directives (config.c's applyTlsCfg and applyTLSPort) and the
// replica's link to its master with tls-replication.

// tlsApplied are the directives whose CONFIG SET reconfigures TLS
// (applyTlsCfg).
var tlsApplied = map[string]bool{
	"tls-session-cache-size": true, "tls-session-cache-timeout": true, "tls-cluster": true,
	"tls-replication": true, "tls-prefer-server-ciphers": true, "tls-session-caching": true,
	"tls-cert-file": true, "tls-key-file": true, "tls-key-file-pass": true,
	"tls-client-cert-file": true, "tls-client-key-file": true, "tls-client-key-file-pass": true,
	"tls-dh-params-file": true, "tls-ca-cert-file": true, "tls-ca-cert-dir": true,
	"tls-protocols": true, "tls-ciphers": true, "tls-ciphersuites": true,
}

const errTLSUpdate = "Unable to update TLS configuration. Check server logs."

// tlsOnConfigSet applies a CONFIG SET of a tls-* directive (lock held).
func (s *Server) tlsOnConfigSet(name string) error {
	t := netshell.TLSSettingsOf(s.cfg)
	switch {
	case name == "tls-auth-clients": // read when a connection is accepted
		s.tls.SetAuth(t.AuthClients)
	case name == "tls-port": // applyTLSPort
		if !s.tls.Configured() {
			if err := s.configureTLS(t); err != nil {
				return err
			}
		}
		return s.relistenTLS(t.Port)
	case tlsApplied[name]: // applyTlsCfg
		if t.Enabled() {
			return s.configureTLS(t)
		}
	}
	return nil
}

// configureTLS is tlsConfigure: the new context replaces the current one
// only when it builds.
func (s *Server) configureTLS(t netshell.TLSSettings) error {
	ctx, err := netshell.BuildTLS(t)
	if err != nil {
		s.log.Warn().Msg(err.Error())
		return errors.New(errTLSUpdate)
	}
	for _, w := range ctx.Warnings {
		s.log.Warn().Msg(w)
	}
	s.tls.Set(ctx)
	return nil
}

// relistenTLS is changeListenPort for the TLS listeners: they close and
// the bind addresses open on port (none for 0).
func (s *Server) relistenTLS(port int) error {
	s.listenersMu.Lock()
	defer s.listenersMu.Unlock()
	if !s.listened {
		return nil
	}
	s.dropListeners(netshell.IsTLSListener)
	s.tlsPort = port // kept on failure: the rollback reopens it (CONFIG SET bind)
	if port == 0 {
		return nil
	}
	opened, err := netshell.ListenTCP(s.cfg.Bind, port, "server")
	if err != nil {
		s.log.Warn().Msg(err.Error())
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	for _, l := range opened {
		tl := s.tls.Listener(l)
		s.listeners = append(s.listeners, tl)
		go s.acceptLoop(tl)
	}
	return nil
}
