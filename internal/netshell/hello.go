package netshell

import (
	"github.com/vigil-kv/vigil/internal/redistext"
	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Hello is what HELLO [protover [AUTH username password] [SETNAME name]]
// asks for.
type Hello struct {
	Proto    int    // 2 or 3; 0 when no protover was given (unchanged)
	Name     []byte // SETNAME's name, when HaveName
	HaveName bool
}

// ParseHello parses HELLO's arguments as helloCommand does, for both
// binaries. Each AUTH option is handed to auth as it is met, with the
// index of its username (the password follows); when auth reports
// failure parsing stops with the wrong-password error. errText is the
// error to reply ("" when the arguments are good); the caller then
// checks that the client is authenticated, validates and sets the name
// and the protocol, and replies with redistext.Hello.
func ParseHello(args [][]byte, auth func(userAt int) bool) (h Hello, errText string) {
	i := 1
	if len(args) >= 2 {
		v, ok := redisutil.String2ll(args[1])
		if !ok {
			return h, "ERR Protocol version is not an integer or out of range"
		}
		if v < 2 || v > 3 {
			return h, redistext.ErrNoProto
		}
		h.Proto = int(v)
		i = 2
	}
	for ; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case keyword(args[i], "auth") && more >= 2:
			if !auth(i + 1) {
				return h, redistext.ErrWrongPass
			}
			i += 2
		case keyword(args[i], "setname") && more >= 1:
			h.Name, h.HaveName = args[i+1], true
			i++
		default:
			return h, "ERR Syntax error in HELLO option '" + string(args[i]) + "'"
		}
	}
	return h, ""
}

// keyword compares an argument to a lower-case keyword, ASCII
// case-insensitively (strcasecmp).
func keyword(b []byte, lower string) bool { return redisutil.EqFold(b, lower) }
