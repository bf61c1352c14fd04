package server

import (
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/acl"
)

// The server side of the ACL (internal/acl): the store built from the
// configuration, the per-command check of processCommand (ACLCheckAllPerm)
// and EXEC's re-check, authentication, and disconnecting the clients of
// deleted users or of subscribers whose channels were revoked.

// aclTable is the ACL's view of the command table: every command and
// subcommand by full name, with its categories.
func aclTable() *acl.Table {
	initTable()
	specs := make([]acl.CommandSpec, 0, len(allCommands))
	for _, c := range allCommands {
		specs = append(specs, acl.CommandSpec{Name: c.FullName(), Categories: c.ACL})
	}
	return acl.NewTable(specs)
}

// initACL is ACLInit and ACLLoadUsersAtStartup: requirepass and the "user"
// lines, then the aclfile (users in both places is an error configs
// reports). Called from New.
func (s *Server) initACL(cfg *configs.Config) error {
	st := acl.NewStore(aclTable())
	s.aclApplyConfig(st, cfg)
	if err := st.LoadConfig(cfg.RequirePass, cfg.Users); err != nil {
		return err
	}
	if f, _ := cfg.Value("aclfile"); f != "" {
		st.Dir = cfg.Dir // a relative aclfile is in dir, Redis's working directory
		if _, msg := st.LoadFile(f); msg != "" {
			return &aclStartupError{msg}
		}
	}
	s.acl = st
	return nil
}

// aclApplyConfig copies acl-pubsub-default and acllog-max-len into the
// store (at start and on CONFIG SET).
func (s *Server) aclApplyConfig(st *acl.Store, cfg *configs.Config) {
	v, _ := cfg.Value("acl-pubsub-default")
	st.AllChannels = v == "allchannels"
	if v, _ := cfg.Value("acllog-max-len"); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			st.LogMax = n
			st.TrimLog()
		}
	}
}

// aclOnConfigSet follows CONFIG SET of the ACL's directives: requirepass
// is the default user's password (updateRequirePass).
func (s *Server) aclOnConfigSet(name string) {
	if name == "requirepass" {
		s.acl.SetRequirePass(s.cfg.RequirePass)
		return
	}
	s.aclApplyConfig(s.acl, s.cfg)
}

type aclStartupError struct{ msg string }

func (e *aclStartupError) Error() string {
	return "Aborting Redis startup because of ACL errors: " + e.msg
}

// aclDefaultOpen reports whether the default user is on and nopass: new
// connections start authenticated and authRequired is false. Under mu.
func (s *Server) aclDefaultOpen() bool {
	d := s.acl.Default()
	return d.NoPass() && d.Enabled()
}

// aclDefaultNoPass reports the default user's nopass flag (protected mode,
// AUTH <password> without a password set). Under mu.
func (s *Server) aclDefaultNoPass() bool { return s.acl.Default().NoPass() }

// aclUser is the user the client runs as (the default user until AUTH).
func (c *Client) aclUserOrDefault() *acl.User {
	if c.aclUser != nil {
		return c.aclUser
	}
	return c.srv.acl.Default()
}

// aclKeys returns cmd's keys for the ACL: positions and the read/write
// access of their key specs (ACLSelectorCheckKey's key_flags).
func aclKeys(cmd *Command, args [][]byte) acl.KeyFunc {
	return func() ([]acl.KeyRef, bool) {
		refs, hasKeys := commandKeyRefs(cmd, args)
		out := make([]acl.KeyRef, len(refs))
		for i, r := range refs {
			access := 0
			for _, f := range r.flags {
				switch f {
				case "access":
					access |= acl.KeyRead
				case "insert", "delete", "update":
					access |= acl.KeyWrite
				}
			}
			out[i] = acl.KeyRef{Pos: r.pos, Access: access}
		}
		return out, hasKeys
	}
}

// aclCheck is ACLCheckAllPerm for c running cmd with args: the result and
// the position of the denied key or channel.
func (s *Server) aclCheck(c *Client, cmd *Command, args [][]byte) (acl.Result, int) {
	if c.aofClient { // the AOF loader's fake client (persist_aof.go)
		return acl.OK, 0
	}
	u := c.aclUserOrDefault()
	if u.Unrestricted() {
		return acl.OK, 0
	}
	id, ok := s.acl.Table().Lookup(cmd.FullName())
	if !ok {
		return acl.OK, 0
	}
	return u.Check(id, cmd.Has(FlagNoAuth), args, aclKeys(cmd, args))
}

