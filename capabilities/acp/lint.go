package acp

import (
	"regexp"

	"gopkg.in/yaml.v3"
)

// promptPattern is a forbidden pattern of a package prompt: a prompt
// injection (instructions to drop the router's or the agent's own) or a
// chat template's control token (a prompt that forges a system turn).
type promptPattern struct {
	name string
	re   *regexp.Regexp
}

// promptPatterns are what LintPrompt looks for (Nuwa NIP-7, Security: "the
// Router SHOULD lint prompt for forbidden patterns before mounting").
// Go's regexp runs in time linear in the prompt.
var promptPatterns = []promptPattern{
	{"an instruction to ignore earlier instructions", regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(the\s+|your\s+)?(previous|prior|above|earlier|preceding|system)\s+(instructions?|prompts?|rules|messages?|context)`)},
	{"a request to reveal the system prompt", regexp.MustCompile(`(?i)\b(reveal|print|repeat|show|leak)\s+(your|the)\s+(system\s+prompt|hidden\s+instructions)`)},
	{"a chat template control token", regexp.MustCompile(`<\|(im_start|im_end|system|user|assistant|endoftext|start_header_id|end_header_id|eot_id)\|>|\[/?INST\]|<</?SYS>>`)},
}

// LintPrompt returns the forbidden patterns prompt holds, each as the
// pattern's description and the text that matched.
func LintPrompt(prompt string) [][2]string {
	var out [][2]string
	for _, p := range promptPatterns {
		if m := p.re.FindString(prompt); m != "" {
			out = append(out, [2]string{p.name, m})
		}
	}
	return out
}

// lintPrompt records a warning per forbidden pattern of the prompt at n: the
// package is accepted (a pattern is a likely injection, not proof of one)
// and the warning is shown by cap verify and kept through install.
func (ps *parser) lintPrompt(n *yaml.Node, prompt string) {
	for _, hit := range LintPrompt(prompt) {
		ps.warn(n, "prompt", "forbidden pattern: %s (%q): check the prompt before relying on the capability", hit[0], hit[1])
	}
}
