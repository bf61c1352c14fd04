package configs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// LoadOptions says where redis-server's configuration comes from.
type LoadOptions struct {
	// ConfigFile is the configuration file: "" for none, "-" to read the
	// configuration from Stdin instead (redis-server -).
	ConfigFile string
	// Stdin is read when ConfigFile is "-" or ReadStdin is set.
	Stdin io.Reader
	// ReadStdin also reads Stdin after ConfigFile, as
	// "redis-server /path/redis.conf -" does.
	ReadStdin bool
	// Args are the command-line arguments that follow the file
	// ("--port 6380 --replicaof host 6379 --save ''"), without the "-" that
	// asks for stdin. They are turned into directive lines exactly as
	// redis-server's main() does (each "--name" starts a line, the values
	// after it are appended quoted) and parsed after the file and stdin, so
	// they override them.
	Args []string
	// KnownCommand, when set, tells whether a command exists, so that
	// rename-command fails at its line as Redis's does ("No such command
	// in rename-command"). Without it any name is accepted and the server
	// checks RenameCommands against its command table.
	KnownCommand func(name string) bool
	// Sentinel, when set, receives every "sentinel ..." line (redis-sentinel
	// mode, queueSentinelConfig): its line number in its file, its text and
	// its arguments after "sentinel", wherever it stands (included files
	// too). Without it such a line fails as redis-server's does.
	Sentinel func(line int, text string, args []string)
}

// ConfigError is a configuration error at a line, printed as redis-server's
// loadServerConfigFromString prints it (Error gives the whole block, the
// file name added after the line number).
type ConfigError struct {
	// File is the file the line comes from: the configuration file or an
	// included file, "-" for standard input, "" for command-line arguments.
	File string
	// Line is the line number as redis-server counts it: the file, then
	// stdin, then a separating empty line and the command-line arguments
	// form one text; an included file is counted on its own. 0 when the
	// error is not about a line (a cross-directive check).
	Line int
	// Text is the offending line, trimmed.
	Text string
	// Reason is Redis's message ("argument couldn't be parsed into an
	// integer").
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("\n*** FATAL CONFIG FILE ERROR (Redis " + RedisVersion + ") ***\n")
	if e.Line > 0 {
		fmt.Fprintf(&b, "Reading the configuration file, at line %d", e.Line)
		switch e.File {
		case "":
		case "-":
			b.WriteString(" (stdin)")
		default:
			b.WriteString(" (" + e.File + ")")
		}
		b.WriteString("\n>>> '" + e.Text + "'\n")
	}
	b.WriteString(e.Reason)
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// FileError is a configuration file that cannot be read; Error is
// redis-server's message ("Fatal error, can't open config file '...': No
// such file or directory").
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("Fatal error, can't open config file '%s': %s", e.Path, redisutil.Strerror(e.Err))
}

func (e *FileError) Unwrap() error { return e.Err }

// maxIncludeDepth bounds include nesting (Redis would recurse until it
// crashes on an include loop).
const maxIncludeDepth = 32

// loadState is what loading a text needs besides the Config.
type loadState struct {
	saveLoaded bool // a save line replaced the defaults already
	known      func(string) bool
	sentinel   func(line int, text string, args []string)
}

// segment is a piece of configuration text and where it comes from.
type segment struct {
	file string
	text string
}

