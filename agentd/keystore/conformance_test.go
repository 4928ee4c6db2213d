package keystore_test

import (
	"path/filepath"
	"testing"

	"github.com/agentnode/agentnode/agentd/keystore"
	"github.com/agentnode/agentnode/agentd/keystore/keystoretest"
)

func TestStore_conformance(t *testing.T) {
	keystoretest.Run(t, func(t *testing.T) keystoretest.Open {
		dir := filepath.Join(t.TempDir(), "agents")
		return func(o keystore.Options) keystore.Keys {
			ks, err := keystore.Open(dir, o)
			if err != nil {
				t.Fatal(err)
			}
			return ks
		}
	})
}
