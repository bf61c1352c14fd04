package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/resp"
)

// ACL in sentinel mode: the ACL subcommands over the users of
// acl_user.go (aclState), as redis-sentinel 7.0.15 answers them.

const errNoACLFile = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration."

var aclCategories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking", "dangerous",
	"connection", "transaction", "scripting"}

func aclSubcommands() []subcommand {
	ls := []string{"noscript", "loading", "stale"}
	adm := append([]string{"admin"}, ls...)
	admACL := []string{"@admin", "@slow", "@dangerous"}
	slow := []string{"@slow"}
	return []subcommand{
		{"cat", -2, ls, slow, aclCat},
		{"deluser", -3, adm, admACL, aclDeluser},
		{"dryrun", -4, adm, admACL, aclDryrun},
		{"genpass", -2, ls, slow, aclGenpass},
		{"getuser", 3, adm, admACL, aclGetuser},
		{"help", 2, []string{"loading", "stale"}, slow, func(c *client, _ []string) { c.help("ACL", aclHelp) }},
		{"list", 2, adm, admACL, func(c *client, _ []string) {
			lines := c.d.acl.lines()
			c.w.ArrayLen(len(lines))
			for _, l := range lines {
				c.w.BulkString(l)
			}
		}},
		{"load", 2, adm, admACL, func(c *client, _ []string) { c.w.Error(errNoACLFile) }},
		{"log", -2, adm, admACL, aclLog},
		{"save", 2, adm, admACL, func(c *client, _ []string) { c.w.Error(errNoACLFile) }},
		{"setuser", -3, adm, admACL, aclSetuser},
		{"users", 2, adm, admACL, func(c *client, _ []string) {
			a := c.d.acl
			a.mu.Lock()
			names := a.users.names()
			a.mu.Unlock()
			c.w.ArrayLen(len(names))
			for _, n := range names {
				c.w.BulkString(n)
			}
		}},
		{"whoami", 2, ls, slow, func(c *client, _ []string) { c.w.BulkString(c.user) }},
	}
}

// errACLSubSyntax is addReplySubcommandSyntaxError, which aclCommand
// replies when a subcommand has too many arguments.
func errACLSubSyntax(sub string) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + trunc(sub, 128) + "'. Try ACL HELP."
}

func aclCat(c *client, a []string) {
	if len(a) == 2 {
		c.w.ArrayLen(len(aclCategories))
		for _, cat := range aclCategories {
			c.w.BulkString(cat)
		}
		return
	}
	if len(a) > 3 {
		c.w.Error(errACLSubSyntax(a[1]))
		return
	}
	cat := strings.ToLower(a[2])
	known := false
	for _, x := range aclCategories {
		known = known || x == cat
	}
	if !known {
		c.w.Error("ERR Unknown category '" + a[2] + "'")
		return
	}
	var out []string
	for _, n := range commandListNames() {
		if strings.Contains(n.acl, ","+cat+",") {
			out = append(out, n.name)
		}
	}
	c.w.ArrayLen(len(out))
	for _, n := range out {
		c.w.BulkString(n)
	}
}

func aclGenpass(c *client, a []string) {
	bits := int64(256)
	if len(a) == 3 {
		n, ok := resp.ParseInt([]byte(a[2]))
		if !ok || n <= 0 || n > 4096 {
			c.w.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		bits = n
	} else if len(a) > 3 {
		c.w.Error(errACLSubSyntax(a[1]))
		return
	}
	chars := (bits + 3) / 4
	b := make([]byte, (chars+1)/2)
	_, _ = rand.Read(b)
	c.w.BulkString(hex.EncodeToString(b)[:chars])
}

// aclState is the ACL of one daemon: the users (Users), the default user
// (DefaultUser) and the ACL log. Clients read and change it from their own
// goroutines, under mu.
type aclState struct {
	mu          sync.Mutex
	users       users
	def         *aclUser
	allChannels bool // acl-pubsub-default allchannels
	log         []*aclLogEntry
	logMax      int
}

type aclLogEntry struct {
	count    int
	reason   string
	context  string
	object   string
	username string
	ctime    time.Time
	cinfo    string
}

// newACL is ACLInit plus the users of the configuration: requirepass
// sets the default user's password (ACLUpdateDefaultUserPassword), then
// the "user" lines are applied in order (ACLLoadConfiguredUsers), a
// "user default" line resetting the default user first.
func newACL(srv *configs.Config) (*aclState, error) {
	a := &aclState{users: users{}, logMax: 128}
	if v, ok := srv.Value("acl-pubsub-default"); ok && v == "allchannels" {
		a.allChannels = true
	}
	if v, ok := srv.Value("acllog-max-len"); ok {
		if n, err := strconv.Atoi(v); err == nil {
			a.logMax = n
		}
	}
	def := newUser("default", a.allChannels)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		_ = def.set(op, a.allChannels)
	}
	if srv.RequirePass != "" {
		_ = def.set("resetpass", a.allChannels)
		_ = def.set(">"+srv.RequirePass, a.allChannels)
	}
	a.def = def
	a.users["default"] = def
	// ACLAppendUserForLoading validates each line (config.c reports
	// argv[index] with index into the merged rules, as Redis does), then
	// ACLLoadConfiguredUsers applies them; unknown commands only fail
	// there.
	seen := map[string]bool{}
	for _, line := range srv.Users {
		if len(line) == 0 {
			continue
		}
		if reason := validateUserLine(append([]string{"user"}, line...), seen, a.allChannels); reason != "" {
			return nil, errors.New(reason)
		}
	}
	for _, line := range srv.Users {
		if len(line) == 0 {
			continue
		}
		name := line[0]
		if hasSpaces(name) {
			return nil, errors.New("Spaces not allowed in ACL usernames")
		}
		ops, _, _ := mergeSelectorArgs(line[1:])
		u := a.users[name]
		if u == nil {
			u = newUser(name, a.allChannels)
		} else {
			_ = u.set("reset", a.allChannels)
		}
		for _, op := range ops {
			if err := u.set(op, a.allChannels); err != nil {
				return nil, fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", op, name, err)
			}
		}
		a.users[name] = u
	}
	return a, nil
}

