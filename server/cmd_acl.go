package server

import (
	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redistext"
)

// ACL and its subcommands (acl.c's aclCommand) over the users of
// internal/acl; the store is guarded by the execution lock handlers run
// under.

func init() {
	handlers := map[string]Handler{
		"cat":     cmdACLCat,
		"deluser": cmdACLDelUser,
		"dryrun":  cmdACLDryRun,
		"genpass": cmdACLGenPass,
		"getuser": cmdACLGetUser,
		"help":    func(c *Client, _ [][]byte) { redistext.Help(&c.w, "ACL", acl.HelpLines) },
		"list":    func(c *Client, _ [][]byte) { acl.WriteList(&c.w, c.srv.acl) },
		"load":    cmdACLLoad,
		"log":     cmdACLLog,
		"save":    cmdACLSave,
		"setuser": cmdACLSetUser,
		"users":   func(c *Client, _ [][]byte) { acl.WriteUsers(&c.w, c.srv.acl) },
		"whoami":  func(c *Client, _ [][]byte) { c.w.BulkString(c.user) },
	}
	register(&Command{Name: "acl", Arity: -2, ACL: []string{"slow"}, Subs: netshell.ACLSubcommands(handlers)})
}

func strArgs(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

func cmdACLCat(c *Client, args [][]byte) { acl.WriteCat(&c.w, c.srv.acl.Table(), strArgs(args)) }

func cmdACLGenPass(c *Client, args [][]byte) { acl.WriteGenPass(&c.w, strArgs(args)) }

func cmdACLGetUser(c *Client, args [][]byte) { acl.WriteGetUser(&c.w, c.srv.acl.User(string(args[2]))) }

func cmdACLLog(c *Client, args [][]byte) { acl.WriteLog(&c.w, c.srv.acl, strArgs(args), c.srv.now) }

// cmdACLSetUser is ACL SETUSER: subscribers of the user whose channels the
// new rules revoke are disconnected (ACLKillPubsubClientsIfNeeded). A user
// turned off keeps its authenticated connections, as in Redis 7.0.
func cmdACLSetUser(c *Client, args [][]byte) {
	s := c.srv
	u, kill, msg := s.acl.SetUser(string(args[2]), strArgs(args[3:]))
	// aclCommand redacts every argument from the user name on, whatever
	// the outcome: SLOWLOG and MONITOR show "(redacted)".
	redactArgs(args, 2, len(args)-1)
	if msg != "" {
		c.w.Error(msg)
		return
	}
	s.killRevokedSubscribers(c, u, kill)
	c.w.OK()
}

// cmdACLDelUser is ACL DELUSER: the clients of the users removed are
// disconnected (ACLFreeUserAndKillClients).
func cmdACLDelUser(c *Client, args [][]byte) {
	s := c.srv
	gone, msg := s.acl.DelUser(strArgs(args[2:]))
	if msg != "" {
		c.w.Error(msg)
		return
	}
	s.killUserClients(c, gone)
	c.w.Int(int64(len(gone)))
}

// cmdACLDryRun is ACL DRYRUN user command [arg ...].
func cmdACLDryRun(c *Client, args [][]byte) {
	s := c.srv
	u := s.acl.User(string(args[2]))
	if u == nil {
		c.w.Error("ERR User '" + string(args[2]) + "' not found")
		return
	}
	argv := args[3:]
	cmd, msg := netshell.LookupArgv(s.cmds, argv)
	if msg != "" {
		c.w.Error(msg)
		return
	}
	id, ok := s.acl.Table().Lookup(cmd.FullName())
	if !ok {
		c.w.OK()
		return
	}
	res, idx := u.Check(id, cmd.Has(FlagNoAuth), argv, aclKeys(cmd, argv))
	if res == acl.OK {
		c.w.OK()
		return
	}
	c.w.BulkString(acl.DryRunMessage(res, cmd.FullName(), string(argv[idx])))
}

// aclFile is the aclfile directive ("" when unset). A relative name is
// in dir (Redis's working directory: it chdirs there, and again on CONFIG
// SET dir), where the ACL store opens it.
func (s *Server) aclFile() string {
	f, _ := s.cfg.Value("aclfile")
	s.acl.Dir = s.cfg.Dir
	return f
}

// cmdACLLoad is ACL LOAD: the ACL file replaces every user, all or
// nothing; the clients of the users replaced (all but default's) are
// disconnected.
func cmdACLLoad(c *Client, args [][]byte) {
	s := c.srv
	f := s.aclFile()
	if f == "" {
		c.w.Error(acl.ErrNoACLFile)
		return
	}
	gone, msg := s.acl.LoadFile(f)
	if msg != "" {
		c.w.Error("ERR " + msg)
		return
	}
	s.killUserClients(c, gone)
	c.w.OK()
}

// cmdACLSave is ACL SAVE: the users to the ACL file.
func cmdACLSave(c *Client, args [][]byte) {
	s := c.srv
	f := s.aclFile()
	if f == "" {
		c.w.Error(acl.ErrNoACLFile)
		return
	}
	if err := s.acl.SaveFile(f, s.now); err != nil {
		s.log.Warn().Err(err).Str("file", f).Msg("Saving the ACL file failed")
		c.w.Error(acl.ErrSaveFailed)
		return
	}
	c.w.OK()
}
