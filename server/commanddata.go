package server

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"strings"
	"sync"

	"github.com/vigil-kv/vigil/internal/resp"
)

//go:generate go run gencommanddata.go -o commanddata.resp

// commandDataRaw is what redis-server 7.0.15 answers to COMMAND DOCS and
// COMMAND INFO for each of its commands, recorded by gencommanddata.go as
// one RESP3 map: full name -> [docs map, COMMAND INFO entry], both without
// subcommands. It is the single source of Vigil's COMMAND DOCS and of the
// tips and key specs of COMMAND INFO; arity, flags, key range and ACL
// categories come from the command table (and TestCommandTableMatchesRedis
// checks the table against this data).
//
//go:embed commanddata.resp
var commandDataRaw []byte

// redisCommand is one command's recorded replies.
type redisCommand struct {
	// docs is the COMMAND DOCS map (summary, since, group, complexity,
	// doc_flags, deprecated_since, replaced_by, history, arguments), in
	// Redis's field order, without "subcommands".
	docs resp.Value
	// info is the 10-element COMMAND INFO entry with an empty subcommand
	// set.
	info resp.Value
}

// Fields of a COMMAND INFO entry.
const (
	infoName = iota
	infoArity
	infoFlags
	infoFirstKey
	infoLastKey
	infoStep
	infoACL
	infoTips
	infoKeySpecs
	infoSubcommands
)

// redisCommands parses commandDataRaw once, on first use.
var redisCommands = sync.OnceValue(func() map[string]*redisCommand {
	m, err := parseCommandData(commandDataRaw)
	if err != nil {
		panic(err) // embedded at build time; TestCommandData parses it
	}
	return m
})

func parseCommandData(raw []byte) (map[string]*redisCommand, error) {
	lim := resp.DefaultReplyLimits
	v, err := resp.ReadValue(bufio.NewReaderSize(bytes.NewReader(raw), 64<<10), lim)
	if err != nil {
		return nil, fmt.Errorf("commanddata.resp: %w", err)
	}
	if v.Kind != resp.KindMap {
		return nil, fmt.Errorf("commanddata.resp: a %q, not a map", v.Kind)
	}
	m := make(map[string]*redisCommand, len(v.Elems)/2)
	for i := 0; i < len(v.Elems); i += 2 {
		name, e := v.Elems[i].Str, v.Elems[i+1]
		if len(e.Elems) != 2 || e.Elems[0].Kind != resp.KindMap || len(e.Elems[1].Elems) != 10 {
			return nil, fmt.Errorf("commanddata.resp: malformed entry %q", name)
		}
		m[name] = &redisCommand{docs: e.Elems[0], info: e.Elems[1]}
	}
	return m, nil
}

// keySpec is one parsed key spec of a recorded COMMAND INFO entry
// (server.h's keySpec).
type keySpec struct {
	flags      []string // as COMMAND INFO prints them: RO, RW, OW, RM, access...
	notKey     bool
	incomplete bool
	variable   bool // variable_flags: Redis asks the command's getkeys_proc

	// begin_search: index > 0, or a keyword searched from startFrom
	// (negative: from the end, backwards).
	index     int
	keyword   string
	startFrom int

	// find_keys: a range (lastKey relative to the first key, keyStep,
	// limit) or, when keynum, a key count at keynumIdx then keys from
	// firstKey.
	keynum                   bool
	lastKey, keyStep, limit  int
	keynumIdx, firstKeyOff   int
	unknownBegin, unknownFnd bool
}

// field returns a recorded map's value for key.
func field(m resp.Value, key string) (resp.Value, bool) {
	for i := 0; i+1 < len(m.Elems); i += 2 {
		if m.Elems[i].Str == key {
			return m.Elems[i+1], true
		}
	}
	return resp.Value{}, false
}

func intField(m resp.Value, key string) int {
	v, _ := field(m, key)
	return int(v.Int)
}

// keySpecs parses rc's key specs.
func (rc *redisCommand) keySpecs() []keySpec {
	var out []keySpec
	for _, m := range rc.info.Elems[infoKeySpecs].Elems {
		var ks keySpec
		fl, _ := field(m, "flags")
		for _, f := range fl.Elems {
			ks.flags = append(ks.flags, f.Str)
			switch f.Str {
			case "not_key":
				ks.notKey = true
			case "incomplete":
				ks.incomplete = true
			case "variable_flags":
				ks.variable = true
			}
		}
		bs, _ := field(m, "begin_search")
		bsType, _ := field(bs, "type")
		bsSpec, _ := field(bs, "spec")
		switch bsType.Str {
		case "index":
			ks.index = intField(bsSpec, "index")
		case "keyword":
			kw, _ := field(bsSpec, "keyword")
			ks.keyword = strings.ToLower(kw.Str) // eqFold compares with lower case
			ks.startFrom = intField(bsSpec, "startfrom")
		default:
			ks.unknownBegin = true
		}
		fk, _ := field(m, "find_keys")
		fkType, _ := field(fk, "type")
		fkSpec, _ := field(fk, "spec")
		switch fkType.Str {
		case "range":
			ks.lastKey = intField(fkSpec, "lastkey")
			ks.keyStep = intField(fkSpec, "keystep")
			ks.limit = intField(fkSpec, "limit")
		case "keynum":
			ks.keynum = true
			ks.keynumIdx = intField(fkSpec, "keynumidx")
			ks.firstKeyOff = intField(fkSpec, "firstkey")
			ks.keyStep = intField(fkSpec, "keystep")
		default:
			ks.unknownFnd = true
		}
		out = append(out, ks)
	}
	return out
}

