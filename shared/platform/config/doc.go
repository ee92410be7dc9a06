// Package config is the one place the processes read their environment. Every variable any
// process reads is declared once in Vars, with its default, the kinds of process that read it
// and its meaning (the comment above it); the README's configuration table is that declaration
// (Table; a test fails when they disagree). At start each process parses its whole
// configuration into one typed struct (HTTP, EventWorker, CertWorker, Scheduler, Local, Stack):
// a malformed value is an error naming the variable, and the process stops there instead of
// answering wrongly later. Start is that start for every Lambda function (Begin for the local
// server, which parses its own): parse, make the process's one logger at LOG_LEVEL, apply the
// process-wide settings, build the function from its struct. Nothing else reads the
// environment: the packages below take the parsed values (awsconfig.Settings, seal.Settings,
// store.Options, an SQS endpoint).
//
// Settings only some families read are a Section (DomainSettings): an HTTP function parses,
// and links the parser of, only the sections its families name (resource.Descriptor.Reads);
// LoadHTTP, for the tests and the local server, parses them all.
//
// The settings are plain values (strings, durations, numbers, parsed lists): a family or
// worker turns them into its own types (package domains builds its Config from Domains),
// which keeps this package below every family in the tiers.
//
// To add a variable: declare it in Vars (its meaning as the comment above it; name, default,
// readers), add a field to the settings struct of each process kind that reads it and fill it
// in that struct's parse function with the getter of its type (str, duration, count, …), then
// paste Table's new row into the README (the package's tests name the row that differs). A
// getter asked for a variable not declared for the process kind parsing is an error, so the
// declaration cannot fall behind the code.
package config
