// Package configs owns the typed configuration of vigil-server: Default(),
// Validate(), the directive table that drives the config file parser,
// CONFIG GET/SET/REWRITE, and the redis.conf tokenizer (sdssplitargs rules) that
// the sentinel configuration reuses. configs/examples holds shipped files.
//
// It imports the standard library only.
package configs