// aclAllowed is processCommand's ACL step: a denied command is logged
// (context multi inside MULTI) and rejected with -NOPERM, which also flags
// a transaction being queued.
func (s *Server) aclAllowed(c *Client, cmd *Command, args [][]byte) bool {
	res, idx := s.aclCheck(c, cmd, args)
	if res == acl.OK {
		return true
	}
	ctx := "toplevel"
	if c.multi != nil {
		ctx = "multi"
	}
	s.aclLogDenied(c, res, ctx, cmd, args, idx, cmd.FullName())
	s.reject(c, cmd, acl.NoPermMessage(res, cmd.FullName()))
	return false
}

// aclExecAllowed is execCommand's re-check of a queued command (the rules
// may have changed since it was queued): a denied command gets -NOPERM as
// its element of EXEC's reply.
func (s *Server) aclExecAllowed(c *Client, cmd *Command, args [][]byte) bool {
	res, idx := s.aclCheck(c, cmd, args)
	if res == acl.OK {
		return true
	}
	s.aclLogDenied(c, res, "multi", cmd, args, idx, "exec")
	msg := acl.ExecNoPermMessage(res)
	s.countError([]byte("-" + msg))
	c.w.Error(msg)
	return false
}

// aclLogDenied is addACLLogEntry for a denied command: the object is the
// command's full name, or the denied key or channel.
func (s *Server) aclLogDenied(c *Client, res acl.Result, ctx string, cmd *Command, args [][]byte, idx int, cmdName string) {
	object := cmd.FullName()
	if res != acl.DeniedCmd && idx < len(args) {
		object = string(args[idx])
	}
	info := string(s.appendClientInfo(nil, c, c, args, cmdName))
	s.acl.AddLog(s.now, res, ctx, object, c.user, info)
}

// aclAuthenticate is ACLAuthenticateUser: on success c runs as the user;
// a failure is logged (reason auth, object the command as sent) and
// nothing is delayed.
func (s *Server) aclAuthenticate(c *Client, name, pass string, args [][]byte) bool {
	u := s.acl.Authenticate(name, pass)
	if u == nil {
		info := string(s.appendClientInfo(nil, c, c, args, strings.ToLower(string(args[0]))))
		ctx := "toplevel"
		if c.multi != nil {
			ctx = "multi" // AUTH queued in MULTI, run by EXEC
		}
		s.acl.AddLog(s.now, acl.DeniedAuth, ctx, string(args[0]), name, info)
		return false
	}
	c.aclUser = u
	c.user = name
	c.setAuthed(true)
	return true
}

// userExists reports whether an ACL user exists (CLIENT KILL USER).
func (s *Server) userExists(name string) bool { return s.acl.User(name) != nil }

// killUserClients is ACLFreeUserAndKillClients for the users gone: their
// clients are disconnected, the caller after its reply.
func (s *Server) killUserClients(self *Client, gone []*acl.User) {
	if len(gone) == 0 {
		return
	}
	for _, cl := range s.clientsByID() {
		u := cl.aclUserOrDefault()
		for _, g := range gone {
			if u != g {
				continue
			}
			if cl == self {
				self.closeAfterReply = true
			} else {
				s.log.Debug().Int64("id", cl.id).Str("user", g.Name()).Msg("Client killed: its ACL user was removed")
				cl.kill()
				s.dropKilledClient(cl)
			}
		}
	}
}

// killRevokedSubscribers is the second half of
// ACLKillPubsubClientsIfNeeded: the subscribers of u whose channels or
// patterns kill says are no longer allowed are disconnected.
func (s *Server) killRevokedSubscribers(self *Client, u *acl.User, kill acl.KillFunc) {
	if kill == nil {
		return
	}
	for _, cl := range s.clientsByID() {
		if cl.aclUserOrDefault() != u || cl.kind() != kindPubSub {
			continue
		}
		chans := make([]string, 0, len(cl.subs)+len(cl.ssubs))
		for ch := range cl.subs {
			chans = append(chans, ch)
		}
		for ch := range cl.ssubs {
			chans = append(chans, ch)
		}
		pats := make([]string, 0, len(cl.psubs))
		for p := range cl.psubs {
			pats = append(pats, p)
		}
		if !kill(chans, pats) {
			continue
		}
		if cl == self {
			self.closeAfterReply = true
			continue
		}
		s.log.Debug().Int64("id", cl.id).Str("user", u.Name()).Msg("Client killed: its channel permissions were revoked")
		cl.kill()
		s.dropKilledClient(cl)
	}
}

// dropKilledClient frees what a killed client holds under mu at once, as
// Redis's freeClient: its subscriptions and MONITOR stop now, not when its
// connection loop unlinks it.
func (s *Server) dropKilledClient(cl *Client) {
	s.pubsub.unsubscribeAll(cl)
	s.unwatchAll(cl, true)
	delete(s.monitors, cl)
}
