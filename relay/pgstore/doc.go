// Package pgstore is a PostgreSQL event store for the relay's scale-out
// mode: several agentnode instances on one database act as one relay.
//
//	st, err := pgstore.Open(ctx, "postgres://agentnode@db/agentnode")
//	defer st.Close()
//	err = st.Save(ctx, evt) // nil, ErrDuplicate, ErrSuperseded or ErrEphemeral
//	evts, err := st.Query(ctx, nostr.Filter{Kinds: []int{1}, Limit: 20})
//	n, err := st.Count(ctx, filter)
package pgstore
