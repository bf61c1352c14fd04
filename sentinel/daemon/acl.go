package daemon

import (
	"strconv"
	"strings"
	"sync"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/netshell"
)

// ACL in sentinel mode: the ACL subcommands (the table both binaries
// share, netshell.ACLSubcommands) over the users of internal/acl
// (aclState), as redis-sentinel 7.0.15 answers them.

func aclSubcommands() []*command {
	locked := func(f func(c *client, st *acl.Store, argv [][]byte)) handler {
		return func(c *client, argv [][]byte) {
			c.d.acl.mu.Lock()
			defer c.d.acl.mu.Unlock()
			f(c, c.d.acl.st, argv)
		}
	}
	return netshell.ACLSubcommands(map[string]handler{
		"cat":     func(c *client, a [][]byte) { acl.WriteCat(&c.w, aclTable(), strs(a)) },
		"deluser": aclDeluser,
		"dryrun":  aclDryrun,
		"genpass": func(c *client, a [][]byte) { acl.WriteGenPass(&c.w, strs(a)) },
		"getuser": locked(func(c *client, st *acl.Store, a [][]byte) { acl.WriteGetUser(&c.w, st.User(string(a[2]))) }),
		"help":    func(c *client, _ [][]byte) { c.help("ACL", acl.HelpLines) },
		"list":    locked(func(c *client, st *acl.Store, _ [][]byte) { acl.WriteList(&c.w, st) }),
		"load":    func(c *client, _ [][]byte) { c.w.Error(acl.ErrNoACLFile) },
		"log":     aclLogCmd,
		"save":    func(c *client, _ [][]byte) { c.w.Error(acl.ErrNoACLFile) },
		"setuser": aclSetuser,
		"users":   locked(func(c *client, st *acl.Store, _ [][]byte) { acl.WriteUsers(&c.w, st) }),
		"whoami":  func(c *client, _ [][]byte) { c.w.BulkString(c.user) },
	})
}

// aclState is the ACL of one daemon (an acl.Store: the users, the default
// user and the ACL log). Clients read and change it from their own
// goroutines, under mu.
type aclState struct {
	mu sync.Mutex
	st *acl.Store
}

var (
	aclTableOnce sync.Once
	aclTbl       *acl.Table
)

// aclTable is the ACL's view of the sentinel's command table (COMMAND
// LIST's names and categories, recorded from redis-sentinel 7.0.15).
func aclTable() *acl.Table {
	aclTableOnce.Do(func() {
		var specs []acl.CommandSpec
		for _, n := range commandListNames() {
			specs = append(specs, acl.CommandSpec{Name: n.name, Categories: strings.Split(strings.Trim(n.acl, ","), ",")})
		}
		// Vigil's own subcommands, categorized as their siblings.
		specs = append(specs, acl.CommandSpec{Name: "sentinel|timeline", Categories: []string{"admin", "slow", "dangerous"}})
		aclTbl = acl.NewTable(specs)
	})
	return aclTbl
}

// aclLookup is ACLLookupCommand over the sentinel's table.
func aclLookup(name string) (int, bool) { return aclTable().Lookup(name) }

// newStore is ACLInit with the configuration's acl-pubsub-default and
// acllog-max-len.
func newStore(srv *configs.Config) *acl.Store {
	st := acl.NewStore(aclTable())
	if v, ok := srv.Value("acl-pubsub-default"); ok && v == "allchannels" {
		st.AllChannels = true
	}
	if v, ok := srv.Value("acllog-max-len"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			st.LogMax = n
		}
	}
	return st
}

// newACL is ACLInit plus the users of the configuration (requirepass and
// the "user" lines, acl.Store.LoadConfig).
func newACL(srv *configs.Config) (*aclState, error) {
	st := newStore(srv)
	if err := st.LoadConfig(srv.RequirePass, srv.Users); err != nil {
		return nil, err
	}
	return &aclState{st: st}, nil
}

// validateUserLine is ACLAppendUserForLoading as config.c reports it (see
// acl.Store.ValidateUserLine).
func validateUserLine(full []string, seen map[string]bool, cfg *configs.Config) string {
	return newStore(cfg).ValidateUserLine(full, seen)
}

// lines is ACL LIST: "user <name> <rules>" for every user, by name.
func (a *aclState) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st.Lines()
}

// defaultNoPassFlag tells whether the default user has the nopass flag
// (AUTH <password> is then an error, even when the user is off).
func (a *aclState) defaultNoPassFlag() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.st.Default().NoPass()
}

// defaultNoPass tells whether connections start authenticated (the default
// user is on and nopass), as authRequired and protected mode decide.
func (a *aclState) defaultNoPass() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.st.Default()
	return d.NoPass() && d.Enabled()
}

