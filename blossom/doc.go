// Package blossom is the node's Blossom server (BUD-01, 02, 04, 06, 11)
// and the client the CLI and installs use: blobs addressed by their
// SHA-256, stored on disk under one directory, uploaded and deleted with
// kind-24242 authorization events.
//
// The server streams every upload to a temporary file while hashing it,
// fsyncs it and renames it into place; nothing a client sends is held in
// memory. Every path a stranger reaches is bounded: the blob size, the
// uploads in flight, the quota of each uploader and of the whole store,
// the list page, and who may upload at all (Options.MayUpload).
//
//	store, err := blossom.OpenStore("/data/blobs")
//	srv := blossom.NewServer(store, blossom.Options{BaseURL: "https://node.example",
//		MayUpload: func(ctx context.Context, pk string) bool { return pk == owner }})
//	mux.Handle("/", srv.Wrap(relayHandler)) // Blossom paths, else the relay
//
// Layout of the directory (docs/BLOSSOM.md): data/<2 hex>/<sha256> the
// blobs, owners/<pubkey>/<sha256> each uploader's descriptors, refs/<sha256>/<pubkey>
// who holds a blob (a blob goes when its last holder deletes it), tmp/
// uploads in progress.
package blossom
