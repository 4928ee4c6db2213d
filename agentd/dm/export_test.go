package dm

import "time"

// OpenFileLedger opens the JSON-file ledger at path ("" memory only) that
// Run uses when Config.Ledger is nil, for the conformance suite and the
// benchmarks.
func OpenFileLedger(path string, window time.Duration) (Ledger, error) {
	return openLedger(path, window)
}
