package bindings

// KillMCPSession closes the live session for uri behind the Runner's
// back, as a crashed server would.
func KillMCPSession(r *Runner, uri string) {
	r.mu.Lock()
	s := r.mcp[uri]
	r.mu.Unlock()
	if s != nil {
		s.sess.Close()
	}
}

// MCPSessions is how many MCP sessions are live.
func MCPSessions(r *Runner) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.mcp)
}
