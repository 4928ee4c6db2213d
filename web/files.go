package web

import "context"

// File is a definition's file placed in a local agent's home
// (docs/BLOSSOM.md): shown on the agent's page.
type File struct {
	Name   string
	SHA256 string
	Size   int64
}

// Files lists the files of a local agent (nil, nil for others).
type Files func(ctx context.Context, agent string) ([]File, error)

// maxFilesShown bounds the files an agent's page lists.
const maxFilesShown = 100

// filesOf fills d.Files when the site knows the agent's files.
func (s *Site) filesOf(ctx context.Context, d *agentData) {
	if s.cfg.Files == nil {
		return
	}
	files, err := s.cfg.Files(ctx, d.ID)
	if err != nil {
		return
	}
	if len(files) > maxFilesShown {
		files = files[:maxFilesShown]
	}
	d.Files = files
}
