// Package state is the Agent State Model runtime (Nuwa NIP-8): the state.*
// tools capabilities call (create, update, query, delete, plus get and
// history), the core models every user gets, and the lifecycle task that
// ages state.
//
// A Runtime sits on a store.Store (SQLite, one table set per namespace,
// an op log per memory scope, documents materialised from CRDTs) and a
// schema.Registry (the core models plus every capability's schemas). Every
// call names a Caller: agent, owner, capability, memory scope, granted verbs
// (metadata.permissions.require) and storage.large.
//
// Rules enforced on every call:
//
//   - a verb the capability did not declare is PERMISSION_DENIED, and so is
//     a cap namespace other than the caller's own;
//   - reads see only what visibility allows (private: the owning agent and
//     its owner; shared: every agent of that owner; public: anyone), in the
//     caller's memory scope; a document the caller cannot see is NOT_FOUND;
//   - writes are validated against the schema after the patch applies, and
//     nothing is written if anything fails; objects over MaxObjectSize (32
//     MiB) need storage.large (TOO_LARGE).
//
// Updates are RFC 6902 JSON Patches (plus $inc and $push) that the runtime
// turns into CRDT ops per field: a replace on an lww field is a set, an add
// to a grow_only_set an add, a new text on an rga_text field the minimal
// diff as RGA inserts and deletes, a $push on a log an append. Errors are
// *Error values with stable codes (see the Code constants).
//
// # Use
//
//	rt, err := state.Open(ctx, state.Options{Dir: dataDir})
//	defer rt.Close(ctx)
//	_, err = rt.Register(ctx, "did:nuwa:cap:note@1.0.0", noteSchema)
//	c := state.CallerFromACP(agentPK, ownerPK, "did:nuwa:cap:note@1.0.0", "sc:note",
//		[]string{"state.create", "state.update", "state.query"})
//	doc, err := rt.Create(ctx, c, "did:nuwa:state:note#v1", []byte(`{"title":"hi",...}`))
//	doc, err = rt.Update(ctx, c, "did:nuwa:state:note#v1", doc.ID,
//		[]byte(`[{"op":"add","path":"/tags/-","value":"todo"}]`))
//	res, err := rt.Query(ctx, c, []byte(`{"from":"did:nuwa:state:note#v1","where":{"tags":{"$contains":"todo"}}}`))
//	if errors.Is(err, state.ErrPermissionDenied) { ... }
//
//	lc := state.NewLifecycle(rt, state.LifecycleOptions{})
//	go lc.Run(ctx, time.Hour) // the caller owns and waits for this goroutine
package state
