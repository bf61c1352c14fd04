package acl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Store is one process's ACL: the users (acl.c's Users rax), the default
// user (DefaultUser) and the ACL log. It holds no lock: vigil-server uses it
// under its execution lock, vigil-sentinel under a mutex of its own.
type Store struct {
	t     *Table
	users map[string]*User
	def   *User
	// AllChannels is acl-pubsub-default allchannels: new users and selectors
	// start with &* (Redis 7.0's default is resetchannels).
	AllChannels bool
	// Dir is the directory a relative ACL file name is in (Redis's
	// working directory is its dir); "" is the process's.
	Dir string
	// LogMax is acllog-max-len.
	LogMax int
	log    []*LogEntry
}

// NewStore is ACLInit: the default user alone, "on nopass ~* &* +@all".
func NewStore(t *Table) *Store {
	s := &Store{t: t, users: map[string]*User{}, LogMax: 128}
	s.def = s.createDefault()
	s.users["default"] = s.def
	return s
}

// createDefault is ACLCreateDefaultUser.
func (s *Store) createDefault() *User {
	def := newUser(s.t, "default", s.AllChannels)
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		_ = def.set(op, s.AllChannels)
	}
	return def
}

// Table is the command table the store's users are checked against.
func (s *Store) Table() *Table { return s.t }

// Default is the default user.
func (s *Store) Default() *User { return s.def }

// User is the user named name, or nil.
func (s *Store) User(name string) *User { return s.users[name] }

// Names lists the users by name (ACL USERS).
func (s *Store) Names() []string {
	out := make([]string, 0, len(s.users))
	for n := range s.users {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lines is ACL LIST: "user <name> <rules>" for every user, by name.
func (s *Store) Lines() []string {
	var out []string
	for _, n := range s.Names() {
		out = append(out, "user "+n+" "+s.users[n].Describe())
	}
	return out
}

// SetRequirePass is ACLUpdateDefaultUserPassword: requirepass is the
// default user's only password ("" makes it nopass).
func (s *Store) SetRequirePass(pass string) {
	_ = s.def.set("resetpass", s.AllChannels)
	if pass != "" {
		_ = s.def.set(">"+pass, s.AllChannels)
	} else {
		_ = s.def.set("nopass", s.AllChannels)
	}
}

// LoadConfig applies the configuration's users at start-up: requirepass
// sets the default user's password (ACLUpdateDefaultUserPassword), then the
// "user" lines (name first) are validated (ACLAppendUserForLoading, with
// config.c's texts) and applied in order (ACLLoadConfiguredUsers), a "user
// default" line resetting the default user first.
func (s *Store) LoadConfig(requirepass string, lines [][]string) error {
	if requirepass != "" {
		s.SetRequirePass(requirepass)
	}
	seen := map[string]bool{}
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		if reason := s.ValidateUserLine(append([]string{"user"}, line...), seen); reason != "" {
			return errors.New(reason)
		}
	}
	for _, line := range lines {
		if len(line) == 0 {
			continue
		}
		name := line[0]
		if hasSpaces(name) {
			return errors.New("Spaces not allowed in ACL usernames")
		}
		ops, _, _ := mergeSelectorArgs(line[1:])
		u := s.users[name]
		if u == nil {
			u = newUser(s.t, name, s.AllChannels)
		} else {
			_ = u.set("reset", s.AllChannels)
		}
		for _, op := range ops {
			if err := u.set(op, s.AllChannels); err != nil {
				return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", op, name, err)
			}
		}
		s.users[name] = u
	}
	return nil
}

// ValidateUserLine is ACLAppendUserForLoading as config.c reports it: the
// reason of a bad "user" line (full is the whole line, "user" first), ""
// if it is valid. seen holds the names of the lines before. The argument
// it names is full[index] with index into the merged rules, as Redis's.
func (s *Store) ValidateUserLine(full []string, seen map[string]bool) string {
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
	fake := newUser(s.t, name, s.AllChannels)
	for j, op := range ops {
		if err := fake.set(op, s.AllChannels); err != nil && err != errACLUnknown {
			return fmt.Sprintf("Error in user declaration '%s': %s", full[j], err)
		}
	}
	return ""
}

// Authenticate is ACLAuthenticateUser's check: the user if name exists, is
// on and pass is one of its passwords (or it is nopass), else nil.
func (s *Store) Authenticate(name, pass string) *User {
	u := s.users[name]
	if u == nil || !u.CheckPassword(pass) {
		return nil
	}
	return u
}

// KillFunc tells whether a subscriber with these channels and patterns
// (of the user an ACL change touched) must be disconnected.
type KillFunc func(channels, patterns []string) bool

// SetUser is ACL SETUSER: the rules are applied to a copy of the user (a
// new one if name does not exist) and, if all apply, the copy replaces the
// user in place. errMsg is Redis's reply on failure ("ERR ..."). kill is
// ACLKillPubsubClientsIfNeeded's test for the subscribers of u when the
// change revoked channels, nil otherwise.
func (s *Store) SetUser(name string, args []string) (u *User, kill KillFunc, errMsg string) {
	ops, bad, ok := mergeSelectorArgs(args)
	if !ok {
		return nil, nil, "ERR Unmatched parenthesis in acl selector starting at '" + args[bad] + "'."
	}
	if hasSpaces(name) {
		return nil, nil, "ERR Usernames can't contain spaces or null characters"
	}
	u = s.users[name]
	var temp *User
	if u != nil {
		temp = u.clone()
	} else {
		temp = newUser(s.t, name, s.AllChannels)
	}
	for _, op := range ops {
		if err := temp.set(op, s.AllChannels); err != nil {
			return nil, nil, "ERR Error in ACL SETUSER modifier '" + op + "': " + err.Error()
		}
	}
	if u != nil {
		kill = pubsubKill(u, temp)
		*u = *temp
		return u, kill, ""
	}
	s.users[name] = temp
	return temp, nil, ""
}

// pubsubKill is the first half of ACLKillPubsubClientsIfNeeded: nil when
// the updated user keeps every channel the old one had, else the test of
// each subscriber of the old user.
func pubsubKill(old, upd *User) KillFunc {
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
			match = false // all channels revoked (redis 7.0.15 checks them)
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
	return func(channels, patterns []string) bool {
		for _, p := range patterns {
			if !matchChannel(upcoming, p, true) {
				return true
			}
		}
		for _, ch := range channels {
			if !matchChannel(upcoming, ch, false) {
				return true
			}
		}
		return false
	}
}

// DelUser is ACL DELUSER: it removes the named users and returns the ones
// that existed (whose clients the binary disconnects, as
// ACLFreeUserAndKillClients). errMsg is set when "default" is named.
func (s *Store) DelUser(names []string) (gone []*User, errMsg string) {
	for _, n := range names {
		if n == "default" {
			return nil, "ERR The 'default' user cannot be removed"
		}
	}
	for _, n := range names {
		if u := s.users[n]; u != nil {
			delete(s.users, n)
			gone = append(gone, u)
		}
	}
	return gone, ""
}

// LoadFile is ACLLoadFromFile: the users of an ACL file replace the current
// ones, all or nothing. The default user keeps its identity (its new rules
// are copied into it); gone are the other users replaced, whose clients the
// binary disconnects. errMsg is Redis's reply text (without "ERR ").
func (s *Store) LoadFile(path string) (gone []*User, errMsg string) {
	data, err := os.ReadFile(s.inDir(path))
	if err != nil {
		return nil, fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, redisutil.Strerror(err))
	}
	var errs strings.Builder
	users := map[string]*User{}
	for i, line := range strings.Split(string(data), "\n") {
		linenum := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ") // sdssplitlen on " ": empty fields stay
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", path, linenum)
			continue
		}
		if hasSpaces(argv[1]) || argv[1] == "" {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", path, linenum, argv[1])
			continue
		}
		if users[argv[1]] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", argv[1], linenum)
			continue
		}
		u := newUser(s.t, argv[1], s.AllChannels)
		users[argv[1]] = u
		ops, _, ok := mergeSelectorArgs(argv[2:])
		if !ok {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path, linenum)
			continue
		}
		syntaxErr := false
		for _, op := range ops {
			op = strings.Trim(op, "\t\r\n")
			if err := u.set(op, s.AllChannels); err != nil {
				if err == errACLUnknown {
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", path, linenum, op, err)
				} else if !syntaxErr {
					fmt.Fprintf(&errs, "%s:%d: %s. ", path, linenum, err)
					syntaxErr = true
				}
			}
		}
	}
	if errs.Len() > 0 {
		return nil, errs.String() + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	}
	for n, u := range s.users {
		if n != "default" {
			gone = append(gone, u)
		}
	}
	newDef := users["default"]
	if newDef == nil {
		newDef = s.createDefault()
	}
	*s.def = *newDef
	users["default"] = s.def
	s.users = users
	return gone, ""
}