// Load builds the configuration as redis-server does at startup: the
// defaults, then the file, then stdin, then Args, each line applied in order
// (include and rename-command included) and the first error stopping
// everything. An unreadable file gives a *FileError, a bad line a
// *ConfigError. File is set to the absolute path of ConfigFile.
//
// Like redis-server, a dir line moves the directory later relative paths
// (dir, include) resolve against; the process working directory itself is
// left alone.
func Load(opts LoadOptions) (*Config, error) {
	c := Default()
	c.loading = &loadState{known: opts.KnownCommand, sentinel: opts.Sentinel}
	defer func() { c.loading = nil }()

	var segs []segment
	if opts.ConfigFile != "" && opts.ConfigFile != "-" {
		path, err := filepath.Abs(opts.ConfigFile)
		if err != nil {
			path = opts.ConfigFile
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, &FileError{Path: path, Err: err}
		}
		c.File = path
		segs = append(segs, segment{file: path, text: string(data)})
	}
	if opts.ConfigFile == "-" || opts.ReadStdin {
		if opts.Stdin != nil {
			data, err := io.ReadAll(opts.Stdin)
			if err != nil {
				return nil, fmt.Errorf("configs: reading the configuration from stdin: %w", err)
			}
			segs = append(segs, segment{file: "-", text: string(data)})
		}
	}
	if len(opts.Args) > 0 {
		segs = append(segs, segment{text: "\n" + ArgsToConfig(opts.Args)})
	}
	if err := c.loadSegments(segs, 0); err != nil {
		return nil, err
	}
	if err := c.sanity(); err != nil {
		return nil, &ConfigError{Reason: err.Error(), Err: err}
	}
	return c, nil
}

// ArgsToConfig turns redis-server command-line arguments into configuration
// text as main() does: every argument starting with "--" opens a new line
// with the directive name, the following arguments are appended as quoted
// values. A bare "--save" (last, or followed by another "--" argument)
// means save "". An argument holding both name and value ("--port 6380")
// stands for a whole line.
func ArgsToConfig(argv []string) string {
	var b strings.Builder
	handledLast := true
	for j := 0; j < len(argv); j++ {
		a := argv[j]
		if !(handledLast && strings.HasPrefix(a, "--")) {
			b.WriteString(redisutil.Quote(a))
			b.WriteByte(' ')
			handledLast = true
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(a[2:])
		b.WriteByte(' ')
		toks, err := redisutil.SplitArgs(a)
		if err != nil || len(toks) != 1 {
			handledLast = true
			continue
		}
		// Only the option name: its values follow.
		handledLast = false
		last := j == len(argv)-1
		nextIsOption := !last && strings.HasPrefix(argv[j+1], "--")
		switch {
		case strings.EqualFold(a, "--save") && nextIsOption:
			b.WriteString(`""`)
			handledLast = true
		case strings.EqualFold(a, "--save") && last:
			b.WriteString(`""`)
		case strings.EqualFold(a, "--sentinel") && nextIsOption:
			handledLast = true
		}
	}
	return b.String()
}

// loadSegments parses the concatenation of segs as one text, as
// loadServerConfigFromString does; errors name the segment the line is in.
func (c *Config) loadSegments(segs []segment, depth int) error {
	var text strings.Builder
	for _, s := range segs {
		text.WriteString(s.text)
	}
	fileAt := func(off int) string {
		for _, s := range segs {
			if off < len(s.text) {
				return s.file
			}
			off -= len(s.text)
		}
		if len(segs) > 0 {
			return segs[len(segs)-1].file
		}
		return ""
	}
	off := 0
	for i, raw := range strings.Split(text.String(), "\n") {
		lineOff := off
		off += len(raw) + 1
		line := trimLine(raw)
		if line == "" || line[0] == '#' {
			continue
		}
		fail := func(reason string, err error) error {
			return &ConfigError{File: fileAt(lineOff), Line: i + 1, Text: line, Reason: reason, Err: err}
		}
		args, err := redisutil.SplitArgs(line)
		if err != nil {
			return fail(reasonUnbalanced, err)
		}
		if len(args) == 0 {
			continue
		}
		if c.loading != nil && c.loading.sentinel != nil && len(args) > 1 && strings.EqualFold(args[0], "sentinel") {
			c.loading.sentinel(i+1, line, args[1:])
			continue
		}
		if err := c.applyLine(args, depth); err != nil {
			if _, ok := err.(*FileError); ok {
				return err
			}
			if _, ok := err.(*ConfigError); ok {
				return err
			}
			return fail(err.Error(), err)
		}
	}
	return nil
}

// deprecated directives are accepted and ignored when they have exactly
// these many arguments (name included).
var deprecated = map[string]int{
	"list-max-ziplist-entries": 2,
	"list-max-ziplist-value":   2,
	"lua-replicate-commands":   2,
}

// applyLine applies one directive line read from a file, stdin or the
// command line.
func (c *Config) applyLine(args []string, depth int) error {
	name := strings.ToLower(args[0])
	if d, _ := lookup(name); d != nil {
		if d.Flags&MultiArg == 0 {
			if len(args) != 2 {
				return errWrongArgs
			}
			return d.set(c, args[1:])
		}
		vals := args[1:]
		if len(args) == 2 && args[1] != "" {
			// --save "900 1 300 10": one argument holding several.
			vals, _ = redisutil.SplitArgs(args[1])
		}
		return d.set(c, vals)
	}
	if n, ok := deprecated[name]; ok && len(args) == n {
		return nil
	}
	switch {
	case name == "include" && len(args) == 2:
		return c.include(args[1], depth)
	case name == "rename-command" && len(args) == 3:
		return c.renameCommand(args[1], args[2])
	case name == "user" && len(args) >= 2:
		c.Users = append(c.Users, append([]string(nil), args[1:]...))
		return nil
	case name == "loadmodule" && len(args) >= 2:
		c.LoadModules = append(c.LoadModules, append([]string(nil), args[1:]...))
		return nil
	case strings.Contains(name, "."):
		if len(args) < 2 {
			return errors.New(reasonModuleNoValue)
		}
		if c.ModuleConfigs == nil {
			c.ModuleConfigs = map[string]string{}
		}
		c.ModuleConfigs[name] = strings.Join(args[1:], " ")
		return nil
	case name == "sentinel":
		// A lone "sentinel" line is how redis-server is told to run as a
		// sentinel; main() handles it. Anything more needs sentinel mode.
		if len(args) != 1 {
			return errors.New(reasonSentinelMode)
		}
		return nil
	}
	return errors.New(reasonBadDirective)
}

// include loads another file at this point, as loadServerConfig does: a
// path with * ? or [ is a glob whose matches are read in order (no match is
// fine), otherwise the file must exist. Relative paths resolve against Dir.
func (c *Config) include(pattern string, depth int) error {
	if depth >= maxIncludeDepth {
		return fmt.Errorf("include nesting deeper than %d (an include loop?)", maxIncludeDepth)
	}
	path := pattern
	if !filepath.IsAbs(path) && c.Dir != "" {
		path = filepath.Join(c.Dir, path)
	}
	var files []string
	if strings.ContainsAny(pattern, "*?[") {
		matches, err := filepath.Glob(path)
		if err != nil || len(matches) == 0 {
			return nil
		}
		files = matches
	} else {
		files = []string{path}
	}
	segs := make([]segment, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			shown := f
			if len(files) == 1 && !strings.ContainsAny(pattern, "*?[") {
				shown = pattern
			}
			return &FileError{Path: shown, Err: err}
		}
		segs = append(segs, segment{file: f, text: string(data)})
	}
	return c.loadSegments(segs, depth+1)
}

