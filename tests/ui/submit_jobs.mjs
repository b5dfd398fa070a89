// POSTs the jobs of a bench/serve_emulated.py jobs file (one JSON line each: API path
// and YAML body) to muster serve over N concurrent requests; exits non-zero on the first
// failure. Usage: node submit_jobs.mjs URL JOBS.jsonl [CONCURRENCY]
import { readFileSync } from 'node:fs';

const [url, file, concurrency = '8'] = process.argv.slice(2);
const jobs = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
let next = 0;
let done = 0;
const t0 = Date.now();

async function worker() {
  while (next < jobs.length) {
    const job = jobs[next++];
    for (let attempt = 0; ; attempt++) {
      const res = await fetch(url + job.path, {
        method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: job.body,
        signal: AbortSignal.timeout(60000),
      });
      const text = await res.text();
      if (res.ok) break;
      if (res.status >= 500 && attempt < 3) continue;
      throw new Error(`POST ${job.path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
    }
    done++;
  }
}

await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const s = (Date.now() - t0) / 1000;
console.log(`submitted ${done} jobs in ${s.toFixed(1)} s (${(done / s).toFixed(0)}/s)`);
