package relay

import "testing"

// The default connection bound leaves a quarter of the descriptor limit,
// at least 256, for everything else, and stays within [16, 100,000].
func TestConnectionsFor(t *testing.T) {
	for _, c := range []struct {
		nofile uint64
		want   int
	}{{20000, 15000}, {1024, 768}, {512, 256}, {256, 16}, {100, 16}, {1 << 20, 100_000}, {1 << 62, 100_000}} {
		if got := connectionsFor(c.nofile); got != c.want {
			t.Errorf("connectionsFor(%d) = %d, want %d", c.nofile, got, c.want)
		}
	}
}
