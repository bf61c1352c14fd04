package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"strings"
)

// Users with flags, SHA-256 password hashes and selectors (a root one plus
// any "(...)" selectors), as acl.c of Redis 7.0.15; a selector is a command
// bitmap over a Table (commands and subcommands), first-arg rules, key
// patterns and channel patterns. Rules are described back (ACL LIST,
// GETUSER, the config rewrite, ACL SAVE) with acl.c's best-fit category
// algorithm. The single-command rules follow the table's order; Redis's
// follow its command dict's iteration order, which depends on a hash seed
// drawn at start-up, so it varies from one run of redis-server to the next.

type keyPattern struct {
	pat   string
	flags int
}

func (k keyPattern) String() string {
	switch k.flags {
	case keyAll:
		return "~" + k.pat
	case KeyRead:
		return "%R~" + k.pat
	default:
		return "%W~" + k.pat
	}
}

type selector struct {
	t           *Table
	root        bool
	allowed     []bool
	future      bool // the reserved bit only +@all sets
	allCommands bool // SELECTOR_FLAG_ALLCOMMANDS
	firstArgs   map[int][]string
	allKeys     bool
	keys        []keyPattern
	allChannels bool
	channels    []string
}

func newSelector(t *Table, root, allChannels bool) *selector {
	return &selector{t: t, root: root, allowed: make([]bool, len(t.cmds)), allChannels: allChannels}
}

func (s *selector) clone() *selector {
	n := *s
	n.allowed = append([]bool(nil), s.allowed...)
	n.keys = append([]keyPattern(nil), s.keys...)
	n.channels = append([]string(nil), s.channels...)
	if s.firstArgs != nil {
		n.firstArgs = map[int][]string{}
		for k, v := range s.firstArgs {
			n.firstArgs[k] = append([]string(nil), v...)
		}
	}
	return &n
}

// Errors of ACLSetUser, with ACLSetUserStringError's texts.
var (
	errACLUnknown     = errors.New("Unknown command or category name in ACL")
	errACLSyntax      = errors.New("Syntax error")
	errACLKeysAll     = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errACLChanAll     = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errACLNoPass      = errors.New("The password you are trying to remove from the user does not exist")
	errACLBadHash     = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errACLDuplicate   = errors.New("Duplicate user found. A user can only be defined once in config files")
	errACLSubFirstArg = errors.New("Allowing first-arg of a subcommand is not supported")
)

func (s *selector) setBit(id int, v bool) {
	s.allowed[id] = v
	if !v {
		s.allCommands = false
	}
}

// changePerm is ACLChangeSelectorPerm.
func (s *selector) changePerm(id int, allow bool) {
	s.setBit(id, allow)
	delete(s.firstArgs, id)
	for _, sub := range s.t.cmds[id].subs {
		s.setBit(sub, allow)
	}
}

// setCategory is ACLSetSelectorCommandBitsForCategory.
func (s *selector) setCategory(flag uint32, allow bool) {
	for i, c := range s.t.cmds {
		if c.parent >= 0 {
			continue
		}
		if c.cats&flag != 0 {
			s.changePerm(i, allow)
		}
		for _, sub := range c.subs {
			if s.t.cmds[sub].cats&flag != 0 {
				s.changePerm(sub, allow)
			}
		}
	}
}

