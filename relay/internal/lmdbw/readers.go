package lmdbw

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/PowerDNS/lmdb-go/lmdb"
)

// WaitReaders waits until no read transaction of this process is open on
// the environment, for up to timeout, and reports whether none is. Call
// it before Close: a query whose consumer has returned may still be
// ending its transaction, and mdb_env_close under a live transaction
// crashes the process (SIGSEGV in mdb_txn_commit).
func (w *Writer) WaitReaders(timeout time.Duration) (bool, error) {
	env := w.env
	deadline := time.Now().Add(timeout)
	for {
		n, err := activeReaders(env)
		if err == nil && n == 0 {
			// mdb_txn_end marks the slot free before it has finished
			// with the environment's memory (it still updates the db
			// flags and frees the transaction): give the thread that
			// ended it time to return from C, then look again.
			time.Sleep(readerSettle)
			n, err = activeReaders(env)
		}
		if err != nil || n == 0 {
			return err == nil, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		time.Sleep(time.Millisecond) // LMDB has nothing to wait on
	}
}

// readerSettle is how long WaitReaders lets a transaction that has just
// released its reader slot finish in C before reporting none open.
const readerSettle = 20 * time.Millisecond

// activeReaders counts this process's reader slots that hold a
// transaction: mdb_reader_list prints "pid thread txnid" per slot in use,
// txnid "-" for a slot without one (the environment is opened with MDB_NOTLS, so
// a slot is released with its transaction anyway).
func activeReaders(env *lmdb.Env) (int, error) {
	pid, n := strconv.Itoa(os.Getpid()), 0
	err := env.ReaderList(func(line string) error {
		if f := strings.Fields(line); len(f) == 3 && f[0] == pid && f[2] != "-" {
			n++
		}
		return nil
	})
	return n, err
}
