// Peer candidate: redlock v5 (npm) with `using()`, its auto-extending lock.
//
// How a Node service typically elects a leader with redlock v5: one Redlock
// over one ioredis client with the library's defaults (acquire retried 10
// times, every 200 ms ± 100 ms jitter; extension 500 ms before expiry; drift
// factor 0.01), and a loop around `redlock.using([key], ttl, routine)`: when
// the lock stays busy for the whole retry window, `using()` throws (after one
// release script for any partial lock) and the loop calls it again. The
// routine is the worker: while it runs it appends `start`, `tick` (every
// --tick-ms) and `stop` lines to the event log in the harness's format,
// `<CLOCK_MONOTONIC ns> <name> <pid> <event>` (process.hrtime.bigint() is
// libuv's uv_hrtime, CLOCK_MONOTONIC on Linux), each line one write() on an
// O_APPEND descriptor.
//
// Not `retryCount: -1` (retry forever): redlock dates a lock's expiry from the
// start of acquire(), so a lock won after more than ttl - 500 ms of retrying
// is extended at once or judged expired, and using() aborts the routine
// right after it started (17 of 80 terms in one run).
//
// The routine stops when redlock aborts its signal (an extension failed).
// SIGTERM while leading: stop working (`stop` line), let `using()` release
// the lock, exit 0. SIGTERM while standing by: exit 0.
//
// The harness runs this file from its npm cache directory, next to the
// node_modules installed from bench/peers/package-lock.json.
//
// Usage: node redlock_candidate.mjs --port P --key K --name N --log FILE
//                                   [--ttl-ms 3000] [--tick-ms 5]
//        --ports P1,P2,P3 instead of --port: Redlock over independent masters,
//        one ioredis client each (the library's own quorum).

import fs from "node:fs";
import process from "node:process";

import Redis from "ioredis";
import Redlock from "redlock";

function parseArgs(argv) {
  const opts = { host: "127.0.0.1", ttlMs: 3000, tickMs: 5 };
  const names = { "--host": "host", "--port": "port", "--ports": "ports", "--key": "key", "--name": "name",
                  "--log": "log", "--ttl-ms": "ttlMs", "--tick-ms": "tickMs" };
  for (let i = 0; i < argv.length; i += 2) {
    const field = names[argv[i]];
    if (!field || i + 1 >= argv.length) {
      console.error(`redlock_candidate: bad argument '${argv[i]}'`);
      process.exit(2);
    }
    opts[field] = argv[i + 1];
  }
  if (opts.ports !== undefined) opts.port = opts.ports.split(",")[0];
  for (const field of ["port", "key", "name", "log"]) {
    if (opts[field] === undefined) {
      console.error(`redlock_candidate: --${field} is required`);
      process.exit(2);
    }
  }
  opts.port = Number(opts.port);
  opts.ttlMs = Number(opts.ttlMs);
  opts.tickMs = Number(opts.tickMs);
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const logFd = fs.openSync(opts.log, "a");
function logEvent(event) {
  fs.writeSync(logFd, `${process.hrtime.bigint()} ${opts.name} ${process.pid} ${event}\n`);
}

const ports = opts.ports !== undefined ? opts.ports.split(",").map(Number) : [opts.port];
const clients = ports.map((port) => {
  const client = new Redis({ host: opts.host, port });
  client.on("error", () => {}); // reconnects by itself; redlock retries the votes
  return client;
});
const redlock = new Redlock(clients);

let leading = false;
let terminating = false;
let wakeRoutine = null;

process.on("SIGTERM", () => {
  terminating = true;
  if (!leading) process.exit(0);
  if (wakeRoutine) wakeRoutine();
});

async function work(signal) {
  if (terminating) return; // acquired just as we were told to go: using() releases
  leading = true;
  logEvent("start");
  await new Promise((resolve) => {
    let timer = null;
    const finish = () => {
      clearInterval(timer);
      resolve();
    };
    timer = setInterval(() => logEvent("tick"), opts.tickMs);
    wakeRoutine = finish;
    signal.addEventListener("abort", finish);
    if (terminating || signal.aborted) finish();
  });
  wakeRoutine = null;
  logEvent("stop");
}

while (!terminating) {
  try {
    await redlock.using([opts.key], opts.ttlMs, work);
  } catch {
    // ExecutionError: still busy after the retry window (or the release after
    // a lost lock failed). Compete again.
  }
  leading = false;
}
for (const client of clients) client.disconnect();
process.exit(0);
