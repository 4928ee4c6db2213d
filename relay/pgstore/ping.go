package pgstore

import (
	"context"
	"fmt"
)

// Ping checks that the database answers (a pooled connection's round trip
// within ctx).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("pgstore: ping: %w", err)
	}
	return nil
}
