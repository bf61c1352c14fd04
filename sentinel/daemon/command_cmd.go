package daemon

//go:generate go run gencommand.go

import (
	"github.com/vigil-kv/vigil/internal/redistext"

	"bufio"
	"bytes"
	_ "embed"
	"strings"

	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redisutil"
	"github.com/vigil-kv/vigil/internal/resp"
)

// The replies of redis-sentinel 7.0.15 to COMMAND and COMMAND DOCS, recorded
// in RESP3 (HELLO 3); they are re-encoded for each client's protocol.
var (
	//go:embed command_info.resp
	commandInfoRaw []byte
	//go:embed command_docs.resp
	commandDocsRaw []byte

	commandInfos []resp.Value          // COMMAND's entries, in Redis's order
	commandInfo  map[string]resp.Value // by name
	commandDocs  map[string]resp.Value // COMMAND DOCS value by name
	commandNames []string              // COMMAND's order, for DOCS
)

func init() {
	lim := resp.ReplyLimits{MaxBulk: 1 << 20, MaxElems: 1 << 16, MaxDepth: 32}
	v, err := resp.ReadValue(bufio.NewReader(bytes.NewReader(commandInfoRaw)), lim)
	if err != nil {
		panic("command_info.resp: " + err.Error())
	}
	commandInfos = v.Elems
	commandInfo = map[string]resp.Value{}
	for _, e := range commandInfos {
		commandInfo[e.Elems[0].Str] = e
		commandNames = append(commandNames, e.Elems[0].Str)
	}
	d, err := resp.ReadValue(bufio.NewReader(bytes.NewReader(commandDocsRaw)), lim)
	if err != nil {
		panic("command_docs.resp: " + err.Error())
	}
	commandDocs = map[string]resp.Value{}
	for i := 0; i+1 < len(d.Elems); i += 2 {
		commandDocs[d.Elems[i].Str] = d.Elems[i+1]
	}
}

// commandListNames is COMMAND LIST: each command followed by its
// subcommands.
func commandListNames() []struct{ name, acl string } {
	var out []struct{ name, acl string }
	add := func(e resp.Value) {
		var cats []string
		for _, c := range e.Elems[6].Elems {
			cats = append(cats, strings.TrimPrefix(c.Str, "@"))
		}
		out = append(out, struct{ name, acl string }{e.Elems[0].Str, "," + strings.Join(cats, ",") + ","})
	}
	for _, e := range commandInfos {
		add(e)
		for _, sub := range e.Elems[9].Elems {
			add(sub)
		}
	}
	return out
}

// cmdCommand is COMMAND and its subcommands over the 15 commands of
// sentinel mode.
func cmdCommand(c *client, argv [][]byte) {
	if len(argv) == 1 {
		c.w.ArrayLen(len(commandInfos))
		for _, e := range commandInfos {
			c.w.Value(e)
		}
		return
	}
	args := strs(argv)
	sub := strings.ToLower(args[1])
	arity := map[string]int{"count": 2, "list": -2, "info": -2, "docs": -2, "help": 2, "getkeys": -4, "getkeysandflags": -4}
	a, ok := arity[sub]
	if !ok {
		c.w.Error(errUnknownSubcommand(args[1], "COMMAND"))
		return
	}
	if !netshell.ArityOK(a, len(args)) {
		c.w.Error(errWrongArgs("command|" + sub))
		return
	}
	switch sub {
	case "count":
		c.w.Int(int64(len(commandInfos)))
	case "list":
		names := commandListNames()
		var out []string
		switch {
		case len(args) == 2:
			for _, n := range names {
				out = append(out, n.name)
			}
		case len(args) == 5 && strings.EqualFold(args[2], "filterby"):
			switch strings.ToLower(args[3]) {
			case "module":
			case "aclcat":
				for _, n := range names {
					if strings.Contains(n.acl, ","+strings.ToLower(args[4])+",") {
						out = append(out, n.name)
					}
				}
			case "pattern":
				for _, n := range names {
					if redisutil.StringMatch(args[4], n.name, true) {
						out = append(out, n.name)
					}
				}
			default:
				c.w.Error(errSyntax)
				return
			}
		default:
			c.w.Error(errSyntax)
			return
		}
		c.w.ArrayLen(len(out))
		for _, n := range out {
			c.w.BulkString(n)
		}
	case "info":
		if len(args) == 2 {
			c.w.ArrayLen(len(commandInfos))
			for _, e := range commandInfos {
				c.w.Value(e)
			}
			return
		}
		c.w.ArrayLen(len(args) - 2)
		for _, n := range args[2:] {
			if e, ok := commandInfo[strings.ToLower(n)]; ok {
				c.w.Value(e)
			} else {
				c.w.Null()
			}
		}
	case "docs":
		names := commandNames
		if len(args) > 2 {
			names = nil
			for _, n := range args[2:] {
				if _, ok := commandDocs[strings.ToLower(n)]; ok {
					names = append(names, strings.ToLower(n))
				}
			}
		}
		c.w.MapLen(len(names))
		for _, n := range names {
			c.w.BulkString(n)
			c.w.Value(commandDocs[n])
		}
	case "getkeys", "getkeysandflags":
		// lookupCommand(argv+2, argc-2): a container's subcommand must
		// exist too. None of sentinel mode's commands has keys.
		if cmd := netshell.Lookup(c.d.cmds, argv[2]); cmd == nil || (len(args) > 3 && cmd.IsContainer() && cmd.Sub(argv[3]) == nil) {
			c.w.Error("ERR Invalid command specified")
		} else {
			c.w.Error("ERR The command has no key arguments")
		}
	case "help":
		c.help("COMMAND", commandHelp)
	}
}

var commandHelp = redistext.CommandHelp
