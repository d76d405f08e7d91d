// One Node process for the newman runs of newman.test.ts, so newman loads once (≈ 1 s of CPU a start). Each stdin
// line is one run's options for newman.run (what `newman run` builds from its flags); after the run's output comes
// a line `<MARK> <code>`, the code `newman run` exits with (newman/bin/newman.js: 1 on an error or a failure).
import { createInterface } from "node:readline";
import newman from "newman";

const MARK = process.argv[2];
const runs = [];
createInterface({ input: process.stdin }).on("line", (line) => {
  runs.push(JSON.parse(line));
  if (runs.length === 1) next();
});

function next() {
  const options = runs[0];
  if (!options) return;
  newman.run(options, (err, summary) => {
    if (err) console.error(`error: ${err.message || err}`);
    const failed = err || summary.run.error || summary.run.failures.length;
    process.stdout.write(`\n${MARK} ${failed ? 1 : 0}\n`);
    runs.shift();
    next();
  });
}
