package web

import (
	"net/http"
	"strings"

	"github.com/agentnode/agentnode/capabilities/registry"
)

// capabilitiesData is the registry's page.
type capabilitiesData struct {
	Query    string
	Packages []registry.Entry
}

// SearchQuery fills the layout's search box.
func (d capabilitiesData) SearchQuery() string { return d.Query }

// maxQuery bounds a search query, in bytes.
const maxQuery = 200

// capabilitiesPage renders /capabilities (?q= narrows it).
func (s *Site) capabilitiesPage(r *http.Request) (view, error) {
	d := capabilitiesData{Query: query(r)}
	if s.cfg.Registry != nil {
		var err error
		d.Packages, err = s.cfg.Registry.Search(r.Context(), d.Query, registry.Filters{Limit: registry.MaxLimit})
		if err != nil {
			return view{}, err
		}
	}
	return view{name: "capabilities", title: "Capabilities", data: d}, nil
}

// query is ?q=, trimmed and bounded.
func query(r *http.Request) string {
	q := strings.TrimSpace(r.FormValue("q"))
	if len(q) > maxQuery {
		q = strings.ToValidUTF8(q[:maxQuery], "")
	}
	return q
}
