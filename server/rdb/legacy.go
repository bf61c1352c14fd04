package rdb

import "github.com/vigil-kv/vigil/server/keyspace"

// loadLegacy loads the types Redis 7.0 reads but no longer writes.
func loadLegacy(rd *reader, t int, enc keyspace.EncodingConfig) (keyspace.Value, error) {
	switch t {
	case TypeModule, TypeModule2:
		id, err := rd.len()
		if err != nil {
			return nil, err
		}
		return nil, rd.errorf("The RDB file contains module data I can't load: no matching module type '%s' (module type %s not supported)", moduleName(id), moduleName(id))
	}
	return nil, rd.errorf("Unknown RDB encoding type %d", t)
}