// validateUserLine is ACLAppendUserForLoading as config.c reports it: the
// reason of a bad "user" line (full is the whole line, "user" first), ""
// if it is valid. seen holds the names of the lines before. The argument
// it names is full[index] with index into the merged rules, as Redis's.
func validateUserLine(full []string, seen map[string]bool, allChannels bool) string {
	name := full[1]
	if seen[name] {
		return fmt.Sprintf("Error in user declaration '%s': %s", name, errACLDuplicate)
	}
	seen[name] = true
	ops, bad, ok := mergeSelectorArgs(full[2:])
	if !ok {
		// Redis reports whatever errno was left: ENOENT in practice.
		return fmt.Sprintf("Error in user declaration '%s': %s", full[bad], errACLUnknown)
	}
	fake := newUser(name, allChannels)
	for j, op := range ops {
		if err := fake.set(op, allChannels); err != nil && err != errACLUnknown {
			return fmt.Sprintf("Error in user declaration '%s': %s", full[j], err)
		}
	}
	return ""
}

// lines is ACL LIST: "user <name> <rules>" for every user, by name.
func (a *aclState) lines() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, n := range a.users.names() {
		out = append(out, "user "+n+" "+a.users[n].describe())
	}
	return out
}

// defaultNoPassFlag tells whether the default user has the nopass flag
// (AUTH <password> is then an error, even when the user is off).
func (a *aclState) defaultNoPassFlag() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.def.flags&flagNoPass != 0
}

// defaultNoPass tells whether connections start authenticated (the default
// user is on and nopass), as authRequired and protected mode decide.
func (a *aclState) defaultNoPass() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.def.flags&flagNoPass != 0 && a.def.flags&flagDisabled == 0
}

// authenticate is ACLAuthenticateUser; a failure is logged.
// object is the command's name as the client sent it (the log's object).
func (c *client) authenticate(name, pass, object string) bool {
	a := c.d.acl
	a.mu.Lock()
	u := a.users[name]
	ok := u != nil && u.checkPassword(pass)
	if ok {
		c.u = u // read by other clients' ACL SETUSER/DELUSER under mu
	}
	a.mu.Unlock()
	if !ok {
		c.aclLog(aclDeniedAuth, name, object, strings.ToLower(object))
		return false
	}
	c.authed = true
	c.user = name
	return true
}

// aclCheck is the ACL part of processCommand: NOPERM (and a log entry)
// when the client's user may not run the command.
func (c *client) aclCheck(cmd *command, sub *subcommand, args []string) bool {
	name := aclName(cmd, sub, args)
	id, ok := aclLookup(name)
	if !ok {
		return true
	}
	a := c.d.acl
	a.mu.Lock()
	u := c.u
	if u == nil {
		u = a.def
	}
	res, idx := u.check(id, cmd.noAuth, args)
	a.mu.Unlock()
	switch res {
	case aclOK:
		return true
	case aclDeniedCmd:
		c.aclLog(res, c.user, name, name)
		c.w.Error("NOPERM this user has no permissions to run the '" + name + "' command")
	default:
		c.aclLog(res, c.user, args[idx], name)
		c.w.Error("NOPERM this user has no permissions to access one of the channels used as arguments")
	}
	return false
}

