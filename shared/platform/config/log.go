package config

import (
	"log/slog"
	"os"
)

// Logger is the logger of every process: JSON on stderr, from level (LOG_LEVEL) up.
func Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
