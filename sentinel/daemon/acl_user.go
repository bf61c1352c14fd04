package daemon

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/vigil-kv/vigil/sentinel"
)

// The ACL of sentinel mode, as acl.c of Redis 7.0.15: users with flags,
// SHA-256 password hashes and selectors (a root one plus any "(...)"
// selectors); a selector is a command bitmap over the sentinel's command
// table (commands and subcommands, the ids of acl.c), first-arg rules, key
// patterns and channel patterns. Rules are described back (ACL LIST,
// GETUSER, the config rewrite) with acl.c's best-fit category algorithm.
// The single-command rules follow the command table's order; Redis's follow
// its command dict's iteration order, which depends on a hash seed drawn at
// start-up, so it varies from one run of redis-sentinel to the next.

// aclCmd is one entry of the ACL's view of the command table.
type aclCmd struct {
	name   string // fullname: "ping", "client|id"
	cats   uint32 // bit i = aclCategories[i]
	parent int    // index of the container command, -1 for top-level
	subs   []int
}

var (
	aclCmdsOnce sync.Once
	aclCmds     []aclCmd
	aclCmdIndex map[string]int
)

func aclTable() []aclCmd {
	aclCmdsOnce.Do(func() {
		aclCmdIndex = map[string]int{}
		for _, n := range commandListNames() {
			var cats uint32
			for i, cat := range aclCategories {
				if strings.Contains(n.acl, ","+cat+",") {
					cats |= 1 << i
				}
			}
			e := aclCmd{name: n.name, cats: cats, parent: -1}
			if p, _, ok := strings.Cut(n.name, "|"); ok {
				e.parent = aclCmdIndex[p]
				aclCmds[e.parent].subs = append(aclCmds[e.parent].subs, len(aclCmds))
			}
			aclCmdIndex[n.name] = len(aclCmds)
			aclCmds = append(aclCmds, e)
		}
	})
	return aclCmds
}

// aclLookup is ACLLookupCommand: "name" or "container|sub", any case.
func aclLookup(name string) (int, bool) {
	aclTable()
	i, ok := aclCmdIndex[strings.ToLower(name)]
	return i, ok
}