// commandSubArity is the arity of a COMMAND subcommand ("command|info").
func commandSubArity(name string) (int, bool) {
	for _, e := range commandInfos {
		for _, sub := range e.Elems[9].Elems {
			if sub.Elems[0].Str == name {
				return int(sub.Elems[1].Int), true
			}
		}
	}
	return 0, false
}

// aclName is the fullname of the command the ACL checks: COMMAND's
// subcommands are parsed by its handler, not by the table, but have ids of
// their own as in Redis.
func aclName(cmd *command, sub *subcommand, args []string) string {
	if cmd.name == "command" && len(args) >= 2 {
		n := "command|" + strings.ToLower(args[1])
		if _, ok := aclLookup(n); ok {
			return n
		}
	}
	return fullName(cmd.name, sub)
}

// aclLog is addACLLogEntry: a similar entry (same reason, context, object
// and user) less than 60 seconds old is updated and moved to the head.
// cmdName is the command the client info shows.
func (c *client) aclLog(reason int, username, object, cmdName string) {
	r := map[int]string{aclDeniedCmd: "command", aclDeniedKey: "key", aclDeniedAuth: "auth", aclDeniedChannel: "channel"}[reason]
	now := timeNow()
	e := &aclLogEntry{count: 1, reason: r, context: "toplevel", object: object, username: username, ctime: now,
		cinfo: c.d.clientInfo(c, c, cmdName)}
	a := c.d.acl
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, o := range a.log {
		if o.reason == e.reason && o.context == e.context && o.object == e.object && o.username == e.username &&
			now.Sub(o.ctime) <= 60*time.Second {
			o.count++
			o.ctime, o.cinfo = now, e.cinfo
			copy(a.log[1:i+1], a.log[:i])
			a.log[0] = o
			return
		}
	}
	a.log = append([]*aclLogEntry{e}, a.log...)
	if len(a.log) > a.logMax {
		a.log = a.log[:a.logMax]
	}
}

func aclLog(c *client, args []string) {
	a := c.d.acl
	count := int64(10)
	if len(args) == 3 {
		if strings.EqualFold(args[2], "reset") {
			a.mu.Lock()
			a.log = nil
			a.mu.Unlock()
			c.w.OK()
			return
		}
		n, ok := resp.ParseInt([]byte(args[2]))
		if !ok {
			c.w.Error(errNotInteger)
			return
		}
		if n < 0 {
			n = 0
		}
		count = n
	} else if len(args) > 3 {
		c.w.Error(errACLSubSyntax(args[1]))
		return
	}
	now := timeNow()
	a.mu.Lock()
	entries := a.log
	if int64(len(entries)) > count {
		entries = entries[:count]
	}
	entries = append([]*aclLogEntry(nil), entries...)
	a.mu.Unlock()
	c.w.ArrayLen(len(entries))
	for _, e := range entries {
		c.w.MapLen(7)
		c.w.BulkString("count")
		c.w.Int(int64(e.count))
		c.w.BulkString("reason")
		c.w.BulkString(e.reason)
		c.w.BulkString("context")
		c.w.BulkString(e.context)
		c.w.BulkString("object")
		c.w.BulkString(e.object)
		c.w.BulkString("username")
		c.w.BulkString(e.username)
		c.w.BulkString("age-seconds")
		c.w.Double(float64(now.Sub(e.ctime).Milliseconds()) / 1000)
		c.w.BulkString("client-info")
		c.w.BulkString(e.cinfo)
	}
}

func aclSetuser(c *client, args []string) {
	ops, bad, ok := mergeSelectorArgs(args[3:])
	if !ok {
		c.w.Error("ERR Unmatched parenthesis in acl selector starting at '" + args[3+bad] + "'.")
		return
	}
	name := args[2]
	if hasSpaces(name) {
		c.w.Error("ERR Usernames can't contain spaces or null characters")
		return
	}
	a := c.d.acl
	clients := c.d.clientsSorted() // lock order: clientsMu, then acl.mu
	a.mu.Lock()
	u := a.users[name]
	var temp *aclUser
	if u != nil {
		temp = u.clone()
	} else {
		temp = newUser(name, a.allChannels)
	}
	for _, op := range ops {
		if err := temp.set(op, a.allChannels); err != nil {
			a.mu.Unlock()
			c.w.Error("ERR Error in ACL SETUSER modifier '" + op + "': " + err.Error())
			return
		}
	}
	var kill []*client
	if u != nil {
		kill = c.d.pubsubToKill(clients, u, temp)
		*u = *temp
	} else {
		a.users[name] = temp
	}
	a.mu.Unlock()
	for _, cl := range kill {
		cl.conn.Close()
	}
	c.w.OK()
}

