// Package crdt is the conflict-free core of the Agent State Model (Nuwa
// NIP-8): the CRDTs that x-asm schemas name, the op envelope they exchange,
// and the hybrid logical clock that stamps it.
//
// The package is pure: no I/O, no goroutines, standard library only. The
// state store keeps ops in its op log and ships them in signed events; this
// package only says what an op means.
//
// # Ops and clocks
//
// Every change is an Op: plain data with stable JSON field names, carrying
// a unique OpID (replica, counter) and an HLC Timestamp (wall ms, logical,
// replica). One HLC per replica stamps ops for all of its CRDTs; its counter
// is a Lamport counter, so an op's id is greater than every id its replica
// had seen.
//
// # CRDTs
//
// New(name) makes a CRDT from its x-crdt keyword: lww_register,
// mv_register, rga_text, grow_only_set, or_map, counter, flag, log_rga
// (append_only is read as log_rga), and rga_list for list containers.
// Unknown names give ErrUnknownCRDT. DefaultCRDT maps the x-asm container
// kinds (object, map, list, log) to their defaults; NewObject makes an
// object's or_map with its per-field x-crdt.
//
// Every CRDT's Apply is idempotent and order-independent; ops that arrive
// before an op they depend on are buffered, never dropped. Most types also
// have a state Merge. Local edits (Set, Insert, Add, Append, ...) need a
// clock (Bind); they apply the op and return it for shipping.
//
// RGAText is built for real editing traces: run-length spans in a B+tree
// counted by visible length, a per-replica id index, and tombstones that
// coalesce. See docs/CRDT.md for formats, rules and measured figures.
//
// # Use
//
//	clock := crdt.NewHLC("agent-1", nil)
//	doc := crdt.NewRGAText()
//	doc.Bind(clock)
//	ops := doc.Insert(0, "hello")            // store and ship ops
//	ops = append(ops, doc.Insert(5, " world")...)
//
//	peer := crdt.NewRGAText()                 // on another replica
//	for _, op := range ops {
//		if err := peer.Apply(op); err != nil { ... }
//	}
//	peer.String()                             // "hello world"
package crdt
