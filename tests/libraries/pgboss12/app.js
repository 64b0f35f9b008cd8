// A pg-boss application as its users write one, run by the library test with the pg-boss (and, for 11 and 12, the
// Node.js 22) that `npm ci` installed beside it (scripts/setup.sh --test): pg-boss creates its own schema on start,
// jobs are sent through its API and worked by its own workers; its own counts are printed for the test to compare.
// Nothing here touches the tables by hand.
//
// pgboss/app.js (pg-boss 10.4), pgboss11/app.js (11.1) and pgboss12_12/app.js (12.18) are links to this file: the
// library is the one installed beside the path it is run by (process.argv[1], not the link's target), so one
// application runs on all four. 10 and 11 export the class as their module (CommonJS), 12 by name.
//
//   node app.js SCHEMA schema           pg-boss's schema (boss.start), and its queues
//   node app.js SCHEMA defer KIND=N...  send N jobs of each kind (fast, hold, stuck, flaky, doomed, later, orphan)
//   node app.js SCHEMA worker           pg-boss's workers until killed (no supervisor: it would expire claims)
//   node app.js SCHEMA counts           one supervise pass (pg-boss's own maintenance: it fails a claim past its
//                                       expiry), then getQueues' counts per queue, as JSON (11 on)
//   node app.js SCHEMA sizes            getQueueSize per queue (jobs before 'active'), as JSON, no maintenance (10)
//
// Kinds: fast (completes), hold (runs until its worker is killed), stuck (the same, with a 5 s expiry: a worker
// killed leaves it active and timed out), beat (the same on a queue of 10 s heartbeats, its expiry an hour away: a
// worker killed stops its beats, and its job is timed out by them; 12.12 on, 10 and 11 have no heartbeats), flaky
// (fails; retried an hour later), doomed (fails with no retry left: failed), later (starts an hour ahead), orphan (a
// queue no worker works).
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";

const installed = createRequire(import.meta.url).resolve("pg-boss", { paths: [path.dirname(process.argv[1])] });
const library = await import(pathToFileURL(installed).href);
const PgBoss = library.PgBoss ?? library.default;

const [schema, command, ...specs] = process.argv.slice(2);
const connectionString = process.env.QUEUETOP_LIB_PG_URL || "postgres://postgres@127.0.0.1:5432/queuetop_test";
const QUEUES = ["fast", "hold", "stuck", "beat", "flaky", "doomed", "orphan"];
const QUEUE_OPTIONS = { beat: { heartbeatSeconds: 10 } };  // workers must beat every 10 s (its least)
const kinds = {
  fast: ["fast", {}],
  hold: ["hold", { expireInSeconds: 3600 }],
  stuck: ["stuck", { expireInSeconds: 5 }],
  beat: ["beat", { expireInSeconds: 3600 }],
  flaky: ["flaky", { retryLimit: 1, retryDelay: 3600 }],
  doomed: ["doomed", { retryLimit: 0 }],
  later: ["fast", { startAfter: 3600 }],
  orphan: ["orphan", {}],
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const handlers = {
  fast: async () => {},
  hold: async () => sleep(3600 * 1000),
  stuck: async () => sleep(3600 * 1000),
  beat: async () => sleep(3600 * 1000),
  flaky: async () => { throw new Error("flaky fails; retried in an hour"); },
  doomed: async () => { throw new Error("doomed fails for good"); },
};

async function main() {
  const boss = new PgBoss({ connectionString, schema, supervise: false, schedule: false });
  boss.on("error", (error) => console.error(error));
  await boss.start();
  try {
    if (command === "schema") {
      for (const name of QUEUES) await boss.createQueue(name, QUEUE_OPTIONS[name] || {});
    } else if (command === "defer") {
      for (const spec of specs) {
        const [kind, count] = spec.split("=");
        const [queue, options] = kinds[kind];
        for (let i = 0; i < Number(count); i++) await boss.send(queue, { kind }, options);
      }
    } else if (command === "counts") {
      await boss.supervise();
      const counts = {};
      for (const queue of await boss.getQueues(QUEUES)) {
        // 12.19 on counts ready and failed jobs; before, queued (before 'active') and deferred (start_after ahead)
        const ready = queue.readyCount ?? queue.queuedCount - queue.deferredCount;
        counts[queue.name] = { ready, deferred: queue.deferredCount, active: queue.activeCount,
                               failed: queue.failedCount };
      }
      console.log(JSON.stringify(counts));
    } else if (command === "sizes") {
      const sizes = {};
      for (const name of QUEUES) sizes[name] = await boss.getQueueSize(name);
      console.log(JSON.stringify(sizes));
    } else if (command === "worker") {
      for (const [name, handler] of Object.entries(handlers)) {
        const batchSize = name === "fast" ? 50 : 1;
        await boss.work(name, { pollingIntervalSeconds: 0.5, batchSize }, async (jobs) => {
          for (const job of jobs) await handler(job);
        });
      }
      await new Promise(() => {});  // until killed
    } else {
      throw new Error(`unknown command ${command}`);
    }
  } finally {
    if (command !== "worker") await boss.stop({ graceful: false, wait: true });
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
