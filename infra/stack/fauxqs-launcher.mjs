// fauxqs-launcher.mjs — run the fauxqs SQS/SNS/S3 emulator bound to loopback (by default).
//
// Usage: node infra/stack/fauxqs-launcher.mjs
//   SQS_PORT        port to listen on (default 9324)
//   SQS_HOST        address to bind (default 127.0.0.1)
//   FAUXQS_PKG_DIR  directory of the installed fauxqs package
//                   (default: <repo>/.local/npm/node_modules/fauxqs)
//   FAUXQS_LOGGER   "true" to enable fastify request logging (default off)
//   SQS_QUEUE_URL_STYLE
//                   "endpoint" (default): queue URLs are built from the
//                   request's Host header, e.g. http://127.0.0.1:9324/000000000000/jobs
//                   (= $SQS_ENDPOINT/000000000000/<name>, like ElasticMQ);
//                   "fauxqs": fauxqs's own default, http://sqs.<region>.localhost:<port>/000000000000/<name>
//
// fauxqs's own startFauxqs()/CLI always listens on 0.0.0.0, so we use its
// exported buildApp() (a Fastify instance with all SQS/SNS/S3 routes) and call
// listen() ourselves with host 127.0.0.1.
//
// fauxqs looks queues up by exact QueueUrl string, so the URL style matters.
// With the endpoint style, a QueueUrl it does not know falls back to the queue
// named by the URL's last path segment, so one queue answers under every host
// name the emulator is reached by (127.0.0.1 from this machine,
// host.docker.internal from `sam local`'s containers).
//
// Stays in the foreground until SIGTERM/SIGINT, then closes the server.

import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..", "..");
const pkgDir = process.env.FAUXQS_PKG_DIR
  ? path.resolve(process.env.FAUXQS_PKG_DIR)
  : path.join(root, ".local", "npm", "node_modules", "fauxqs");

const port = Number.parseInt(process.env.SQS_PORT ?? "9324", 10);
const host = process.env.SQS_HOST ?? "127.0.0.1";
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  console.error(`fauxqs-launcher: invalid SQS_PORT ${JSON.stringify(process.env.SQS_PORT)}`);
  process.exit(2);
}

// Resolve the package's ESM entry point from its package.json "exports"
// (the package is import-only, so require.resolve cannot be used, and bare
// specifiers would not resolve from this directory).
function entryPoint(dir) {
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const dot = pkg.exports?.["."];
  const rel =
    (typeof dot === "string" ? dot : dot?.import?.default ?? dot?.import ?? dot?.default) ??
    pkg.main ??
    "index.js";
  return { file: path.join(dir, rel), version: pkg.version };
}

let entry;
try {
  entry = entryPoint(pkgDir);
} catch (err) {
  console.error(`fauxqs-launcher: cannot read fauxqs package in ${pkgDir}: ${err.message}`);
  console.error("fauxqs-launcher: run 'infra/stack/stack.sh install' first");
  process.exit(1);
}

const { buildApp } = await import(pathToFileURL(entry.file).href);
if (typeof buildApp !== "function") {
  console.error(`fauxqs-launcher: ${entry.file} does not export buildApp()`);
  process.exit(1);
}

const appOptions = {
  logger: process.env.FAUXQS_LOGGER === "true",
  defaultRegion: process.env.AWS_REGION || "us-east-1",
};

const urlStyle = process.env.SQS_QUEUE_URL_STYLE ?? "endpoint";
if (urlStyle === "endpoint") {
  // SqsStore.host defaults to "localhost" (=> sqs.<region>.localhost URLs) and
  // buildApp() only overrides it with a truthy value, so hand buildApp our own
  // stores (BuildAppOptions.stores) with host cleared. The store classes are
  // not exported from the package entry point: import them from dist/.
  try {
    const dist = path.dirname(entry.file);
    const load = (rel) => import(pathToFileURL(path.join(dist, rel)).href);
    const [{ SqsStore }, { SnsStore }, { S3Store }] = await Promise.all([
      load("sqs/sqsStore.js"),
      load("sns/snsStore.js"),
      load("s3/s3Store.js"),
    ]);
    const sqsStore = new SqsStore();
    sqsStore.host = "";
    const byUrl = sqsStore.getQueue.bind(sqsStore);
    sqsStore.getQueue = (url) => {
      const exact = byUrl(url);
      if (exact || typeof url !== "string") return exact;
      const name = url.slice(url.lastIndexOf("/") + 1);
      return name ? sqsStore.getQueueByName(name) : undefined;
    };
    appOptions.stores = { sqsStore, snsStore: new SnsStore(), s3Store: new S3Store() };
  } catch (err) {
    console.error(
      `fauxqs-launcher: warning: cannot set endpoint-style queue URLs (${err.message}); using fauxqs defaults`,
    );
  }
} else if (urlStyle !== "fauxqs") {
  console.error(`fauxqs-launcher: unknown SQS_QUEUE_URL_STYLE ${JSON.stringify(urlStyle)} (endpoint|fauxqs)`);
  process.exit(2);
}

const app = buildApp(appOptions);

try {
  const address = await app.listen({ port, host });
  console.log(`fauxqs ${entry.version} listening on ${address} (pid ${process.pid})`);
} catch (err) {
  console.error(`fauxqs-launcher: listen on ${host}:${port} failed: ${err.message}`);
  process.exit(1);
}

let closing = false;
async function shutdown(signal) {
  if (closing) return;
  closing = true;
  console.log(`fauxqs-launcher: ${signal} received, shutting down`);
  const timer = setTimeout(() => process.exit(0), 5000);
  timer.unref();
  try {
    await app.close();
  } catch (err) {
    console.error(`fauxqs-launcher: close failed: ${err.message}`);
  }
  process.exit(0);
}
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));
