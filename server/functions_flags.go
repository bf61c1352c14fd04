package server

import vlua "github.com/vigil-kv/vigil/server/lua"

// Functions' flags as command flags (server.c getCommandFlags ->
// fcallGetCommandFlags -> scriptFlagsToCmdFlags): processCommand checks
// FCALL and FCALL_RO of a known function with the flags its declaration
// implies, so an FCALL of a function without no-writes or allow-oom is
// refused with the plain -OOM under maxmemory, one without allow-stale
// with the plain -MASTERDOWN on a stale replica, and one that may write
// with -READONLY on a read-only replica, before the function runs.

// scriptCmdFlags returns the Flags processCommand's checks use for an
// FCALL/FCALL_RO of a function with flags ff (its static flags cmdFlags).
func scriptCmdFlags(cmdFlags Flag, ff vlua.Flags) Flag {
	cmdFlags &^= FlagStale | FlagDenyOOM | FlagWrite | FlagMayReplicate
	if ff&(vlua.AllowOOM|vlua.NoWrites) == 0 {
		cmdFlags |= FlagDenyOOM
	}
	if ff&vlua.NoWrites == 0 {
		cmdFlags |= FlagWrite
	}
	if ff&vlua.AllowStale != 0 {
		cmdFlags |= FlagStale
	}
	return cmdFlags
}

// checkedCmd is the command processCommand's checks see for cmd called
// with args: cmd itself, or for FCALL and FCALL_RO of a registered
// function, and EVAL/EVALSHA of a script with a "#!lua" shebang, a copy
// carrying the flags its declaration implies. Cheap for every other
// command: one flag test.
func (s *Server) checkedCmd(cmd *Command, args [][]byte) *Command {
	if cmd.Flags&FlagNoMandatoryKeys == 0 || len(args) < 2 {
		return cmd
	}
	var flags vlua.Flags
	switch cmd.FullName() {
	case "fcall", "fcall_ro":
		if s.fns == nil {
			return cmd
		}
		f := s.fns.cur.funcs[fnKey(string(args[1]))]
		if f == nil {
			return cmd
		}
		flags = f.Flags
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
		f, shebang := s.evalCheckedFlags(cmd, args) // scripting_shebang.go
		if !shebang {
			return cmd
		}
		flags = f
	default:
		return cmd
	}
	chk := *cmd
	chk.Flags = scriptCmdFlags(cmd.Flags, flags)
	return &chk
}