// renameCommand is rename-command <old> <new>: RenameCommands maps each
// original command name to its final name ("" = removed), so renaming a
// renamed command renames the original one. With LoadOptions.KnownCommand
// the command table checks of Redis apply; otherwise only renames can be
// checked against each other.
func (c *Config) renameCommand(oldName, newName string) error {
	oldName, newName = strings.ToLower(oldName), strings.ToLower(newName)
	var known func(string) bool
	if c.loading != nil {
		known = c.loading.known
	}
	if c.RenameCommands == nil {
		c.RenameCommands = map[string]string{}
	}
	m := c.RenameCommands
	orig := ""
	for o, t := range m {
		if t == oldName {
			orig = o
		}
	}
	if orig == "" {
		if _, renamed := m[oldName]; renamed || (known != nil && !known(oldName)) {
			return errors.New(reasonNoSuchCommand)
		}
		orig = oldName
	}
	if newName != "" {
		for o, t := range m {
			if o != orig && t == newName {
				return errors.New(reasonTargetExists)
			}
		}
		if _, renamed := m[newName]; !renamed && newName != orig && known != nil && known(newName) {
			return errors.New(reasonTargetExists)
		}
	}
	if newName == orig {
		delete(m, orig)
	} else {
		m[orig] = newName
	}
	return nil
}
