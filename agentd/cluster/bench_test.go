package cluster_test

import (
	"context"
	"testing"
)

// BenchmarkForward_call is one agent/message over HTTP through the
// instance not running the agent (forwarded to the holder: a lease read,
// a second HTTP round trip), against the same call sent to the holder
// directly: the difference is what forwarding costs a call.
func BenchmarkForward_call(b *testing.B) {
	for _, via := range []string{"holder", "other"} {
		b.Run(via, func(b *testing.B) {
			p := newPairTB(b)
			in := p.b
			if via == "other" {
				in = p.a
			}
			c := in.client(b, p.token)
			params := message(p.agent, "bench", "hello")
			ctx := context.Background()
			for b.Loop() {
				if err := c.Call(ctx, "agent/message", params, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
