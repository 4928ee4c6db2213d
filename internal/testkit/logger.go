package testkit

import (
	"log/slog"
	"strings"
	"testing"
)

// Logger is a text logger at level whose lines go to t.Log: shown with
// the test's output when it fails (or with -v), never on stderr.
//
//	srv := nostrrpc.NewServer(nostrrpc.ServerConfig{..., Logger: testkit.Logger(t, slog.LevelWarn)})
func Logger(t testing.TB, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: level}))
}

// testLog writes each record to t.Log.
type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
