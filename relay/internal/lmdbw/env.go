package lmdbw

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/PowerDNS/lmdb-go/lmdb"
	eslmdb "github.com/fiatjaf/eventstore/lmdb"
)

// backendEnv returns the LMDB environment an initialised backend opened.
// eventstore v0.17.2 keeps it in the unexported field lmdbEnv and LMDB
// forbids opening one environment twice in a process, so the writer reads
// that field (docs/RELAY.md, library defects). A renamed or retyped field
// is an error, never a guess.
func backendEnv(b *eslmdb.LMDBBackend) (*lmdb.Env, error) {
	f := reflect.ValueOf(b).Elem().FieldByName("lmdbEnv")
	if !f.IsValid() || f.Type() != reflect.TypeFor[*lmdb.Env]() {
		return nil, fmt.Errorf("%w: eventstore/lmdb has no lmdbEnv *lmdb.Env field", ErrLayout)
	}
	env := *(**lmdb.Env)(unsafe.Pointer(f.UnsafeAddr()))
	if env == nil {
		return nil, fmt.Errorf("%w: backend not initialised", ErrLayout)
	}
	return env, nil
}

// dbis are the handles of the layout's named databases.
type dbis struct {
	raw, createdAt, id, kind, pubkey, pubkeyKind, tag, tag32, tagAddr, ptagKind lmdb.DBI
}

// openDBIs opens the backend's named databases (it created them in Init).
func openDBIs(env *lmdb.Env) (d dbis, err error) {
	named := []struct {
		name string
		dbi  *lmdb.DBI
	}{
		{"raw", &d.raw}, {"created_at", &d.createdAt}, {"id", &d.id}, {"kind", &d.kind},
		{"pubkey", &d.pubkey}, {"pubkeyKind", &d.pubkeyKind}, {"tag", &d.tag},
		{"tag32", &d.tag32}, {"tagaddr", &d.tagAddr}, {"ptagKind", &d.ptagKind},
	}
	err = env.Update(func(txn *lmdb.Txn) error {
		for _, n := range named {
			dbi, err := txn.OpenDBI(n.name, 0)
			if err != nil {
				return fmt.Errorf("%w: open database %q: %w", ErrLayout, n.name, err)
			}
			*n.dbi = dbi
		}
		return nil
	})
	return d, err
}
