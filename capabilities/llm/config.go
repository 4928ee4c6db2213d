package llm

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultBaseURL is used when a model is configured but no base URL.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultTimeout bounds one HTTP attempt when Config.Timeout is zero.
const DefaultTimeout = 120 * time.Second

// Config configures a Client.
type Config struct {
	BaseURL     string        // e.g. https://api.openai.com/v1, http://localhost:11434/v1
	APIKey      string        // sent as "Authorization: Bearer <key>" when set
	Model       string        // required
	Timeout     time.Duration // per HTTP attempt; 0 = DefaultTimeout
	Temperature *float64      // nil = the provider's default
	MaxTokens   int           // 0 = the provider's default

	// HTTPClient is the transport to use; nil = a new http.Client.
	HTTPClient *http.Client
}

// Environment variables read by ConfigFromEnv.
const (
	EnvBaseURL       = "AGENTNODE_LLM_BASE_URL"
	EnvModel         = "AGENTNODE_LLM_MODEL"
	EnvAPIKey        = "AGENTNODE_LLM_API_KEY"
	EnvOpenAIKey     = "OPENAI_API_KEY"  // fallback for EnvAPIKey
	EnvOpenAIBaseURL = "OPENAI_BASE_URL" // fallback for EnvBaseURL
)

// ConfigFromEnv reads a Config through getenv (os.Getenv in production).
// It returns ErrNoModel when AGENTNODE_LLM_MODEL is unset: the node runs
// without a model and only chat needs one.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		BaseURL: firstNonEmpty(getenv(EnvBaseURL), getenv(EnvOpenAIBaseURL)),
		APIKey:  firstNonEmpty(getenv(EnvAPIKey), getenv(EnvOpenAIKey)),
		Model:   strings.TrimSpace(getenv(EnvModel)),
	}
	if cfg.Model == "" {
		return cfg, ErrNoModel
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	return cfg, nil
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// endpoint checks cfg and returns the chat completions URL.
func (cfg Config) endpoint() (string, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return "", ErrNoModel
	}
	if cfg.BaseURL == "" {
		return "", ErrNoBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%w: %q (want http(s)://host[/path])", ErrBadBaseURL, cfg.BaseURL)
	}
	return strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions", nil
}
