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

// COMMAND and its subcommands (netshell's rows) over the 15 commands of
// sentinel mode.
func commandSubcommands() []*command {
	return netshell.CommandSubcommands(map[string]handler{
		"count":           func(c *client, _ [][]byte) { c.w.Int(int64(len(commandInfos))) },
		"docs":            cmdCommandDocs,
		"getkeys":         cmdCommandGetKeys,
		"getkeysandflags": cmdCommandGetKeys,
		"help":            func(c *client, _ [][]byte) { c.help("COMMAND", redistext.CommandHelp) },
		"info":            cmdCommandInfo,
		"list":            cmdCommandList,
	})
}

// cmdCommand is COMMAND without a subcommand: every command's entry.
func cmdCommand(c *client, _ [][]byte) {
	c.w.ArrayLen(len(commandInfos))
	for _, e := range commandInfos {
		c.w.Value(e)
	}
}

func cmdCommandList(c *client, argv [][]byte) {
	names := commandListNames()
	var out []string
	switch {
	case len(argv) == 2:
		for _, n := range names {
			out = append(out, n.name)
		}
	case len(argv) == 5 && redisutil.EqFold(argv[2], "filterby"):
		switch {
		case redisutil.EqFold(argv[3], "module"):
		case redisutil.EqFold(argv[3], "aclcat"):
			cat := "," + strings.ToLower(string(argv[4])) + ","
			for _, n := range names {
				if strings.Contains(n.acl, cat) {
					out = append(out, n.name)
				}
			}
		case redisutil.EqFold(argv[3], "pattern"):
			for _, n := range names {
				if redisutil.StringMatch(string(argv[4]), n.name, true) {
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
}

func cmdCommandInfo(c *client, argv [][]byte) {
	if len(argv) == 2 {
		cmdCommand(c, argv)
		return
	}
	c.w.ArrayLen(len(argv) - 2)
	for _, n := range argv[2:] {
		if e, ok := commandInfo[strings.ToLower(string(n))]; ok {
			c.w.Value(e)
		} else {
			c.w.Null()
		}
	}
}

func cmdCommandDocs(c *client, argv [][]byte) {
	names := commandNames
	if len(argv) > 2 {
		names = nil
		for _, n := range argv[2:] {
			if name := strings.ToLower(string(n)); hasDocs(name) {
				names = append(names, name)
			}
		}
	}
	c.w.MapLen(len(names))
	for _, n := range names {
		c.w.BulkString(n)
		c.w.Value(commandDocs[n])
	}
}

func hasDocs(name string) bool {
	_, ok := commandDocs[name]
	return ok
}

// cmdCommandGetKeys is COMMAND GETKEYS and GETKEYSANDFLAGS:
// lookupCommand(argv+2, argc-2), where a container's subcommand must exist
// too. None of sentinel mode's commands has keys.
func cmdCommandGetKeys(c *client, argv [][]byte) {
	if cmd := netshell.Lookup(c.d.cmds, argv[2]); cmd == nil || (len(argv) > 3 && cmd.IsContainer() && cmd.Sub(argv[3]) == nil) {
		c.w.Error("ERR Invalid command specified")
	} else {
		c.w.Error("ERR The command has no key arguments")
	}
}
