// A graphile-worker application as its users write one, run by the library test with the graphile-worker that
// `npm ci` installed here (scripts/setup.sh --test): it runs graphile-worker's own migrations, adds jobs through
// its API (WorkerUtils.addJob, which calls graphile_worker.add_job()) and runs its own worker. Nothing here
// touches the tables by hand.
//
//   node app.js SCHEMA schema           graphile-worker's migrations, into SCHEMA
//   node app.js SCHEMA defer KIND=N...  add N jobs of each kind (fast, hold, flaky, doomed, later, orphan)
//   node app.js SCHEMA worker           graphile-worker's worker until killed
//
// Kinds: fast (succeeds: its row is deleted), hold (runs until its worker is killed: in flight), flaky (fails;
// retried after graphile-worker's backoff, up to 25 attempts), doomed (fails its only attempt: failed for good),
// later (run an hour ahead), orphan (a task no worker knows: it waits).
//
// graphile_worker18/app.js is a link to this file: the library is the one installed beside the path it is run by
// (process.argv[1], not the link's target), so the same application runs on 0.17 and on 0.18.
"use strict";
const path = require("path");
const { run, makeWorkerUtils, runMigrations } = require(
  require.resolve("graphile-worker", { paths: [path.dirname(process.argv[1])] }));

const [schema, command, ...specs] = process.argv.slice(2);
const connectionString = process.env.QUEUETOP_LIB_PG_URL || "postgres://postgres@127.0.0.1:5432/queuetop_test";
const options = { connectionString, schema, logger: undefined };

const taskList = {
  fast: async () => {},
  hold: async () => new Promise((resolve) => setTimeout(resolve, 3600 * 1000)),
  flaky: async () => { throw new Error("flaky fails; retried after a backoff"); },
  doomed: async () => { throw new Error("doomed fails for good"); },
};
const kinds = {
  fast: ["fast", {}],
  hold: ["hold", {}],
  flaky: ["flaky", {}],
  doomed: ["doomed", { maxAttempts: 1 }],
  later: ["fast", { runAt: new Date(Date.now() + 3600 * 1000) }],
  orphan: ["orphan", {}],
};

async function main() {
  if (command === "schema") {
    await runMigrations(options);
  } else if (command === "defer") {
    const utils = await makeWorkerUtils(options);
    try {
      for (const spec of specs) {
        const [kind, count] = spec.split("=");
        const [task, spec_options] = kinds[kind];
        for (let i = 0; i < Number(count); i++) await utils.addJob(task, { kind }, spec_options);
      }
    } finally {
      await utils.release();
    }
  } else if (command === "worker") {
    const runner = await run({ ...options, concurrency: 8, pollInterval: 100, taskList });
    await runner.promise;
  } else {
    throw new Error(`unknown command ${command}`);
  }
}

main().catch((error) => { console.error(error); process.exit(1); });
