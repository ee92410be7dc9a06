package config

import (
	"context"
	"log/slog"
	"os"

	"tunnelapi/shared/platform/audit"
)

// Settings is the configuration of a kind of process Begin and Start take: HTTP, EventWorker,
// CertWorker, Scheduler or Local.
type Settings interface{ common() Common }

// Logger is the logger of every process: JSON on stderr, from level (LOG_LEVEL) up.
func Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Begin applies what c sets for the whole process (how long the outbox items of the events it
// records stay) and returns the process's logger (Logger at c's LOG_LEVEL).
func Begin(c Settings) *slog.Logger {
	audit.OutboxRetention = c.common().OutboxRetention
	return Logger(c.common().LogLevel)
}

// Start is how a Lambda function starts: it parses its configuration from the environment with
// load, Begins, and builds the function with build (no network I/O). A malformed value or a
// failed build stops the process, logged with the error naming the variable.
func Start[C Settings, P any](load func(Lookup) (C, error), build func(context.Context, C, *slog.Logger) (P, error)) P {
	c, err := load(Env)
	if err != nil {
		fail(Logger(slog.LevelInfo), err)
	}
	log := Begin(c)
	p, err := build(context.Background(), c, log)
	if err != nil {
		fail(log, err)
	}
	return p
}

func fail(log *slog.Logger, err error) {
	log.Error("init failed", "err", err.Error())
	os.Exit(1)
}
