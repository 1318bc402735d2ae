// nunjucks-check renders internal/nunjucks/testdata/cases.json with real
// Nunjucks, set up as AgentV v5 sets it up (no autoescaping, unset
// variables render empty, AgentV's load filter), and reports every case
// whose "want" or "error" differs from what Nunjucks does. With --write it
// rewrites the file's expectations from Nunjucks instead.
//
// It runs on demand, not in go test:
//
//   npm install --prefix /tmp/nj nunjucks@3.2.4
//   NODE_PATH=/tmp/nj/node_modules node scripts/nunjucks-check.mjs [--write]
//
// A case is {name, template, vars, want} or {name, template, vars, error}:
// "error" is a fragment of agenteval's message; Nunjucks only has to fail
// too. A case with "agenteval_only" (the limits, the tags agenteval
// refuses) is skipped: it says where agenteval stops on purpose.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const nunjucks = require('nunjucks');
const file = new URL('../internal/nunjucks/testdata/cases.json', import.meta.url);
const cases = JSON.parse(readFileSync(file, 'utf8'));
const write = process.argv.includes('--write');

const env = new nunjucks.Environment(undefined, { autoescape: false, throwOnUndefined: false });
env.addFilter('load', (value) => JSON.parse(value));

let agree = 0;
let differ = 0;
for (const c of cases) {
  if (c.agenteval_only) continue;
  const vars = c.vars ?? {};
  let got;
  let failed = null;
  try {
    got = env.renderString(c.template, { ...vars, vars });
  } catch (e) {
    failed = String(e.message).split('\n').pop().trim();
  }
  if (write) {
    if (failed !== null) {
      if (c.error === undefined) {
        delete c.want;
        c.error = 'FILL IN: ' + failed;
      }
    } else {
      delete c.error;
      c.want = got;
    }
    continue;
  }
  const ok = failed !== null ? c.error !== undefined : c.error === undefined && c.want === got;
  if (ok) {
    agree++;
  } else {
    differ++;
    console.log(`${c.name}: nunjucks ${failed !== null ? 'fails: ' + failed : 'gives ' + JSON.stringify(got)}; the case says ${c.error !== undefined ? 'error ' + JSON.stringify(c.error) : JSON.stringify(c.want)}`);
  }
}
if (write) {
  writeFileSync(file, JSON.stringify(cases, null, 2) + '\n');
} else {
  console.log(`${agree} passed, ${differ} failed`);
  process.exit(differ ? 1 : 0);
}
