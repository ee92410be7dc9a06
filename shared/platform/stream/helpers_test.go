package stream_test

import (
	"io"
	"log/slog"
	"os"
)

func quiet() *slog.Logger {
	if os.Getenv("TEST_LOG") != "" {
		return slog.Default()
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
