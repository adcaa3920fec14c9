// Package specs holds the experiment specs that ship with beluga: the
// quickstart and the full BeLUGA grid for SENT.
package specs

import "embed"

// FS holds the spec files.
//
//go:embed *.yaml
var FS embed.FS
