package llm

import (
	"errors"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr error
	}{
		{"no model", map[string]string{EnvAPIKey: "k"}, Config{APIKey: "k"}, ErrNoModel},
		{"defaults to OpenAI", map[string]string{EnvModel: "gpt-4o-mini", EnvOpenAIKey: "sk"},
			Config{BaseURL: DefaultBaseURL, Model: "gpt-4o-mini", APIKey: "sk"}, nil},
		{"agentnode vars win", map[string]string{EnvModel: "m", EnvBaseURL: "http://a/v1", EnvOpenAIBaseURL: "http://b/v1",
			EnvAPIKey: "ours", EnvOpenAIKey: "theirs"}, Config{BaseURL: "http://a/v1", Model: "m", APIKey: "ours"}, nil},
		{"openai fallbacks", map[string]string{EnvModel: "llama3", EnvOpenAIBaseURL: "http://localhost:11434/v1"},
			Config{BaseURL: "http://localhost:11434/v1", Model: "llama3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ConfigFromEnv(env(tt.env))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got.BaseURL != tt.want.BaseURL || got.Model != tt.want.Model || got.APIKey != tt.want.APIKey {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNew_RejectsBadConfig(t *testing.T) {
	tests := []struct {
		cfg  Config
		want error
	}{
		{Config{BaseURL: "http://x/v1"}, ErrNoModel},
		{Config{Model: "m"}, ErrNoBaseURL},
		{Config{Model: "m", BaseURL: "ftp://x"}, ErrBadBaseURL},
		{Config{Model: "m", BaseURL: "localhost:11434"}, ErrBadBaseURL},
	}
	for _, tt := range tests {
		if _, err := New(tt.cfg); !errors.Is(err, tt.want) {
			t.Errorf("New(%+v) err = %v, want %v", tt.cfg, err, tt.want)
		}
	}
}
