package directory

import "github.com/nbd-wtf/go-nostr"

// Ingest applies evt as if the Source had stored it (benchmarks fill a
// directory this way without paying the relay's per-event fsync).
func (d *Directory) Ingest(evt *nostr.Event) { d.ingest(evt) }
