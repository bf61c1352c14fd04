package server

import (
	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/proctitle"
)

// SetProcTitle is redisSetProcTitle(NULL): with set-proc-title yes, the
// process title (ps, /proc/PID/cmdline) becomes proc-title-template
// expanded for this server (internal/proctitle; nothing without
// proctitle.Init, as in tests). The main calls it once listening; CONFIG
// SET proc-title-template calls it again.
func (s *Server) SetProcTitle() {
	if t, ok := s.procTitle(); ok {
		proctitle.Set(t)
	}
}

// procTitle is the title SetProcTitle sets (false: none, set-proc-title
// no or a bad template).
func (s *Server) procTitle() (string, bool) {
	if v, _ := s.cfg.Value("set-proc-title"); v != "yes" {
		return "", false
	}
	tmpl, _ := s.cfg.Value("proc-title-template")
	mode := ""
	if s.cfg.ClusterEnabled {
		mode = "[cluster]"
	}
	return configs.ExpandProcTitle(tmpl, s.cfg.ProcTitleVars(proctitle.Arg0(), mode))
}
