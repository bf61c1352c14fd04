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

// HelloCommand is helloCommand for both binaries: the parse (ParseHello,
// with authenticate for each AUTH option), then authed (whether the client
// is authenticated now), the name and the protocol, and the reply of
// redistext.Hello with the binary's version, mode and role ("" for none).
func HelloCommand(c Session, argv [][]byte, authenticate func(userAt int) bool, authed func() bool, version, mode, role string) {
	h, errText := ParseHello(argv, authenticate)
	w := c.Writer()
	if errText != "" {
		w.Error(errText)
		return
	}
	if !authed() {
		w.Error(redistext.ErrHelloNoAuth)
		return
	}
	if h.HaveName {
		if !redistext.ValidClientName(h.Name) {
			w.Error(redistext.ErrClientName)
			return
		}
		c.SetClientName(string(h.Name))
	}
	if h.Proto != 0 {
		c.SetProto(h.Proto)
	}
	redistext.Hello(w, version, c.ClientID(), mode, role)
}

// keyword compares an argument to a lower-case keyword, ASCII
// case-insensitively (strcasecmp).
func keyword(b []byte, lower string) bool { return redisutil.EqFold(b, lower) }
