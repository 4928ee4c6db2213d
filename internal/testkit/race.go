package testkit

import (
	"errors"
	"testing"
)

// OneWinner checks the outcome of a race: exactly one of errs is nil and
// every other is lost (errors.Is), the loser's expected error.
func OneWinner(t testing.TB, errs []error, lost error) {
	t.Helper()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, lost):
			t.Errorf("contender %d: %v, want nil or %v", i, err, lost)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners, want exactly 1", won)
	}
}