// keyRef is a key's position in argv and the flags of the spec that found
// it (getKeysResult's keyReference).
type keyRef struct {
	pos   int
	flags []string
}

// keysBySpecs is getKeysUsingKeySpecs with GET_KEYSPEC_DEFAULT: the keys
// of argv found by specs, or ok false when a spec does not fit argv (or is
// incomplete), as Redis's -1.
func keysBySpecs(specs []keySpec, argv [][]byte) (keys []keyRef, ok bool) {
	argc := len(argv)
	for _, ks := range specs {
		if ks.notKey {
			continue
		}
		first := 0
		switch {
		case ks.unknownBegin:
			return nil, false
		case ks.keyword == "":
			first = ks.index
		default:
			start, end := ks.startFrom, argc-1
			if ks.startFrom <= 0 {
				start, end = argc+ks.startFrom, 1
			}
			for i := start; i != end; {
				if i >= argc || i < 1 {
					break
				}
				if eqFold(argv[i], ks.keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue
			}
		}
		var last, step int
		switch {
		case ks.unknownFnd:
			return nil, false
		case ks.keynum:
			step = ks.keyStep
			if ks.keynumIdx >= argc || first+ks.keynumIdx >= argc {
				return nil, false
			}
			n, isInt := parseInt(argv[first+ks.keynumIdx])
			if !isInt || n < 0 || n > int64(argc) {
				return nil, false
			}
			first += ks.firstKeyOff
			last = first + int(n) - 1
		default:
			step = ks.keyStep
			switch {
			case ks.lastKey >= 0:
				last = first + ks.lastKey
			case ks.limit == 0:
				last = argc + ks.lastKey
			default:
				last = first + ((argc-first)/ks.limit + ks.lastKey)
			}
		}
		if last >= argc || last < first || first >= argc {
			return nil, false
		}
		for i := first; i <= last; i += max(step, 1) {
			keys = append(keys, keyRef{pos: i, flags: ks.flags})
		}
		if ks.incomplete {
			return nil, false
		}
	}
	return keys, true
}

// setKeyFlags is setGetKeys: SET's key is overwritten, unless GET also
// reads it.
func setKeyFlags(argv [][]byte) []string {
	for _, a := range argv[3:] {
		if eqFold(a, "get") {
			return []string{"RW", "access", "update"}
		}
	}
	return []string{"OW", "update"}
}

// commandKeyRefs is getKeysFromCommandWithSpecs for Vigil's commands: key
// specs when Redis's are recorded and reliable, SET's getkeys_proc, and
// otherwise the table's FirstKey/LastKey/Step with derived flags. hasKeys
// is doesCommandHaveKeys.
func commandKeyRefs(cmd *Command, argv [][]byte) (keys []keyRef, hasKeys bool) {
	if cmd.FullName() == "set" && len(argv) >= 3 {
		return []keyRef{{pos: 1, flags: setKeyFlags(argv)}}, true
	}
	if cmd.FullName() == "sort" && len(argv) >= 2 { // sortGetKeys
		return sortGetKeys(argv), true
	}
	if cmd.FullName() == "sort_ro" && len(argv) >= 2 { // sortROGetKeys
		return []keyRef{{pos: 1, flags: []string{"RO", "access"}}}, true
	}
	if cmd.FullName() == "migrate" && len(argv) >= 6 { // migrateGetKeys (cmd_migrate.go)
		return migrateGetKeys(argv), true
	}
	if cmd.FullName() == "bitfield" && len(argv) >= 2 { // bitfieldGetKeys
		return []keyRef{{pos: 1, flags: bitfieldKeyFlags(argv)}}, true
	}
	if rc := redisCommands()[cmd.FullName()]; rc != nil {
		specs := rc.keySpecs()
		variable := false
		for _, ks := range specs {
			if !ks.notKey {
				hasKeys = true
			}
			variable = variable || ks.variable
		}
		if !hasKeys {
			return nil, false
		}
		if !variable {
			if keys, ok := keysBySpecs(specs, argv); ok {
				return keys, true
			}
			return nil, true // Vigil has no getkeys_proc to fall back on
		}
	}
	if cmd.FirstKey <= 0 {
		return nil, hasKeys
	}
	flags := keySpecFlags(cmd)
	for _, p := range commandKeys(cmd, argv) {
		keys = append(keys, keyRef{pos: p, flags: flags})
	}
	return keys, true
}