func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 || isSpace(s[i]) {
			return true
		}
	}
	return false
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// set is ACLSetSelector.
func (s *selector) set(op string) error {
	lower := strings.ToLower(op)
	switch {
	case lower == "allkeys" || op == "~*":
		s.allKeys, s.keys = true, nil
	case lower == "resetkeys":
		s.allKeys, s.keys = false, nil
	case lower == "allchannels" || op == "&*":
		s.allChannels, s.channels = true, nil
	case lower == "resetchannels":
		s.allChannels, s.channels = false, nil
	case lower == "allcommands" || lower == "+@all":
		for i := range s.allowed {
			s.allowed[i] = true
		}
		s.future, s.allCommands, s.firstArgs = true, true, nil
	case lower == "nocommands" || lower == "-@all":
		for i := range s.allowed {
			s.allowed[i] = false
		}
		s.future, s.allCommands, s.firstArgs = false, false, nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errACLKeysAll
		}
		flags, off := 0, 1
		if op[0] == '%' {
			for ; off < len(op); off++ {
				c := op[off]
				if (c == 'R' || c == 'r') && flags&KeyRead == 0 {
					flags |= KeyRead
				} else if (c == 'W' || c == 'w') && flags&KeyWrite == 0 {
					flags |= KeyWrite
				} else if c == '~' {
					off++
					break
				} else {
					return errACLSyntax
				}
			}
			if flags == 0 { // "%" or "%~x": redis-sentinel 7.0.15 refuses them
				return errACLSyntax
			}
		} else {
			flags = keyAll
		}
		pat := ""
		if off <= len(op) {
			pat = op[off:]
		}
		if hasSpaces(pat) {
			return errACLSyntax
		}
		found := false
		for i := range s.keys {
			if s.keys[i].pat == pat {
				s.keys[i].flags |= flags
				found = true
				break
			}
		}
		if !found {
			s.keys = append(s.keys, keyPattern{pat, flags})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return errACLChanAll
		}
		if hasSpaces(op[1:]) {
			return errACLSyntax
		}
		found := false
		for _, c := range s.channels {
			found = found || c == op[1:]
		}
		if !found {
			s.channels = append(s.channels, op[1:])
		}
		s.allChannels = false
	case op[0] == '+' && !strings.HasPrefix(op, "+@"):
		i := strings.LastIndexByte(op, '|')
		if i < 0 {
			id, ok := s.t.Lookup(op[1:])
			if !ok {
				return errACLUnknown
			}
			s.changePerm(id, true)
			return nil
		}
		name, sub := op[1:i], op[i+1:]
		id, ok := s.t.Lookup(name)
		if !ok {
			return errACLUnknown
		}
		if s.t.cmds[id].parent >= 0 {
			return errACLSubFirstArg
		}
		if sub == "" {
			return errACLSyntax
		}
		if len(s.t.cmds[id].subs) > 0 {
			sid, ok := s.t.Lookup(op[1:])
			if !ok {
				return errACLUnknown
			}
			s.changePerm(sid, true)
			return nil
		}
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		for _, a := range s.firstArgs[id] {
			if strings.EqualFold(a, sub) {
				return nil
			}
		}
		s.firstArgs[id] = append(s.firstArgs[id], sub)
	case op[0] == '-' && !strings.HasPrefix(op, "-@"):
		id, ok := s.t.Lookup(op[1:])
		if !ok {
			return errACLUnknown
		}
		s.changePerm(id, false)
	case strings.HasPrefix(op, "+@") || strings.HasPrefix(op, "-@"):
		flag := categoryFlag(op[2:])
		if flag == 0 {
			return errACLUnknown
		}
		s.setCategory(flag, op[0] == '+')
	default:
		return errACLSyntax
	}
	return nil
}

// countCategory is ACLCountCategoryBitsForSelector.
func (s *selector) countCategory(flag uint32) (on, off int) {
	for i, c := range s.t.cmds {
		if c.cats&flag != 0 {
			if s.allowed[i] {
				on++
			} else {
				off++
			}
		}
	}
	return on, off
}

