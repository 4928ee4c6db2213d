package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/agentnode/agentnode/agentd"
)

// installDef posts an install of def for the pair's owner to n's HTTP API.
func (p *pgPair) installDef(n *pgNode, token, def string) (agentd.Installed, error) {
	body, _ := json.Marshal(map[string]any{"definition": def, "owner": p.owner.PK})
	req, _ := http.NewRequest(http.MethodPost, n.url("/api/agents"), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return agentd.Installed{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var inst agentd.Installed
	if err := json.Unmarshal(raw, &inst); err != nil || inst.Agent.PubKey == "" {
		return inst, fmt.Errorf("install through %s: %d %s", n.addr, resp.StatusCode, raw)
	}
	return inst, nil
}

// TestServe_PostgresAgents_InstallRace: the same install (definition,
// owner, name) sent to both instances at once installs one agent: the
// database decides (agentd.InstallRecords), not each instance's copy of
// the records. Five definitions, each raced through both instances.
func TestServe_PostgresAgents_InstallRace(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary twice")
	}
	p := startPGPair(t, pgTestTTL)
	token := p.nodes[0].token(t)
	const defs = 5
	for round := range defs {
		def := publishDefinition(t, p.nodes[round%2])
		var wg sync.WaitGroup
		var got [2]agentd.Installed
		var errs [2]error
		start := make(chan struct{})
		for i, n := range p.nodes {
			wg.Go(func() {
				<-start
				got[i], errs[i] = p.installDef(n, token, def)
			})
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got[0].Agent.PubKey != got[1].Agent.PubKey {
			t.Fatalf("definition %d: the instances installed two agents, %s and %s", round, got[0].Agent.PubKey, got[1].Agent.PubKey)
		}
		if got[0].Created == got[1].Created {
			t.Fatalf("definition %d: created %v and %v, want exactly one true", round, got[0].Created, got[1].Created)
		}
	}
	for i, n := range p.nodes {
		env := map[string]string{"AGENTNODE_NODE": n.url(""), "AGENTNODE_DATA": n.data}
		var list struct {
			Agents []agentd.Agent `json:"agents"`
		}
		decodeJSON(t, mustCLI(t, env, "agent", "list", "--json"), &list)
		if len(list.Agents) != defs {
			t.Fatalf("agent list on instance %d: %d agents, want %d", i+1, len(list.Agents), defs)
		}
	}
}
