// Package configs owns the typed configuration of vigil-server: Default(),
// Validate(), the directive table that drives the config file parser,
// CONFIG GET/SET/REWRITE, and the redis.conf tokenizer (sdssplitargs rules) that
// the sentinel configuration reuses. configs/examples holds shipped files.
//
// It follows Redis 7.0.15's config.c, checked against Debian's redis-server
// 7.0.15 (testdata holds its CONFIG GET defaults and its stock redis.conf):
//
//   - table.go, directive.go: one Directive per configuration directive
//     (name, alias, type, bounds, default, flags such as Immutable or
//     Sensitive) with its accessor into Config. Everything else is derived
//     from this table.
//   - load.go: Load reads the file, stdin and the --directive arguments as
//     redis-server does (include, rename-command, first error fatal) and
//     reports errors in Redis's "*** FATAL CONFIG FILE ERROR ***" form.
//   - command.go: Config.Get and Config.Set are CONFIG GET and CONFIG SET,
//     Redis's reply texts included; Config.OnSet lets the server apply a
//     change or refuse it.
//   - rewrite.go: Config.Rewrite is CONFIG REWRITE, in place and atomic;
//     RewriteState is reusable for the sentinel's own file.
//   - splitargs.go: ParseLines, the tokenizer shared with the sentinel;
//     lines are split by internal/redisutil.SplitArgs (sdssplitargs) and
//     values quoted by redisutil.Quote (sdscatrepr).
//
// It imports the standard library and the leaf internal/redisutil only.
package configs
