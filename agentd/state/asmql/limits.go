package asmql

import "time"

// Limits bounds what one query may cost. Zero fields take the defaults.
type Limits struct {
	MaxLimit     int           // page size cap; larger limits are capped (default 1000)
	DefaultLimit int           // page size when the query gives none (default 50)
	MaxDepth     int           // where-expression nesting depth (default 16)
	MaxNodes     int           // where-expression nodes: And, Or, Not, Cmp (default 256)
	MaxInList    int           // elements of one $in / $nin list (default 1000)
	Timeout      time.Duration // execution time per Exec (default 2s)
	MaxRows      int           // if > 0, a further cap on rows per page (e.g. a caller's quota)
	MaxBytes     int           // size of the JSON text given to ParseLimits, and of a cursor (default 256 KiB)
}

// Defaults for Limits' zero fields.
const (
	DefaultMaxLimit     = 1000
	DefaultDefaultLimit = 50
	DefaultMaxDepth     = 16
	DefaultMaxNodes     = 256
	DefaultMaxInList    = 1000
	DefaultTimeout      = 2 * time.Second
	DefaultMaxBytes     = 256 << 10
)

// Fixed bounds that are not worth a knob.
const (
	maxSelect   = 64  // select entries
	maxOrder    = 8   // order entries
	maxPathLen  = 256 // bytes of one field path
	maxSegments = 32  // segments of one field path
	maxFromLen  = 512 // bytes of from
)

// withDefaults fills zero or negative fields with the defaults.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxLimit, DefaultMaxLimit)
	def(&l.DefaultLimit, DefaultDefaultLimit)
	def(&l.MaxDepth, DefaultMaxDepth)
	def(&l.MaxNodes, DefaultMaxNodes)
	def(&l.MaxInList, DefaultMaxInList)
	def(&l.MaxBytes, DefaultMaxBytes)
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// pageSize is the effective page size of a query limit (already >= 0).
func (l Limits) pageSize(limit int) int {
	n := limit
	if n == 0 {
		n = l.DefaultLimit
	}
	n = min(n, l.MaxLimit)
	if l.MaxRows > 0 {
		n = min(n, l.MaxRows)
	}
	return n
}