func categoryFlag(name string) uint32 {
	for i, c := range aclCategories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// Key pattern permissions (ACL_READ_PERMISSION, ACL_WRITE_PERMISSION).
const (
	keyRead  = 1
	keyWrite = 2
	keyAll   = keyRead | keyWrite
)

type keyPattern struct {
	pat   string
	flags int
}

func (k keyPattern) String() string {
	switch k.flags {
	case keyAll:
		return "~" + k.pat
	case keyRead:
		return "%R~" + k.pat
	default:
		return "%W~" + k.pat
	}
}

type aclSelector struct {
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

func newSelector(root, allChannels bool) *aclSelector {
	return &aclSelector{root: root, allowed: make([]bool, len(aclTable())), allChannels: allChannels}
}

func (s *aclSelector) clone() *aclSelector {
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

func (s *aclSelector) setBit(id int, v bool) {
	s.allowed[id] = v
	if !v {
		s.allCommands = false
	}
}

// changePerm is ACLChangeSelectorPerm.
func (s *aclSelector) changePerm(id int, allow bool) {
	s.setBit(id, allow)
	delete(s.firstArgs, id)
	for _, sub := range aclCmds[id].subs {
		s.setBit(sub, allow)
	}
}

// setCategory is ACLSetSelectorCommandBitsForCategory.
func (s *aclSelector) setCategory(flag uint32, allow bool) {
	for i, c := range aclCmds {
		if c.parent >= 0 {
			continue
		}
		if c.cats&flag != 0 {
			s.changePerm(i, allow)
		}
		for _, sub := range c.subs {
			if aclCmds[sub].cats&flag != 0 {
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
func (s *aclSelector) set(op string) error {
	aclTable()
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
				if (c == 'R' || c == 'r') && flags&keyRead == 0 {
					flags |= keyRead
				} else if (c == 'W' || c == 'w') && flags&keyWrite == 0 {
					flags |= keyWrite
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
			id, ok := aclLookup(op[1:])
			if !ok {
				return errACLUnknown
			}
			s.changePerm(id, true)
			return nil
		}
		name, sub := op[1:i], op[i+1:]
		id, ok := aclLookup(name)
		if !ok {
			return errACLUnknown
		}
		if aclCmds[id].parent >= 0 {
			return errACLSubFirstArg
		}
		if sub == "" {
			return errACLSyntax
		}
		if len(aclCmds[id].subs) > 0 {
			sid, ok := aclLookup(op[1:])
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
		id, ok := aclLookup(op[1:])
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
func (s *aclSelector) countCategory(flag uint32) (on, off int) {
	for i, c := range aclCmds {
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
func (s *aclSelector) commandRules() string {
	var rules []string
	fake := newSelector(false, false)
	additive := !s.future
	if additive {
		rules = append(rules, "-@all")
		_ = fake.set("-@all")
	} else {
		rules = append(rules, "+@all")
		_ = fake.set("+@all")
	}
	temp := newSelector(false, false)
	copy(temp.allowed, s.allowed)
	applied := make([]bool, len(aclCategories))
	for {
		best, mindiff, maxsame := -1, int(^uint(0)>>1), 0
		for j := range aclCategories {
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
			rules = append(rules, "+@"+aclCategories[best])
		} else {
			rules = append(rules, "-@"+aclCategories[best])
		}
		applied[best] = true
	}
	var single func(ids []int)
	single = func(ids []int) {
		for _, id := range ids {
			user := s.allowed[id]
			if user != fake.allowed[id] {
				if user {
					rules = append(rules, "+"+aclCmds[id].name)
				} else {
					rules = append(rules, "-"+aclCmds[id].name)
				}
				fake.changePerm(id, user)
			}
			single(aclCmds[id].subs)
			if !user {
				for _, a := range s.firstArgs[id] {
					rules = append(rules, "+"+aclCmds[id].name+"|"+a)
				}
			}
		}
	}
	var top []int
	for i, c := range aclCmds {
		if c.parent < 0 {
			top = append(top, i)
		}
	}
	single(top)
	return strings.Join(rules, " ")
}

func (s *aclSelector) keysString() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.keys))
	for i, k := range s.keys {
		parts[i] = k.String()
	}
	return strings.Join(parts, " ")
}

func (s *aclSelector) channelsString() string {
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
func (s *aclSelector) describe() string {
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

type aclUser struct {
	name      string
	flags     int
	passwords []string // hex SHA-256, in insertion order
	selectors []*aclSelector
}

func newUser(name string, allChannels bool) *aclUser {
	return &aclUser{name: name, flags: flagDisabled, selectors: []*aclSelector{newSelector(true, allChannels)}}
}

func (u *aclUser) clone() *aclUser {
	n := &aclUser{name: u.name, flags: u.flags, passwords: append([]string(nil), u.passwords...)}
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
func (u *aclUser) set(op string, allChannels bool) error {
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
		s := newSelector(false, allChannels)
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

// describe is ACLDescribeUser (without the "user <name> " prefix).
func (u *aclUser) describe() string {
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

func (u *aclUser) checkPassword(pass string) bool {
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

// ACL check results, as ACL_DENIED_*; higher wins among selectors.
const (
	aclOK = iota
	aclDeniedCmd
	aclDeniedKey
	aclDeniedAuth
	aclDeniedChannel
)

// channelsOf is getChannelsFromCommand for the sentinel's commands: the
// positions of the channel arguments checked by the ACL, and whether they
// are patterns.
func channelsOf(id int, args []string) (pos []int, pattern bool) {
	switch aclCmds[id].name {
	case "subscribe":
		for i := 1; i < len(args); i++ {
			pos = append(pos, i)
		}
	case "psubscribe":
		for i := 1; i < len(args); i++ {
			pos = append(pos, i)
		}
		pattern = true
	case "publish":
		pos = []int{1}
	}
	return pos, pattern
}

func matchChannel(list []string, ch string, pattern bool) bool {
	for _, p := range list {
		if pattern {
			if p == ch {
				return true
			}
		} else if sentinel.StringMatch(p, ch, false) {
			return true
		}
	}
	return false
}

// checkCmd is ACLSelectorCheckCmd; idx is the position of the denied
// channel.
func (s *aclSelector) checkCmd(id int, noAuth bool, args []string) (res, idx int) {
	if !s.allCommands && !noAuth && !s.allowed[id] {
		fa := s.firstArgs[id]
		if len(args) < 2 || len(fa) == 0 {
			return aclDeniedCmd, 0
		}
		at := 1
		if aclCmds[id].parent >= 0 {
			at = 2
		}
		found := false
		for _, a := range fa {
			if at < len(args) && strings.EqualFold(args[at], a) {
				found = true
				break
			}
		}
		if !found {
			return aclDeniedCmd, 0
		}
	}
	if !s.allChannels {
		pos, pattern := channelsOf(id, args)
		for _, p := range pos {
			if !matchChannel(s.channels, args[p], pattern) {
				return aclDeniedChannel, p
			}
		}
	}
	return aclOK, 0
}

// check is ACLCheckAllUserCommandPerm.
func (u *aclUser) check(id int, noAuth bool, args []string) (res, idx int) {
	res = aclDeniedCmd
	for _, s := range u.selectors {
		r, i := s.checkCmd(id, noAuth, args)
		if r == aclOK {
			return aclOK, 0
		}
		if r > res || (r == res && i > idx) {
			res, idx = r, i
		}
	}
	return res, idx
}

// users is the set of users (the Users rax), sorted by name when listed.
type users map[string]*aclUser

func (us users) names() []string {
	out := make([]string, 0, len(us))
	for n := range us {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
