// Package sim runs sentinel cores against fake Redis instances on a simulated
// network with a virtual clock, for the golden scenario tests in
// sentinel/testdata (see RunScript for the script language). Fake instances
// answer PING, INFO (with plausible replication offsets and slaveN lines),
// the SLAVEOF transaction and hello PUBLISH (forwarded to subscribed
// sentinels); the network supports latency, cuts and partitions; sentinels
// can be frozen, have their clock jumped, crash and restart from their last
// rewritten config. Everything is deterministic: the same script and seed
// produce the same output.
//
// It owns only test scaffolding and imports the sentinel core and the
// standard library.
package sim
