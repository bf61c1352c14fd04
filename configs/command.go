package configs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Replies of CONFIG SET and CONFIG REWRITE, as config.c words them. The
// errors returned by Set and Rewrite carry the whole reply text, code
// included ("ERR ...", "LOADING ..."): the server sends "-" + err.Error().
const (
	errUnknownOption  = "ERR Unknown option or number of arguments for CONFIG SET - '%s'"
	errSetFailed      = "ERR CONFIG SET failed (possibly related to argument '%s') - %s"
	errLoading        = "LOADING Redis is loading the dataset in memory"
	reasonImmutable   = "can't set immutable config"
	reasonProtected   = "can't set protected config"
	reasonDuplicate   = "duplicate parameter"
	errRewriteFailed  = "ERR Rewriting config file: %s"
	errNoConfigFileTx = "ERR The server is running without a config file"
)

// ErrNoConfigFile is Rewrite's error when the server was started without a
// configuration file.
var ErrNoConfigFile = errors.New(errNoConfigFileTx)

// Get is CONFIG GET: for each pattern, the directives matching it (a glob as
// Redis's stringmatch, case-insensitive; hidden directives only by exact
// name), aliases included, as name, value, name, value... Values are
// formatted as Redis prints them. A pattern without * ? [ is an exact
// lookup and its name is echoed as given. A directive is listed once even
// if several patterns match it. Order: patterns in turn, directives in
// table order.
func (c *Config) Get(patterns ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range patterns {
		if !strings.ContainsAny(p, "[*?") {
			key := strings.ToLower(p)
			if seen[key] {
				continue
			}
			if d, _ := lookup(p); d != nil {
				seen[key] = true
				out = append(out, p, d.get(c))
			}
			continue
		}
		for _, d := range table {
			if d.Flags&Hidden != 0 {
				continue
			}
			for _, name := range [2]string{d.Name, d.Alias} {
				if name == "" || seen[name] || !redisutil.StringMatch(p, name, true) {
					continue
				}
				seen[name] = true
				out = append(out, name, d.get(c))
			}
		}
	}
	return out
}

// SetOptions describe the client running CONFIG SET.
type SetOptions struct {
	// LocalClient is true for a client on a loopback address or a unix
	// socket: enable-protected-configs local lets it set dir and
	// dbfilename.
	LocalClient bool
	// Loading is true while the server loads its dataset: appendonly,
	// repl-diskless-load and dir are refused with -LOADING.
	Loading bool
}

// Set is CONFIG SET name value [name value ...] from a non-local client with
// the dataset loaded; see SetWith.
func (c *Config) Set(pairs ...[2]string) error { return c.SetWith(SetOptions{}, pairs...) }

// SetWith is CONFIG SET, as Redis 7.0's configSetCommand: every name is
// looked up first (unknown, immutable, protected, refused while loading or
// given twice: nothing is changed), then every value is stored, then
// OnSet is called for each directive whose value changed. A bad value or an
// OnSet error restores every directive of the command to its previous value
// (calling OnSet again, errors ignored, for those already applied) and
// returns Redis's error text:
//
//	ERR Unknown option or number of arguments for CONFIG SET - 'foo'
//	ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer
//	ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config
//	ERR CONFIG SET failed (possibly related to argument 'port') - duplicate parameter
//
// Values of MultiArg directives (save, bind...) are split on single spaces,
// as Redis does.
func (c *Config) SetWith(opts SetOptions, pairs ...[2]string) error {
	type item struct {
		d     *Directive
		alias bool
		name  string // as written by the client
		value string
	}
	items := make([]item, 0, len(pairs))
	for _, p := range pairs {
		d, alias := lookup(p[0])
		if d == nil {
			return fmt.Errorf(errUnknownOption, p[0])
		}
		if d.Flags&Immutable != 0 {
			return fmt.Errorf(errSetFailed, p[0], reasonImmutable)
		}
		if d.Flags&Protected != 0 && !allowProtected(c.EnableProtectedConfigs, opts.LocalClient) {
			return fmt.Errorf(errSetFailed, p[0], reasonProtected)
		}
		if opts.Loading && d.Flags&DenyLoading != 0 {
			return errors.New(errLoading)
		}
		for _, prev := range items {
			// Redis registers an alias as a separate entry: "slave-priority 1
			// replica-priority 2" is not a duplicate.
			if prev.d == d && prev.alias == alias {
				return fmt.Errorf(errSetFailed, p[0], reasonDuplicate)
			}
		}
		items = append(items, item{d: d, alias: alias, name: p[0], value: p[1]})
	}

	snapshot := c.Clone()
	restore := func() {
		hook := c.OnSet
		*c = *snapshot
		c.OnSet = hook
	}
	type change struct{ name, entry string }
	var changed []change
	for _, it := range items {
		entry := it.d.Name
		if it.alias {
			entry = it.d.Alias
		}
		before := it.d.get(c)
		args := []string{it.value}
		if it.d.Flags&MultiArg != 0 {
			args = splitSpaces(it.value)
		}
		if err := it.d.set(c, args); err != nil {
			restore()
			return fmt.Errorf(errSetFailed, entry, err.Error())
		}
		if it.d.get(c) != before {
			dup := false
			for _, ch := range changed {
				dup = dup || ch.name == it.d.Name
			}
			if !dup {
				changed = append(changed, change{name: it.d.Name, entry: entry})
			}
		}
	}
	if hook := c.OnSet; hook != nil {
		for i, ch := range changed {
			if err := hook(ch.name); err != nil {
				restore()
				for _, undo := range changed[:i+1] {
					_ = hook(undo.name)
				}
				return fmt.Errorf(errSetFailed, ch.entry, err.Error())
			}
		}
	}
	return nil
}

// allowProtected is allowProtectedAction.
func allowProtected(setting string, local bool) bool {
	return setting == "yes" || (setting == "local" && local)
}

// Snapshot is every directive's current value as CONFIG GET prints it,
// hidden and immutable ones included, in table order (aliases skipped):
// what a child process started to stand for this one (the Lua debugger's
// forked session) rebuilds its configuration from with FromSnapshot.
// rename-command, user and loadmodule lines are not directives: the
// caller copies RenameCommands, Users and LoadModules itself.
func (c *Config) Snapshot() [][2]string {
	out := make([][2]string, 0, len(table))
	for _, d := range table {
		if d.get == nil {
			continue
		}
		out = append(out, [2]string{d.Name, d.get(c)})
	}
	return out
}

// FromSnapshot is the configuration a Snapshot describes: Default with
// each value stored as CONFIG SET stores it, immutable and protected
// directives included. A value that does not parse keeps the default;
// the names of those are returned.
func FromSnapshot(pairs [][2]string) (*Config, []string) {
	c := Default()
	var bad []string
	for _, p := range pairs {
		d, _ := lookup(p[0])
		if d == nil || d.set == nil {
			bad = append(bad, p[0])
			continue
		}
		args := []string{p[1]}
		if d.Flags&MultiArg != 0 {
			args = splitSpaces(p[1])
		}
		if err := d.set(c, args); err != nil {
			bad = append(bad, p[0])
		}
	}
	return c, bad
}