// commandRules is ACLDescribeSelectorCommandRules.
func (s *selector) commandRules() string {
	var rules []string
	fake := newSelector(s.t, false, false)
	additive := !s.future
	if additive {
		rules = append(rules, "-@all")
		_ = fake.set("-@all")
	} else {
		rules = append(rules, "+@all")
		_ = fake.set("+@all")
	}
	temp := newSelector(s.t, false, false)
	copy(temp.allowed, s.allowed)
	applied := make([]bool, len(Categories))
	for {
		best, mindiff, maxsame := -1, int(^uint(0)>>1), 0
		for j := range Categories {
			if applied[j] {
				continue
			}
			on, off := temp.countCategory(1 << j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
				best, mindiff, maxsame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		temp.setCategory(1<<best, !additive)
		fake.setCategory(1<<best, additive)
		if additive {
			rules = append(rules, "+@"+Categories[best])
		} else {
			rules = append(rules, "-@"+Categories[best])
		}
		applied[best] = true
	}
	var single func(ids []int)
	single = func(ids []int) {
		for _, id := range ids {
			user := s.allowed[id]
			if user != fake.allowed[id] {
				if user {
					rules = append(rules, "+"+s.t.cmds[id].name)
				} else {
					rules = append(rules, "-"+s.t.cmds[id].name)
				}
				fake.changePerm(id, user)
			}
			single(s.t.cmds[id].subs)
			if !user {
				for _, a := range s.firstArgs[id] {
					rules = append(rules, "+"+s.t.cmds[id].name+"|"+a)
				}
			}
		}
	}
	var top []int
	for i, c := range s.t.cmds {
		if c.parent < 0 {
			top = append(top, i)
		}
	}
	single(top)
	return strings.Join(rules, " ")
}

func (s *selector) keysString() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

func (s *selector) channelsString() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

// describe is ACLDescribeSelector.
func (s *selector) describe() string {
	var b strings.Builder
	if k := s.keysString(); k != "" {
		b.WriteString(k + " ")
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		if ch := s.channelsString(); ch != "" {
			b.WriteString(ch + " ")
		}
	}
	b.WriteString(s.commandRules())
	return b.String()
}

// User flags, in ACLUserFlags order.
const (
	flagEnabled = 1 << iota
	flagDisabled
	flagNoPass
	flagSkipSanitize
	flagSanitize
)

var userFlagNames = []struct {
	flag int
	name string
}{{flagEnabled, "on"}, {flagDisabled, "off"}, {flagNoPass, "nopass"},
	{flagSkipSanitize, "skip-sanitize-payload"}, {flagSanitize, "sanitize-payload"}}

// User is one ACL user (acl.c's user). Binaries keep a *User per
// authenticated connection: ACL SETUSER changes the user in place, so the
// pointer stays valid until ACL DELUSER (or ACL LOAD) removes it.
type User struct {
	t         *Table
	name      string
	flags     int
	passwords []string // hex SHA-256, in insertion order
	selectors []*selector
}

func newUser(t *Table, name string, allChannels bool) *User {
	return &User{t: t, name: name, flags: flagDisabled, selectors: []*selector{newSelector(t, true, allChannels)}}
}

func (u *User) clone() *User {
	n := &User{t: u.t, name: u.name, flags: u.flags, passwords: append([]string(nil), u.passwords...)}
	for _, s := range u.selectors {
		n.selectors = append(n.selectors, s.clone())
	}
	return n
}

func hashPassword(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if !(h[i] >= '0' && h[i] <= '9' || h[i] >= 'a' && h[i] <= 'f') {
			return false
		}
	}
	return true
}

// set is ACLSetUser; allChannels is acl-pubsub-default.
func (u *User) set(op string, allChannels bool) error {
	if op == "" {
		return nil
	}
	lower := strings.ToLower(op)
	switch {
	case lower == "on":
		u.flags = u.flags&^flagDisabled | flagEnabled
	case lower == "off":
		u.flags = u.flags&^flagEnabled | flagDisabled
	case lower == "skip-sanitize-payload":
		u.flags = u.flags&^flagSanitize | flagSkipSanitize
	case lower == "sanitize-payload":
		u.flags = u.flags&^flagSkipSanitize | flagSanitize
	case lower == "nopass":
		u.flags |= flagNoPass
		u.passwords = nil
	case lower == "resetpass":
		u.flags &^= flagNoPass
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = hashPassword(op[1:])
		} else {
			if !validHash(op[1:]) {
				return errACLBadHash
			}
			h = op[1:]
		}
		found := false
		for _, p := range u.passwords {
			found = found || p == h
		}
		if !found {
			u.passwords = append(u.passwords, h)
		}
		u.flags &^= flagNoPass
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = hashPassword(op[1:])
		} else {
			if !validHash(op[1:]) {
				return errACLBadHash
			}
			h = op[1:]
		}
		for i, p := range u.passwords {
			if p == h {
				u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
				return nil
			}
		}
		return errACLNoPass
	case op[0] == '(' && op[len(op)-1] == ')':
		s := newSelector(u.t, false, allChannels)
		for _, a := range splitArgs(op[1 : len(op)-1]) {
			if err := s.set(a); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case lower == "clearselectors":
		u.selectors = u.selectors[:1]
	case lower == "reset":
		_ = u.set("resetpass", allChannels)
		_ = u.set("resetkeys", allChannels)
		_ = u.set("resetchannels", allChannels)
		if allChannels {
			_ = u.set("allchannels", allChannels)
		}
		_ = u.set("off", allChannels)
		_ = u.set("sanitize-payload", allChannels)
		_ = u.set("clearselectors", allChannels)
		_ = u.set("-@all", allChannels)
	default:
		return u.selectors[0].set(op)
	}
	return nil
}

// splitArgs splits a selector's body on spaces (sdssplitargs without
// quoting, which selector rules do not use).
func splitArgs(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r < 128 && isSpace(byte(r)) })
}

// mergeSelectorArgs is ACLMergeSelectorArguments: "(a" "b)" become "(a b)".
// ok is false (with the index of the opening argument) on an unmatched
// parenthesis.
func mergeSelectorArgs(args []string) (out []string, bad int, ok bool) {
	open := -1
	var sel string
	for j, op := range args {
		if open < 0 && strings.HasPrefix(op, "(") && !strings.HasSuffix(op, ")") {
			sel, open = op, j
			continue
		}
		if open >= 0 {
			sel += " " + op
			if strings.HasSuffix(op, ")") {
				open = -1
				out = append(out, sel)
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open, false
	}
	return out, 0, true
}

// Describe is ACLDescribeUser (without the "user <name> " prefix).
func (u *User) Describe() string {
	var b strings.Builder
	for _, f := range userFlagNames {
		if u.flags&f.flag != 0 {
			b.WriteString(f.name + " ")
		}
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range u.selectors {
		if s.root {
			b.WriteString(s.describe())
		} else {
			b.WriteString(" (" + s.describe() + ")")
		}
	}
	return b.String()
}

func (u *User) CheckPassword(pass string) bool {
	if u.flags&flagDisabled != 0 {
		return false
	}
	if u.flags&flagNoPass != 0 {
		return true
	}
	h := hashPassword(pass)
	ok := false
	for _, p := range u.passwords {
		if subtle.ConstantTimeCompare([]byte(p), []byte(h)) == 1 {
			ok = true
		}
	}
	return ok
}

// Name is the user's name.
func (u *User) Name() string { return u.name }

// Enabled reports the "on" flag.
func (u *User) Enabled() bool { return u.flags&flagDisabled == 0 }

// NoPass reports the nopass flag.
func (u *User) NoPass() bool { return u.flags&flagNoPass != 0 }
