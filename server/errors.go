package server

import (
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/redistext"
)

// Redis 7.0 error replies, in one place (docs/architecture.md, "Errors: one
// source of truth"). Each is the text after the leading '-'. The texts
// vigil-sentinel answers too are internal/redistext's, re-exported here;
// errors_admin.go, errors_data.go and errors_hash.go hold those of one area.
const (
	ErrSyntax          = redistext.ErrSyntax
	ErrNotInteger      = redistext.ErrNotInteger
	ErrNotFloat        = "ERR value is not a valid float"
	ErrWrongType       = "WRONGTYPE Operation against a key holding the wrong kind of value"
	ErrNoSuchKey       = "ERR no such key"
	ErrNoAuth          = redistext.ErrNoAuth
	ErrWrongPass       = redistext.ErrWrongPass
	ErrAuthNotSet      = redistext.ErrAuthNotSet
	ErrDBIndex         = "ERR DB index is out of range"
	ErrMaxClients      = netshell.ErrMaxClients
	ErrIncrOverflow    = "ERR increment or decrement would overflow"
	ErrIncrNaN         = "ERR increment would produce NaN or Infinity"
	ErrStringTooLong   = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
	ErrInvalidExpire   = "ERR invalid expire time in '%s' command"
	ErrSameObject      = "ERR source and destination objects are the same"
	ErrNoProto         = redistext.ErrNoProto
	ErrReadOnly        = "READONLY You can't write against a read only replica."
	ErrDebugDisabled   = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
	ErrOffsetRange     = "ERR offset is out of range"
	ErrTimeout         = "ERR timeout is not an integer or out of range"
	ErrPubSubContext   = "ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
	ErrNoSuchClient    = redistext.ErrNoSuchClient
	ErrClientNameSpace = redistext.ErrClientName

	// ProtectedModeDenied is Redis 7.0's networking.c message to non-loopback
	// clients in protected mode.
	ProtectedModeDenied = redistext.ErrProtectedMode
)

// The shared formats (redistext): the arity error, unknown subcommand and
// unknown command replies.
var (
	errWrongArgs         = redistext.WrongArgs
	errUnknownSubcommand = redistext.UnknownSubcommand
	errUnknownCommand    = redistext.UnknownCommand[[]byte]
	trunc                = redistext.Trunc
)

// Scripting (scripting.go).
const ErrNoScript = "NOSCRIPT No matching script. Please use EVAL."
