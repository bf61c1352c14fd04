package configs

import "embed"

// Examples holds configs/examples/: master.conf, replica.conf and
// sentinel.conf, the documented templates of the local deployment that
// `vigil up` (internal/deploy) starts. They are embedded so the vigil binary
// works from any directory.
//
//go:embed examples/*.conf
var Examples embed.FS
