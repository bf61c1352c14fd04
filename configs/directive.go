package configs

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Type is the kind of value a directive holds (config.c's config types).
type Type uint8

// Directive types.
const (
	TypeBool    Type = iota + 1 // yes | no
	TypeInt                     // integer, strict (string2ll)
	TypeMemory                  // bytes, with b k kb m mb g gb units (memtoull)
	TypeOctal                   // octal integer (unixsocketperm)
	TypeEnum                    // one of Enum; with MultiArg a set of flags
	TypeString                  // free string, possibly validated
	TypeSpecial                 // own syntax: save, bind, replicaof, dir...
)

func (t Type) String() string {
	switch t {
	case TypeBool:
		return "bool"
	case TypeInt:
		return "int"
	case TypeMemory:
		return "memory"
	case TypeOctal:
		return "octal"
	case TypeEnum:
		return "enum"
	case TypeString:
		return "string"
	case TypeSpecial:
		return "special"
	}
	return "unknown"
}

// Flag qualifies a directive (config.c's *_CONFIG flags).
type Flag uint16

// Directive flags.
const (
	// Immutable directives are read at startup only: CONFIG SET refuses
	// them (IMMUTABLE_CONFIG).
	Immutable Flag = 1 << iota
	// Sensitive values (passwords) are redacted from the command's
	// arguments in SLOWLOG, MONITOR and the like (SENSITIVE_CONFIG).
	Sensitive
	// Hidden directives are not matched by CONFIG GET patterns, only by
	// their exact name (HIDDEN_CONFIG).
	Hidden
	// Protected directives can be set only when enable-protected-configs
	// allows it (PROTECTED_CONFIG).
	Protected
	// DenyLoading directives cannot be set while the dataset is loading
	// (DENY_LOADING_CONFIG).
	DenyLoading
	// MultiArg directives take several arguments; CONFIG SET splits its
	// value on spaces (MULTI_ARG_CONFIG).
	MultiArg
	// Unsigned numeric directives are bound-checked as C unsigned types.
	Unsigned
	// Percent memory directives also accept "N%" (PERCENT_CONFIG).
	Percent
	// EmptyIsNull string directives treat "" as unset: CONFIG REWRITE
	// removes their lines (EMPTY_STRING_IS_NULL).
	EmptyIsNull
	// Unimplemented directives are accepted, stored, reported and
	// rewritten, but nothing in Vigil acts on them yet; they have no Config
	// field (read them with Config.Value).
	Unimplemented
	// VigilOnly directives are Vigil's own (not in Redis 7.0.15): they are
	// also Hidden, so CONFIG GET * lists what redis-server lists.
	VigilOnly
)

// Directive describes one configuration directive. The table of directives
// (Directives) drives the config file parser, CONFIG GET, CONFIG SET,
// CONFIG REWRITE and Validate.
type Directive struct {
	Name  string // primary name, lowercase
	Alias string // the other accepted name (slaveof for replicaof...), or ""
	Type  Type
	Flags Flag
	// Min and Max bound numeric values. With Unsigned they are compared as
	// uint64 (so Max -1 means 2^64-1).
	Min, Max int64
	// Enum lists the accepted values of a TypeEnum directive, in the order
	// Redis lists them in its error message.
	Enum []string
	// Default is the value redis-server 7.0 starts with, as CONFIG GET
	// prints it ("" for dir, which defaults to the working directory).
	Default string

	init    func(*Config)
	get     func(*Config) string
	set     func(*Config, []string) error // stores or fails, never half-way
	rewrite func(*Config, *RewriteState)
	check   func(*Config) error // Validate; nil = get/set round trip
}

// Directives returns the directive table, in a stable order.
func Directives() []Directive {
	out := make([]Directive, len(table))
	for i, d := range table {
		out[i] = *d
	}
	return out
}

// Lookup finds a directive by its name or alias, case-insensitively.
func Lookup(name string) (Directive, bool) {
	d, _ := lookup(name)
	if d == nil {
		return Directive{}, false
	}
	return *d, true
}

// lookup returns the directive and whether name is its alias.
func lookup(name string) (*Directive, bool) {
	e, ok := byName[strings.ToLower(name)]
	if !ok {
		return nil, false
	}
	return e.d, e.alias
}

type tableEntry struct {
	d     *Directive
	alias bool
}

var byName = func() map[string]tableEntry {
	m := make(map[string]tableEntry, 2*len(table))
	for _, d := range table {
		if _, dup := m[d.Name]; dup {
			panic("configs: duplicate directive " + d.Name)
		}
		m[d.Name] = tableEntry{d: d}
		if d.Alias != "" {
			m[d.Alias] = tableEntry{d: d, alias: true}
		}
	}
	return m
}()

// Reasons, exactly as config.c words them.
const (
	reasonWrongArgs        = "wrong number of arguments"
	reasonBadDirective     = "Bad directive or wrong number of arguments"
	reasonUnbalanced       = "Unbalanced quotes in configuration line"
	reasonYesNo            = "argument must be 'yes' or 'no'"
	reasonInteger          = "argument couldn't be parsed into an integer"
	reasonMemory           = "argument must be a memory value"
	reasonMemoryPercent    = "argument must be a memory or percent value"
	reasonOctal            = "argument couldn't be parsed as an octal number"
	reasonSave             = "Invalid save parameters"
	reasonMasterPort       = "Invalid master port"
	reasonTooManyBind      = "Too many bind addresses specified."
	reasonNoSuchCommand    = "No such command in rename-command"
	reasonTargetExists     = "Target command name already exists"
	reasonModuleNoValue    = "Module config specified without value"
	reasonSentinelMode     = "sentinel directive while not in sentinel mode"
	reasonReplicaofCluster = "replicaof directive not allowed in cluster mode"
	reasonUsersAndACLFile  = "Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both."
)

var errWrongArgs = errors.New(reasonWrongArgs)

// Hz bounds (server.h CONFIG_MIN_HZ, CONFIG_MAX_HZ): hz is a hint, values
// outside are clamped, not refused.
const (
	minHz = 1
	maxHz = 500
)

// bindMax is CONFIG_BINDADDR_MAX.
const bindMax = 16

// ---- accessors ------------------------------------------------------------

// boolAcc, numAcc and strAcc reach a value of a Config: a typed field or,
// for Unimplemented directives, the generic maps (nil functions).
type boolAcc struct {
	get func(*Config) bool
	put func(*Config, bool)
}

type numAcc struct {
	get func(*Config) int64
	put func(*Config, int64)
}

type strAcc struct {
	get func(*Config) string
	put func(*Config, string)
}

func fBool(f func(*Config) *bool) boolAcc {
	return boolAcc{func(c *Config) bool { return *f(c) }, func(c *Config, v bool) { *f(c) = v }}
}

func fNum[T ~int | ~int64 | ~uint32](f func(*Config) *T) numAcc {
	return numAcc{func(c *Config) int64 { return int64(*f(c)) }, func(c *Config, v int64) { *f(c) = T(v) }}
}

func fStr(f func(*Config) *string) strAcc {
	return strAcc{func(c *Config) string { return *f(c) }, func(c *Config, v string) { *f(c) = v }}
}

// ---- generic directive kinds ----------------------------------------------

// boolD is createBoolConfig. A nil field stores the value in the generic map.
func boolD(name, alias string, flags Flag, def bool, field func(*Config) *bool, valid func(bool) error) *Directive {
	acc := boolAcc{
		get: func(c *Config) bool { return c.extraBool[name] },
		put: func(c *Config, v bool) { c.extraBool[name] = v },
	}
	if field != nil {
		acc = fBool(field)
	} else {
		flags |= Unimplemented
	}
	d := &Directive{Name: name, Alias: alias, Type: TypeBool, Flags: flags, Default: yesNo(def)}
	d.init = func(c *Config) { acc.put(c, def) }
	d.get = func(c *Config) string { return yesNo(acc.get(c)) }
	d.set = func(c *Config, args []string) error {
		var v bool
		switch strings.ToLower(args[0]) {
		case "yes":
			v = true
		case "no":
		default:
			return errors.New(reasonYesNo)
		}
		if valid != nil {
			if err := valid(v); err != nil {
				return err
			}
		}
		acc.put(c, v)
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		v := acc.get(c)
		s.RewriteLine(name, name+" "+yesNo(v), v != def)
	}
	return d
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// numD is createIntConfig and its siblings. typ is TypeInt, TypeMemory or
// TypeOctal; flags may add Unsigned and Percent.
func numD(name, alias string, flags Flag, typ Type, min, max, def int64, field numAcc) *Directive {
	acc := field
	if acc.get == nil {
		flags |= Unimplemented
		acc = numAcc{
			get: func(c *Config) int64 { return c.extraNum[name] },
			put: func(c *Config, v int64) { c.extraNum[name] = v },
		}
	}
	d := &Directive{Name: name, Alias: alias, Type: typ, Flags: flags, Min: min, Max: max}
	d.Default = d.formatNum(def)
	d.init = func(c *Config) { acc.put(c, def) }
	d.get = func(c *Config) string { return d.formatNum(acc.get(c)) }
	d.set = func(c *Config, args []string) error {
		v, err := d.parseNum(args[0])
		if err != nil {
			return err
		}
		acc.put(c, v)
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		v := acc.get(c)
		var line string
		switch {
		case flags&Percent != 0 && v < 0:
			line = name + " " + strconv.FormatInt(-v, 10) + "%"
		case typ == TypeMemory:
			line = name + " " + formatMemory(v)
		case typ == TypeOctal:
			line = name + " " + strconv.FormatInt(v, 8)
		default:
			line = name + " " + strconv.FormatInt(v, 10)
		}
		s.RewriteLine(name, line, v != def)
	}
	return d
}

// parseNum is numericParseString followed by numericBoundaryCheck.
func (d *Directive) parseNum(s string) (int64, error) {
	var v int64
	parsed := false
	if d.Type == TypeMemory {
		if u, ok := memtoull(s); ok {
			v, parsed = int64(u), true
		}
	}
	if !parsed && d.Flags&Percent != 0 && len(s) > 1 && s[len(s)-1] == '%' {
		if p, ok := redisutil.String2ll(s[:len(s)-1]); ok && p >= 0 {
			v, parsed = -p, true
		}
	}
	if !parsed && d.Type == TypeOctal {
		if o, rest, overflow := strtoll(s, 8); !overflow && rest == "" {
			v, parsed = o, true
		}
	}
	if !parsed && d.Type == TypeInt {
		v, parsed = redisutil.String2ll(s)
	}
	if !parsed {
		switch {
		case d.Type == TypeMemory && d.Flags&Percent != 0:
			return 0, errors.New(reasonMemoryPercent)
		case d.Type == TypeMemory:
			return 0, errors.New(reasonMemory)
		case d.Type == TypeOctal:
			return 0, errors.New(reasonOctal)
		}
		return 0, errors.New(reasonInteger)
	}
	if d.Flags&Unsigned != 0 {
		u, lo, hi := uint64(v), uint64(d.Min), uint64(d.Max)
		if u > hi || u < lo {
			if d.Type == TypeOctal {
				return 0, fmt.Errorf("argument must be between %o and %o inclusive", lo, hi)
			}
			return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
		}
		return v, nil
	}
	if d.Flags&Percent != 0 && v < 0 {
		if v < d.Min {
			return 0, fmt.Errorf("percentage argument must be less or equal to %d", -d.Min)
		}
		return v, nil
	}
	if v > d.Max || v < d.Min {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", d.Min, d.Max)
	}
	return v, nil
}

// formatNum is numericConfigGet.
func (d *Directive) formatNum(v int64) string {
	switch {
	case d.Flags&Percent != 0 && v < 0:
		return strconv.FormatInt(-v, 10) + "%"
	case d.Type == TypeMemory:
		return strconv.FormatUint(uint64(v), 10)
	case d.Type == TypeOctal:
		return strconv.FormatInt(v, 8)
	}
	return strconv.FormatInt(v, 10)
}

// enumItem is a configEnum entry. Names sharing a value are synonyms; the
// first one is what CONFIG GET prints. Hidden names are accepted but not
// listed in the error message.
type enumItem struct {
	name   string
	val    int
	hidden bool
}

func enumNames(items []enumItem) []string {
	var out []string
	for _, it := range items {
		if !it.hidden {
			out = append(out, it.name)
		}
	}
	return out
}

func enumError(items []enumItem) error {
	msg := "argument(s) must be one of the following: " + strings.Join(enumNames(items), ", ")
	if len(msg) > 255 { // LOADBUF_SIZE
		msg = msg[:255]
	}
	return errors.New(msg)
}

// enumD is createEnumConfig over a string field holding the canonical name.
func enumD(name, alias string, flags Flag, items []enumItem, def string, field func(*Config) *string) *Directive {
	acc := strAcc{
		get: func(c *Config) string { return c.extraStr[name] },
		put: func(c *Config, v string) { c.extraStr[name] = v },
	}
	if field != nil {
		acc = fStr(field)
	} else {
		flags |= Unimplemented
	}
	canonical := func(s string) (string, bool) {
		for _, it := range items {
			if strings.EqualFold(it.name, s) {
				for _, first := range items {
					if first.val == it.val {
						return first.name, true
					}
				}
			}
		}
		return "", false
	}
	d := &Directive{Name: name, Alias: alias, Type: TypeEnum, Flags: flags, Enum: enumNames(items), Default: def}
	d.init = func(c *Config) { acc.put(c, def) }
	d.get = func(c *Config) string { return acc.get(c) }
	d.set = func(c *Config, args []string) error {
		v, ok := canonical(args[0])
		if !ok {
			return enumError(items)
		}
		acc.put(c, v)
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		v := acc.get(c)
		s.RewriteLine(name, name+" "+v, v != def)
	}
	return d
}

// flagsD is a MULTI_ARG enum: a set of flags over an int field
// (shutdown-on-sigint). A value of 0 is its zero-valued name.
func flagsD(name string, flags Flag, items []enumItem, def int, field func(*Config) *int, valid func(int) error) *Directive {
	acc := fNum(field)
	format := func(v int) string { // configEnumGetName with bitflags
		var names []string
		unmatched := v
		for _, it := range items {
			if it.val == v {
				return it.name
			}
			if it.val != 0 && it.val == unmatched&it.val {
				names = append(names, it.name)
				unmatched &^= it.val
			}
		}
		if len(names) == 0 || unmatched != 0 {
			return "unknown"
		}
		return strings.Join(names, " ")
	}
	d := &Directive{Name: name, Type: TypeEnum, Flags: flags | MultiArg, Enum: enumNames(items), Default: format(def)}
	d.init = func(c *Config) { acc.put(c, int64(def)) }
	d.get = func(c *Config) string { return format(int(acc.get(c))) }
	d.set = func(c *Config, args []string) error {
		if len(args) == 0 {
			return enumError(items)
		}
		v := 0
		for _, a := range args {
			matched := false
			for _, it := range items {
				if strings.EqualFold(a, it.name) {
					v |= it.val
					matched = true
				}
			}
			if !matched {
				return enumError(items)
			}
		}
		if valid != nil {
			if err := valid(v); err != nil {
				return err
			}
		}
		acc.put(c, int64(v))
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		v := int(acc.get(c))
		s.RewriteLine(name, name+" "+format(v), v != def)
	}
	return d
}

// strD is createStringConfig / createSDSConfig. With EmptyIsNull the
// default is "unset" (C NULL) and def must be "".
func strD(name, alias string, flags Flag, def string, field func(*Config) *string, valid func(string) error) *Directive {
	acc := strAcc{
		get: func(c *Config) string { return c.extraStr[name] },
		put: func(c *Config, v string) { c.extraStr[name] = v },
	}
	if field != nil {
		acc = fStr(field)
	} else {
		flags |= Unimplemented
	}
	d := &Directive{Name: name, Alias: alias, Type: TypeString, Flags: flags, Default: def}
	d.init = func(c *Config) { acc.put(c, def) }
	d.get = func(c *Config) string { return acc.get(c) }
	d.set = func(c *Config, args []string) error {
		if valid != nil {
			if err := valid(args[0]); err != nil {
				return err
			}
		}
		acc.put(c, args[0])
		return nil
	}
	d.rewrite = func(c *Config, s *RewriteState) {
		v := acc.get(c)
		if flags&EmptyIsNull != 0 && v == "" {
			s.MarkProcessed(name)
			return
		}
		s.RewriteLine(name, name+" "+redisutil.Quote(v), flags&EmptyIsNull != 0 || v != def)
	}
	return d
}

// ---- validators -----------------------------------------------------------

func validDBFilename(v string) error {
	if !isBaseName(v) {
		return errors.New("dbfilename can't be a path, just a filename")
	}
	return nil
}

func validAOFFilename(v string) error {
	if v == "" {
		return errors.New("appendfilename can't be empty")
	}
	if !isBaseName(v) {
		return errors.New("appendfilename can't be a path, just a filename")
	}
	return nil
}

func validAOFDirname(v string) error {
	if v == "" {
		return errors.New("appenddirname can't be empty")
	}
	if !isBaseName(v) {
		return errors.New("appenddirname can't be a path, just a dirname")
	}
	return nil
}

func validHostname(v string) error {
	if len(v) >= 256 { // NET_HOST_STR_LEN
		return errors.New("Hostnames must be less than 256 characters")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return errors.New("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return nil
}

// validProcTitle is validateProcTitleTemplate: the template expands (every
// {variable} is known, braces balance) to something not blank for an empty
// title, for a server on the default port and bind (Redis checks with its
// running values: a template of {unixsocket} alone is refused here even
// where a unix socket is set).
func validProcTitle(v string) error {
	if t, ok := ExpandProcTitle(v, ProcTitleVars{Bind: "*", Port: 6379}); !ok || t == "" {
		return errors.New("template format is invalid or contains unknown variables")
	}
	return nil
}

// ProcTitleVars are the values of proc-title-template's variables
// (redisProcTitleGetVariable): Title is the executable as started
// (argv[0]), Bind the first bind address, Mode {server-mode} ("[sentinel]",
// "[cluster]" or ""), ConfigFile the configuration file ("" for none).
type ProcTitleVars struct {
	Title, Bind, UnixSocket, ConfigFile, Mode string
	Port, TLSPort                             int
}

// ProcTitleVars are c's variables for proc-title-template.
func (c *Config) ProcTitleVars(title, mode string) ProcTitleVars {
	v := ProcTitleVars{Title: title, Mode: mode, Bind: "*", Port: c.Port, UnixSocket: c.UnixSocket, ConfigFile: c.File}
	if len(c.Bind) > 0 {
		v.Bind = c.Bind[0]
	}
	if s, ok := c.Value("tls-port"); ok {
		v.TLSPort, _ = strconv.Atoi(s)
	}
	return v
}

// ExpandProcTitle is expandProcTitleTemplate (server.c, translated): the
// proc-title-template tmpl expanded with v, trimmed of spaces at both
// ends. ok is false for an invalid template.
func ExpandProcTitle(tmpl string, v ProcTitleVars) (string, bool) {
	res, ok := redisutil.Template(tmpl, func(name string) (string, bool) {
		switch name {
		case "title":
			return v.Title, true
		case "listen-addr":
			if v.Port != 0 || v.TLSPort != 0 {
				port := v.Port
				if port == 0 {
					port = v.TLSPort
				}
				return v.Bind + ":" + strconv.Itoa(port), true
			}
			return "unixsocket:" + v.UnixSocket, true
		case "server-mode":
			return v.Mode, true
		case "config-file":
			if v.ConfigFile == "" {
				return "-", true
			}
			return v.ConfigFile, true
		case "port":
			return strconv.Itoa(v.Port), true
		case "tls-port":
			return strconv.Itoa(v.TLSPort), true
		case "unixsocket":
			return v.UnixSocket, true
		}
		return "", false
	})
	if !ok {
		return "", false
	}
	return strings.Trim(res, " "), true
}

// validActiveDefrag mirrors a Redis built without its patched jemalloc, as
// Debian's is: Vigil has no active defragmentation either.
func validActiveDefrag(v bool) error {
	if v {
		return errors.New("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution")
	}
	return nil
}

func validShutdownFlags(v int) error {
	if v&ShutdownSave != 0 && v&ShutdownNoSave != 0 {
		return errors.New("shutdown options SAVE and NOSAVE can't be used simultaneously")
	}
	return nil
}

// C integer limits used by the table.
const (
	intMax   = math.MaxInt32
	intMin   = math.MinInt32
	uintMax  = math.MaxUint32
	longMax  = math.MaxInt64
	llongMax = math.MaxInt64
	ullMax   = -1 // as uint64: 2^64-1
)
