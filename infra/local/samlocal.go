package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"tunnelapi/infra/samlocal"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/platform/store"
)

// samLocal writes what `sam local` needs for the stack `make run` is serving (its table, queues,
// seal key and admin token) and prints the commands.
func samLocal(ctx context.Context) error {
	c, err := config.LoadLocal(localEnv)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(adminTokenFile(c))
	if err != nil {
		return fmt.Errorf("no admin token at %s: start the local stack with `make run` first: %w", adminTokenFile(c), err)
	}
	queues, err := createQueues(ctx, &c)
	if err != nil {
		return fmt.Errorf("the SQS emulator (is `make run` running?): %w", err)
	}
	d, err := serve.NewDeps(ctx, c.HTTP, store.Options{})
	if err != nil {
		return err
	}
	// The setup requests are this command's own business: only failures are reported.
	quiet := slog.New(slog.DiscardHandler)
	d.Kit.Log, d.Server.Log = quiet, quiet
	key, err := samlocal.LoadSealKey(c.HTTP.Seal.KeyFile)
	if err != nil {
		return err
	}
	settings, err := samlocal.LocalSettings(localEnv)
	if err != nil {
		return err
	}
	stack := samlocal.Stack{
		DynamoDBEndpoint: c.HTTP.DynamoDBEndpoint, SQSEndpoint: c.HTTP.SQSEndpoint,
		Table: d.Kit.DB.Table, SealKey: key, Queues: queues, Settings: settings,
	}
	err = samlocal.Write(ctx, samlocal.Options{Root: ".", Out: samlocal.Dir, Stack: stack, Token: strings.TrimSpace(string(raw)), Deps: d})
	if err != nil {
		return fmt.Errorf("%w (is `make run` running?)", err)
	}
	fmt.Printf("wrote %[1]s/env.json (--env-vars), the sample events filled with the admin token under %[1]s/events/\n"+
		"and %[1]s/invoke-all.sh, for DynamoDB Local at %[2]s and the SQS emulator at %[3]s,\n"+
		"which SAM's containers reach as %[4]s.\n", samlocal.Dir, stack.DynamoDBEndpoint, stack.SQSEndpoint, samlocal.ContainerHost)
	if warn := containerReach(stack.SQSEndpoint); warn != "" {
		fmt.Println("\nwarning: " + warn)
	}
	fmt.Println("\nthen:")
	for _, c := range samlocal.Commands() {
		fmt.Println(c)
	}
	return nil
}

// containerReach says why containers may not reach the SQS emulator at endpoint: on Linux they
// come in through a non-loopback address of this machine, where the emulator listens only with
// STACK_LISTEN=0.0.0.0 (DynamoDB Local always listens everywhere). Empty when it answers there, or
// when this machine has no such address to try.
func containerReach(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		ip, ok := a.(*net.IPNet)
		if !ok || ip.IP.IsLoopback() || ip.IP.To4() == nil {
			continue
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), u.Port()), time.Second)
		if err != nil {
			return fmt.Sprintf("the SQS emulator does not answer on %s, this machine's address that containers come in through on Linux: restart the stack with STACK_LISTEN=0.0.0.0 (make run), see the README", ip.IP)
		}
		c.Close()
		return ""
	}
	return ""
}
