// Package acl is the ACL of both binaries, as acl.c of Redis 7.0.15: users
// (flags, SHA-256 passwords, selectors), categories, command and first-arg
// rules, key patterns (~, %R~, %W~, %RW~) and channel patterns (&), the
// permission check of a command (ACLCheckAllUserCommandPerm), the rule text
// ACL LIST and GETUSER print (ACLDescribeUser, with the best-fit category
// algorithm), the ACL log (addACLLogEntry), the users of the configuration
// ("user" lines, requirepass) and of an ACL file (ACLLoadFromFile,
// ACLSaveToFile), and the replies of the ACL subcommands both binaries
// answer identically (GETUSER, LIST, USERS, CAT, GENPASS, LOG, DRYRUN and
// NOPERM texts).
//
// It does not know either binary's command table: each passes its own as a
// Table of CommandSpec (full name, categories) and, for each check, the
// command's argv and a KeyFunc giving its key positions and their read or
// write access. vigil-server (server/acl.go, server/cmd_acl.go) and
// vigil-sentinel (sentinel/daemon/acl.go) keep the glue: which client runs
// as which *User, disconnecting clients of deleted users or of subscribers
// whose channels were revoked, client info for the log.
//
// A Store holds no lock; its caller serialises access (the server's
// execution lock, the sentinel's aclState mutex). Time is an input (AddLog,
// WriteLog take now).
//
// Imports: the standard library, internal/resp and internal/redisutil only
// (checked by internal/archtest). Redis parallel: acl.c.
package acl