// pubsubToKill is ACLKillPubsubClientsIfNeeded: the subscribed clients of
// user old whose channels the new rules no longer allow. Called under
// acl.mu.
func (d *Daemon) pubsubToKill(clients []*client, old, upd *aclUser) []*client {
	var upcoming []string
	for _, s := range upd.selectors {
		if s.allChannels {
			return nil
		}
		upcoming = append(upcoming, s.channels...)
	}
	match := true
	for _, s := range old.selectors {
		if s.allChannels {
			match = false // all channels revoked (redis-sentinel 7.0.15 checks them)
		}
		for _, ch := range s.channels {
			if !slices.Contains(upcoming, ch) {
				match = false
			}
		}
	}
	if match {
		return nil
	}
	var out []*client
	for _, cl := range clients {
		cu := cl.u
		if cu == nil {
			cu = d.acl.def // never authenticated: the default user
		}
		if cu != old {
			continue
		}
		d.hub.mu.Lock()
		kill := false
		for p := range cl.psubs {
			kill = kill || !matchChannel(upcoming, p, true)
		}
		for ch := range cl.subs {
			kill = kill || !matchChannel(upcoming, ch, false)
		}
		d.hub.mu.Unlock()
		if kill {
			out = append(out, cl)
		}
	}
	return out
}

func aclDeluser(c *client, args []string) {
	for _, u := range args[2:] {
		if u == "default" {
			c.w.Error("ERR The 'default' user cannot be removed")
			return
		}
	}
	a := c.d.acl
	var gone []*aclUser
	clients := c.d.clientsSorted()
	a.mu.Lock()
	for _, n := range args[2:] {
		if u := a.users[n]; u != nil {
			delete(a.users, n)
			gone = append(gone, u)
		}
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

func aclDryrun(c *client, args []string) {
	a := c.d.acl
	a.mu.Lock()
	u := a.users[args[2]]
	a.mu.Unlock()
	if u == nil {
		c.w.Error("ERR User '" + args[2] + "' not found")
		return
	}
	cargs := args[3:]
	cmd := c.d.cmds[strings.ToLower(cargs[0])]
	var sub *subcommand
	if cmd != nil && len(cmd.subs) > 0 && len(cargs) >= 2 {
		if sub = cmd.sub(cargs[1]); sub == nil {
			cmd = nil
		}
	}
	if cmd == nil {
		c.w.Error("ERR Command '" + cargs[0] + "' not found")
		return
	}
	arity := cmd.arity
	if sub != nil {
		arity = sub.arity
	}
	if cmd.name == "command" && len(cargs) >= 2 {
		// COMMAND's subcommands, parsed by its handler: lookupCommand
		// finds them (and their arity) in the recorded table.
		a, ok := commandSubArity("command|" + strings.ToLower(cargs[1]))
		if !ok {
			c.w.Error("ERR Command '" + cargs[0] + "' not found")
			return
		}
		arity = a
	}
	name := aclName(cmd, sub, cargs)
	if !arityOK(arity, len(cargs)) {
		c.w.Error(errWrongArgs(name))
		return
	}
	id, ok := aclLookup(name)
	if !ok {
		c.w.OK()
		return
	}
	a.mu.Lock()
	res, idx := u.check(id, cmd.noAuth, cargs)
	a.mu.Unlock()
	switch res {
	case aclOK:
		c.w.OK()
	case aclDeniedCmd:
		c.w.BulkString("This user has no permissions to run the '" + name + "' command")
	default:
		c.w.BulkString("This user has no permissions to access the '" + cargs[idx] + "' channel")
	}
}

func aclGetuser(c *client, args []string) {
	a := c.d.acl
	a.mu.Lock()
	u := a.users[args[2]]
	if u == nil {
		a.mu.Unlock()
		c.w.Null()
		return
	}
	u = u.clone()
	a.mu.Unlock()
	var flags []string
	for _, f := range userFlagNames {
		if u.flags&f.flag != 0 {
			flags = append(flags, f.name)
		}
	}
	c.w.MapLen(6)
	c.w.BulkString("flags")
	c.w.SetLen(len(flags))
	for _, f := range flags {
		c.w.BulkString(f)
	}
	c.w.BulkString("passwords")
	c.w.ArrayLen(len(u.passwords))
	for _, p := range u.passwords {
		c.w.BulkString(p)
	}
	root := u.selectors[0]
	c.w.BulkString("commands")
	c.w.BulkString(root.commandRules())
	c.w.BulkString("keys")
	c.w.BulkString(root.keysString())
	c.w.BulkString("channels")
	c.w.BulkString(root.channelsString())
	c.w.BulkString("selectors")
	c.w.ArrayLen(len(u.selectors) - 1)
	for _, s := range u.selectors[1:] {
		c.w.MapLen(3)
		c.w.BulkString("commands")
		c.w.BulkString(s.commandRules())
		c.w.BulkString("keys")
		c.w.BulkString(s.keysString())
		c.w.BulkString("channels")
		c.w.BulkString(s.channelsString())
	}
}
