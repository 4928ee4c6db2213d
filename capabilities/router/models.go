package router

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentnode/agentnode/capabilities/acp"
)

// Model is one model the node may use (the serve config's `models` list):
// what a capability's llm_requirements are matched against.
type Model struct {
	Name          string   // the model name sent to the provider (gpt-4o, llama3.1:8b)
	Family        string   // model family (gpt-4, claude-3, llama3); "" = none stated
	URI           string   // a DID or URL naming this exact model, for specific_model_uri
	ContextWindow int      // tokens; 0 = unknown
	Features      []string // function_calling_json_mode, tool_use_json_mode, vision, ...
}

// ModelError says why no configured model fits a capability.
type ModelError struct {
	Capability string
	Reasons    []string // one per configured model: "gpt-4o: context window 8192 < 16000"
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("router: no configured model fits %s: %s", e.Capability, strings.Join(e.Reasons, "; "))
}

// ChooseModel picks the model for a capability's requirements, in the
// order models are listed (the first is preferred). min_context_window,
// required_features and specific_model_uri must hold; model_family
// ("suggests compatibility") is a preference: a fitting model of a listed
// family wins over an earlier one of another family. No requirements, or
// no models configured: "" and no error (the default model answers).
func ChooseModel(capID string, req *acp.LLMRequires, models []Model) (string, error) {
	if req == nil || len(models) == 0 {
		return "", nil
	}
	var fit []Model
	var reasons []string
	for _, m := range models {
		if why := misfit(req, m); why != "" {
			reasons = append(reasons, m.Name+": "+why)
			continue
		}
		fit = append(fit, m)
	}
	if len(fit) == 0 {
		return "", &ModelError{Capability: capID, Reasons: reasons}
	}
	for _, m := range fit {
		if inFamily(req.ModelFamily, m) {
			return m.Name, nil
		}
	}
	return fit[0].Name, nil
}

// misfit says which hard requirement m fails ("" = it fits).
func misfit(req *acp.LLMRequires, m Model) string {
	switch {
	case req.SpecificModelURI != "" && req.SpecificModelURI != m.URI && req.SpecificModelURI != m.Name:
		return fmt.Sprintf("not the model %s asks for", req.SpecificModelURI)
	case req.MinContextWindow > 0 && m.ContextWindow == 0:
		return fmt.Sprintf("context window unknown (needs %d)", req.MinContextWindow)
	case m.ContextWindow < req.MinContextWindow:
		return fmt.Sprintf("context window %d < %d", m.ContextWindow, req.MinContextWindow)
	}
	for _, f := range req.RequiredFeatures {
		if !slices.ContainsFunc(m.Features, func(h string) bool { return strings.EqualFold(h, f) }) {
			return fmt.Sprintf("lacks feature %q", f)
		}
	}
	return ""
}

// inFamily: the model's family, or its name's prefix, is one of families.
func inFamily(families []string, m Model) bool {
	for _, f := range families {
		f = strings.ToLower(f)
		if strings.EqualFold(m.Family, f) || strings.HasPrefix(strings.ToLower(m.Name), f) {
			return true
		}
	}
	return false
}
