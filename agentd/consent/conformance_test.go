package consent_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agentnode/agentnode/agentd/consent"
	"github.com/agentnode/agentnode/agentd/consent/consenttest"
)

func TestSQLite_conformance(t *testing.T) {
	consenttest.Run(t, func(t *testing.T) consenttest.Open {
		path := filepath.Join(t.TempDir(), "consent.db")
		return func() consent.Backend {
			b, err := consent.OpenSQLite(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	})
}