// authenticate is ACLAuthenticateUser; a failure is logged.
// object is the command's name as the client sent it (the log's object).
func (c *client) authenticate(name, pass, object string) bool {
	a := c.d.acl
	a.mu.Lock()
	u := a.st.Authenticate(name, pass)
	if u != nil {
		c.u = u // read by other clients' ACL SETUSER/DELUSER under mu
	}
	a.mu.Unlock()
	if u == nil {
		c.aclLog(acl.DeniedAuth, name, object, strings.ToLower(object))
		return false
	}
	c.authed = true
	c.user = name
	return true
}

// aclCheck is the ACL part of processCommand: NOPERM (and a log entry)
// when the client's user may not run the command.
func (c *client) aclCheck(cmd *command, argv [][]byte) bool {
	name := cmd.FullName()
	id, ok := aclLookup(name)
	if !ok {
		return true
	}
	a := c.d.acl
	a.mu.Lock()
	u := c.u
	if u == nil {
		u = a.st.Default()
	}
	res, idx := acl.OK, 0
	if !u.Unrestricted() {
		res, idx = u.Check(id, cmd.Has(netshell.FlagNoAuth), argv, nil)
	}
	a.mu.Unlock()
	switch res {
	case acl.OK:
		return true
	case acl.DeniedCmd:
		c.aclLog(res, c.user, name, name)
	default:
		c.aclLog(res, c.user, string(argv[idx]), name)
	}
	c.w.Error(acl.NoPermMessage(res, name))
	return false
}

// aclLog is addACLLogEntry (acl.Store.AddLog); cmdName is the command
// the client info shows.
func (c *client) aclLog(reason acl.Result, username, object, cmdName string) {
	cinfo := c.d.clientInfo(c, c, cmdName)
	a := c.d.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	a.st.AddLog(timeNow(), reason, "toplevel", object, username, cinfo)
}

func aclLogCmd(c *client, argv [][]byte) {
	a := c.d.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	acl.WriteLog(&c.w, a.st, strs(argv), timeNow())
}

func aclSetuser(c *client, argv [][]byte) {
	a := c.d.acl
	clients := c.d.clientsSorted() // lock order: clientsMu, then acl.mu
	a.mu.Lock()
	u, kill, msg := a.st.SetUser(string(argv[2]), strs(argv[3:]))
	if msg != "" {
		a.mu.Unlock()
		c.w.Error(msg)
		return
	}
	var gone []*client
	if kill != nil {
		gone = c.d.pubsubToKill(clients, u, kill)
	}
	a.mu.Unlock()
	for _, cl := range gone {
		cl.conn.Close()
	}
	c.w.OK()
}

// pubsubToKill is the second half of ACLKillPubsubClientsIfNeeded: the
// subscribed clients of user u that kill selects. Called under acl.mu.
func (d *Daemon) pubsubToKill(clients []*client, u *acl.User, kill acl.KillFunc) []*client {
	var out []*client
	for _, cl := range clients {
		cu := cl.u
		if cu == nil {
			cu = d.acl.st.Default() // never authenticated: the default user
		}
		if cu != u {
			continue
		}
		d.hub.mu.Lock()
		var chans, pats []string
		for p := range cl.psubs {
			pats = append(pats, p)
		}
		for ch := range cl.subs {
			chans = append(chans, ch)
		}
		d.hub.mu.Unlock()
		if (len(chans) > 0 || len(pats) > 0) && kill(chans, pats) {
			out = append(out, cl)
		}
	}
	return out
}

func aclDeluser(c *client, argv [][]byte) {
	a := c.d.acl
	clients := c.d.clientsSorted()
	a.mu.Lock()
	gone, msg := a.st.DelUser(strs(argv[2:]))
	if msg != "" {
		a.mu.Unlock()
		c.w.Error(msg)
		return
	}
	// ACLFreeUserAndKillClients: the user's clients are closed, the
	// current one after its reply.
	for _, cl := range clients {
		for _, u := range gone {
			if cl.u != u {
				continue
			}
			if cl == c {
				c.close = true
			} else {
				cl.conn.Close()
			}
		}
	}
	a.mu.Unlock()
	c.w.Int(int64(len(gone)))
}

func aclDryrun(c *client, argv [][]byte) {
	a := c.d.acl
	a.mu.Lock()
	u := a.st.User(string(argv[2]))
	a.mu.Unlock()
	if u == nil {
		c.w.Error("ERR User '" + string(argv[2]) + "' not found")
		return
	}
	cargs := argv[3:]
	cmd, msg := netshell.LookupArgv(c.d.cmds, cargs)
	if msg != "" {
		c.w.Error(msg)
		return
	}
	name := cmd.FullName()
	id, ok := aclLookup(name)
	if !ok {
		c.w.OK()
		return
	}
	a.mu.Lock()
	res, idx := u.Check(id, cmd.Has(netshell.FlagNoAuth), cargs, nil)
	a.mu.Unlock()
	if res == acl.OK {
		c.w.OK()
		return
	}
	c.w.BulkString(acl.DryRunMessage(res, name, string(cargs[idx])))
}
