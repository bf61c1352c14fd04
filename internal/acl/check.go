package acl

import (
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Result is the outcome of a permission check, as acl.c's ACL_OK and
// ACL_DENIED_*; among selectors the higher denial wins.
type Result int

// Check results.
const (
	OK Result = iota
	DeniedCmd
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// Reason is the ACL LOG reason of a denial.
func (r Result) Reason() string {
	switch r {
	case DeniedCmd:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedAuth:
		return "auth"
	case DeniedChannel:
		return "channel"
	}
	return "unknown"
}

// Key access a command's key spec declares (CMD_KEY_ACCESS for KeyRead;
// CMD_KEY_INSERT, DELETE or UPDATE for KeyWrite). A key with neither (EXISTS,
// TYPE: RO without access) matches any pattern, as in Redis.
const (
	KeyRead  = 1
	KeyWrite = 2
	keyAll   = KeyRead | KeyWrite
)

// KeyRef is one key argument of a command: its position in argv and its
// access (KeyRead|KeyWrite), as getKeysResult's keyReference.
type KeyRef struct {
	Pos    int
	Access int
}

// KeyFunc returns the keys of the command being checked (argv positions)
// and whether the command has keys at all (doesCommandHaveKeys). It is
// called at most once per check, and only when a selector restricts keys.
type KeyFunc func() (keys []KeyRef, hasKeys bool)

// channelsOf is getChannelsFromCommand (db.c's commands_with_channels):
// the argv positions of the channels the ACL checks (publish and subscribe,
// not unsubscribe) and whether they are patterns.
func channelsOf(name string, argc int) (first, last int, pattern bool) {
	switch name {
	case "subscribe", "ssubscribe":
		return 1, argc - 1, false
	case "psubscribe":
		return 1, argc - 1, true
	case "publish", "spublish":
		return 1, 1, false
	}
	return 0, -1, false
}

// matchChannel is ACLCheckChannelAgainstList: a pattern must equal one of
// the user's patterns literally, a channel must match one of them.
func matchChannel(list []string, ch string, pattern bool) bool {
	for _, p := range list {
		if pattern {
			if p == ch {
				return true
			}
		} else if redisutil.StringMatch(p, ch, false) {
			return true
		}
	}
	return false
}

// checkKey is ACLSelectorCheckKey.
func (s *selector) checkKey(key string, access int) bool {
	for _, k := range s.keys {
		if k.flags&access != access {
			continue
		}
		if redisutil.StringMatch(k.pat, key, false) {
			return true
		}
	}
	return false
}

type keyCache struct {
	init    bool
	keys    []KeyRef
	hasKeys bool
}

// checkCmd is ACLSelectorCheckCmd; idx is the argv position of the denied
// key or channel.
func (s *selector) checkCmd(id int, noAuth bool, args [][]byte, kf KeyFunc, cache *keyCache) (res Result, idx int) {
	if !s.allCommands && !noAuth && !s.allowed[id] {
		fa := s.firstArgs[id]
		if len(args) < 2 || len(fa) == 0 {
			return DeniedCmd, 0
		}
		at := 1
		if s.t.cmds[id].parent >= 0 {
			at = 2
		}
		found := false
		for _, a := range fa {
			if at < len(args) && strings.EqualFold(string(args[at]), a) {
				found = true
				break
			}
		}
		if !found {
			return DeniedCmd, 0
		}
	}
	if !s.allKeys && kf != nil {
		if !cache.init {
			cache.keys, cache.hasKeys = kf()
			cache.init = true
		}
		if cache.hasKeys {
			for _, k := range cache.keys {
				if k.Pos < len(args) && !s.checkKey(string(args[k.Pos]), k.Access) {
					return DeniedKey, k.Pos
				}
			}
		}
	}
	if !s.allChannels {
		first, last, pattern := channelsOf(s.t.cmds[id].name, len(args))
		for p := first; p <= last && p < len(args); p++ {
			if !matchChannel(s.channels, string(args[p]), pattern) {
				return DeniedChannel, p
			}
		}
	}
	return OK, 0
}

// Unrestricted reports whether u may run every command on every key and
// channel (its root selector has allcommands, allkeys and allchannels), so
// a binary can skip Check on its hot path.
func (u *User) Unrestricted() bool {
	s := u.selectors[0]
	return s.allCommands && s.allKeys && s.allChannels
}

// Check is ACLCheckAllUserCommandPerm: whether u may run command id with
// argv args (name first; noAuth is the command's no_auth flag). On a denial
// idx is the argv position of the key or channel to report: the highest
// denial of all selectors wins, and the last position among equal ones.
// keys may be nil for a table without keys (the sentinel's).
func (u *User) Check(id int, noAuth bool, args [][]byte, keys KeyFunc) (res Result, idx int) {
	res = DeniedCmd
	var cache keyCache
	for _, s := range u.selectors {
		r, i := s.checkCmd(id, noAuth, args, keys, &cache)
		if r == OK {
			return OK, 0
		}
		if r > res || (r == res && i > idx) {
			res, idx = r, i
		}
	}
	return res, idx
}

// CheckUnrestrictedKeys is ACLUserCheckCmdWithUnrestrictedKeyAccess: whether
// one of u's selectors allows command id with argv args and also grants
// access (KeyRead, KeyWrite or both) to every key: allkeys, or a "*"
// pattern with those permissions. SORT's BY and GET patterns, which name
// keys derived from values, need it.
func (u *User) CheckUnrestrictedKeys(id int, noAuth bool, args [][]byte, keys KeyFunc, access int) bool {
	var cache keyCache
	for _, s := range u.selectors {
		if r, _ := s.checkCmd(id, noAuth, args, keys, &cache); r == OK && s.unrestrictedKeys(access) {
			return true
		}
	}
	return false
}

// unrestrictedKeys is ACLSelectorHasUnrestrictedKeyAccess.
func (s *selector) unrestrictedKeys(access int) bool {
	if s.allKeys {
		return true
	}
	for _, k := range s.keys {
		if k.flags&access == access && k.pat == "*" {
			return true
		}
	}
	return false
}
