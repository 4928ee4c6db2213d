package schema_test

import (
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/state/schema"
)

func TestParseDuration(t *testing.T) {
	good := map[string]schema.Duration{
		"P14D":             {Days: 14},
		"P90D":             {Days: 90},
		"P1Y2M3W4DT5H6M7S": {Years: 1, Months: 2, Weeks: 3, Days: 4, Hours: 5, Minutes: 6, Seconds: 7},
		"PT1M":             {Minutes: 1},
		"P1M":              {Months: 1},
		"PT36H":            {Hours: 36},
		"P0D":              {},
	}
	for s, want := range good {
		got, err := schema.ParseDuration(s)
		if err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "P", "PT", "P1", "1D", "p1d", "P1d", "P1DT", "P-1D", "P1.5D", "PT1.5S", "P1D1Y", "P1Y1Y", "P1H", "P1DT1D", "P1DTT1H", "P1234567890D", " P1D", "P1D ", "P1W1W"} {
		if _, err := schema.ParseDuration(s); err == nil {
			t.Errorf("%q: no error", s)
		}
	}
}

func TestDuration_Before(t *testing.T) {
	d, _ := schema.ParseDuration("P1M1DT1H")
	now := time.Date(2025, 3, 31, 12, 0, 0, 0, time.UTC)
	if got, want := d.Before(now), time.Date(2025, 3, 2, 11, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("Before = %v, want %v", got, want)
	}
	if got := d.String(); got != "P1M1DT1H" {
		t.Errorf("String = %s", got)
	}
}
