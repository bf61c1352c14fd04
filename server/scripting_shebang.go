package server

import (
	"bytes"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
	vlua "github.com/vigil-kv/vigil/server/lua"
)

// evalShebangFlags is evalExtractShebangFlags: the flags of a script that
// starts with "#!lua [flags=a,b]" (Redis 7's per-script flags, which take
// it out of eval's compatibility mode) and the length of the shebang line
// (the code compiled starts at its newline, so line numbers stay the
// user's); msg is the error text (without "ERR ") for a bad shebang.
func evalShebangFlags(body []byte) (flags vlua.Flags, n int, msg string) {
	nl := bytes.IndexByte(body, '\n')
	if nl < 0 {
		return 0, 0, "Invalid script shebang"
	}
	parts, err := redisutil.SplitArgs(string(body[:nl]))
	if err != nil || len(parts) == 0 {
		return 0, 0, "Invalid engine in script shebang"
	}
	if parts[0] != "#!lua" {
		return 0, 0, "Unexpected engine in script shebang: " + parts[0]
	}
	for _, p := range parts[1:] {
		list, ok := strings.CutPrefix(p, "flags=")
		if !ok {
			return 0, 0, "Unknown lua shebang option: " + p
		}
		if list == "" {
			continue
		}
		for _, name := range strings.Split(list, ",") {
			found := false
			for _, fl := range vlua.FlagNames {
				if fl.Name == name {
					flags |= fl.F
					found = true
					break
				}
			}
			if !found {
				return 0, 0, "Unexpected flag in script shebang: " + name
			}
		}
	}
	return flags, nl, ""
}

// evalCheckedFlags is evalGetCommandFlags: the script flags processCommand
// sees for an EVAL/EVALSHA (_RO) call, and whether the script has a
// shebang (false: compatibility mode, the command's own flags apply).
func (s *Server) evalCheckedFlags(cmd *Command, args [][]byte) (vlua.Flags, bool) {
	bySha := cmd.FullName() == "evalsha" || cmd.FullName() == "evalsha_ro"
	if bySha {
		if len(args[1]) != 40 || s.lua == nil || !s.lua.e.HasShebangScripts() {
			return 0, false // no shebang script cached: nothing to look up
		}
		return s.lua.e.ShebangFlags(strings.ToLower(string(args[1])))
	}
	if !bytes.HasPrefix(args[1], []byte("#!")) {
		return 0, false
	}
	if s.lua != nil {
		if f, ok := s.lua.e.ShebangFlags(vlua.SHA1Hex(args[1])); ok {
			return f, true
		}
	}
	f, _, msg := evalShebangFlags(args[1])
	return f, msg == ""
}
