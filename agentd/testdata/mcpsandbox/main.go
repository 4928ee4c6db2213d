// Command mcpsandbox is a stdio MCP server for agentd's kind-4200 tests:
// its tools report what the sandbox gave it (environment, working
// directory, pid) so a test can check the sandbox from the outside.
package main

import (
	"context"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type getenvIn struct {
	Name string `json:"name"`
}

type getenvOut struct {
	Value string `json:"value"`
	Set   bool   `json:"set"`
}

type selfOut struct {
	Pid  int      `json:"pid"`
	Dir  string   `json:"dir"`
	Env  []string `json:"env"`
	Args []string `json:"args"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpsandbox", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "getenv", Description: "an environment variable of the server"},
		func(_ context.Context, _ *mcp.CallToolRequest, in getenvIn) (*mcp.CallToolResult, getenvOut, error) {
			v, ok := os.LookupEnv(in.Name)
			return nil, getenvOut{Value: v, Set: ok}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "self", Description: "the server's pid, working directory, environment and arguments"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, selfOut, error) {
			dir, _ := os.Getwd()
			return nil, selfOut{Pid: os.Getpid(), Dir: dir, Env: os.Environ(), Args: os.Args}, nil
		})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
