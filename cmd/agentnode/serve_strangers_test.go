package main

import (
	"strings"
	"testing"
	"time"

	"github.com/agentnode/agentnode/agentd/strangers"
)

func TestServeConfig_strangersSection(t *testing.T) {
	var f serveFile
	body := `{"strangers":{"per_sender":{"burst":1,"every_seconds":30},"per_agent":{"burst":-1},"global":{"burst":5,"every_seconds":1.5}}}`
	if err := parseServeFile([]byte(body), &f); err != nil {
		t.Fatal(err)
	}
	got := []strangers.Rate{f.Strangers.PerSender.rate(), f.Strangers.PerAgent.rate(), f.Strangers.Global.rate()}
	want := []strangers.Rate{{Burst: 1, Every: 30 * time.Second}, {Burst: -1}, {Burst: 5, Every: 1500 * time.Millisecond}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("rate %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, bad := range []string{`{"strangers":{"per_agent":{"burst":3}}}`, `{"strangers":{"global":{"every_seconds":3}}}`,
		`{"strangers":{"per_ip":{}}}`, `{"strangers":{"global":{"burst":1,"every":3}}}`} {
		var g serveFile
		if err := parseServeFile([]byte(bad), &g); err == nil || !strings.Contains(err.Error(), "strangers") {
			t.Errorf("%s: err = %v, want a strangers error", bad, err)
		}
	}
}