// SaveFile is ACLSaveToFile: every user as ACL LIST shows it, written to a
// temporary file and renamed over path.
func (s *Store) SaveFile(path string, now time.Time) error {
	path = s.inDir(path)
	var b strings.Builder
	for _, l := range s.Lines() {
		b.WriteString(l + "\n")
	}
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf("%s.tmp-%d-%d", filepath.Base(path), os.Getpid(), now.UnixMilli()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("acl save: %w", err)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("acl save: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("acl save: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("acl save: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("acl save: %w", err)
	}
	return nil
}

// inDir is path, relative to Dir when it is relative.
func (s *Store) inDir(path string) string {
	if s.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(s.Dir, path)
}

// LogEntry is one ACL LOG entry (acl.c's ACLLogEntry, Redis 7.0.15's
// seven fields).
type LogEntry struct {
	Count      int
	Reason     string // auth, command, key, channel
	Context    string // toplevel, multi, lua
	Object     string
	Username   string
	Created    time.Time
	ClientInfo string
}

// AddLog is addACLLogEntry: a similar entry (same reason, context, object
// and user) less than 60 seconds old is updated and moved to the head; the
// log keeps LogMax entries.
func (s *Store) AddLog(now time.Time, reason Result, context, object, username, clientInfo string) {
	e := &LogEntry{Count: 1, Reason: reason.Reason(), Context: context, Object: object, Username: username,
		Created: now, ClientInfo: clientInfo}
	for i, o := range s.log {
		if o.Reason == e.Reason && o.Context == e.Context && o.Object == e.Object && o.Username == e.Username &&
			now.Sub(o.Created) <= 60*time.Second {
			o.Count++
			o.Created, o.ClientInfo = now, e.ClientInfo
			copy(s.log[1:i+1], s.log[:i])
			s.log[0] = o
			return
		}
	}
	s.log = append([]*LogEntry{e}, s.log...)
	if len(s.log) > s.LogMax {
		s.log = s.log[:s.LogMax]
	}
}

// Log returns copies of the newest count entries, newest first.
func (s *Store) Log(count int) []LogEntry {
	n := min(count, len(s.log))
	out := make([]LogEntry, n)
	for i := range n {
		out[i] = *s.log[i]
	}
	return out
}

// ResetLog is ACL LOG RESET.
func (s *Store) ResetLog() { s.log = nil }

// TrimLog applies a lowered acllog-max-len (CONFIG SET).
func (s *Store) TrimLog() {
	if len(s.log) > s.LogMax {
		s.log = s.log[:max(s.LogMax, 0)]
	}
}
