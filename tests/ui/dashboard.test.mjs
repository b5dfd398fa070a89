// The dashboard in a real browser: Debian's chromium, headless, driven through the
// DevTools protocol by puppeteer-core (which downloads no browser), against a real
// `muster serve` that tests/ui/browser_test.sh started.
//
//   node dashboard.test.mjs pages   every page loads without console errors, the numbers
//                                   shown equal what kubectl and curl read from the API, a
//                                   job submitted during the test appears and becomes
//                                   Running without a reload; screenshots of every page
//   node dashboard.test.mjs scale   first render of the workloads page with thousands of
//                                   workloads (reported, not asserted) and a screenshot
//   node dashboard.test.mjs restricted
//                                   signed in with MUSTER_TOKEN, a user RBAC binds in
//                                   namespace RESTRICTED_NS only: the workloads page shows
//                                   that namespace's workloads and counts and no other
//                                   namespace's name, a job the user submits appears
//                                   without a reload (no watch of every namespace: the page
//                                   re-reads), pages the user may not read say so;
//                                   MUSTER_ADMIN_TOKEN reads the truth to compare with
//
// Environment: MUSTER_URL (http://127.0.0.1:PORT), SCREENSHOT_DIR, CHROMIUM (default
// /usr/bin/chromium), MAKE_CLUSTER (tests/ui/make_cluster.py), KUBECTL (default kubectl),
// REPORT_FILE (a `muster simulate --report` page: its charts are checked too).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import puppeteer from 'puppeteer-core';

const BASE = process.env.MUSTER_URL;
const SHOTS = process.env.SCREENSHOT_DIR || 'ui-screenshots';
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const KUBECTL = process.env.KUBECTL || 'kubectl';
const MAKE_CLUSTER = process.env.MAKE_CLUSTER || path.join(path.dirname(new URL(import.meta.url).pathname), 'make_cluster.py');
const mode = process.argv[2] || 'pages';
if (!BASE) {
  console.error('MUSTER_URL is not set');
  process.exit(2);
}
mkdirSync(SHOTS, { recursive: true });

const failures = [];
const report = { mode, pages: {} };
function check(cond, what) {
  if (cond) {
    console.log('  ok   ' + what);
  } else {
    console.log('  FAIL ' + what);
    failures.push(what);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function kubectl(...args) {
  return execFileSync(KUBECTL, ['--server', BASE, ...args], { encoding: 'utf8', timeout: 60000 });
}
const kubectlJson = (...args) => JSON.parse(kubectl(...args, '-o', 'json'));
function curlJson(p) {
  return JSON.parse(execFileSync('curl', ['-sf', '--max-time', '20', BASE + p], { encoding: 'utf8', maxBuffer: 256 << 20 }));
}
const q = (s) => {
  const m = /^([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(String(s));
  if (!m) return NaN;
  const mult = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
  return parseFloat(m[1]) * (m[2] ? mult[m[2]] : 1);
};

const profile = mkdtempSync(path.join(tmpdir(), 'muster-ui-chromium-'));
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  userDataDir: profile,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
    '--disable-dev-shm-usage'],
  defaultViewport: { width: 1440, height: 900 },
  protocolTimeout: 120000,
});

// A page with every console error, uncaught exception and failed request recorded.
// options.token signs in with that bearer token; options.denied403 accepts the 403s
// of what that user may not read (the page shows them as "Not allowed").
async function openPage(hash, ready, name, options = {}) {
  const page = await browser.newPage();
  const errors = [];
  if (options.token) {
    await page.evaluateOnNewDocument((t) => sessionStorage.setItem('muster.token', t), options.token);
  }
  const denied = (status) => options.denied403 && status === 403;
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (options.denied403 && /status of 403/.test(m.text())) return;
    errors.push('console: ' + m.text());
  });
  page.on('pageerror', (e) => errors.push('exception: ' + e.message));
  page.on('requestfailed', (r) => {
    const why = r.failure() && r.failure().errorText;
    if (why !== 'net::ERR_ABORTED') errors.push(`request failed: ${r.url()} ${why}`);
  });
  page.on('response', (r) => { if (r.status() >= 400 && !denied(r.status())) errors.push(`HTTP ${r.status()}: ${r.url()}`); });
  const t0 = Date.now();
  await page.goto(`${BASE}/ui/${hash}`, { waitUntil: 'load', timeout: 60000 });
  await page.waitForFunction(ready, { timeout: 60000, polling: 100 });
  const loadMs = Date.now() - t0;
  const nav = await page.evaluate(() => {
    const n = performance.getEntriesByType('navigation')[0];
    return n ? { domContentLoadedMs: n.domContentLoadedEventEnd, loadMs: n.loadEventEnd } : null;
  });
  await sleep(400);  // charts and late cells
  report.pages[name] = Object.assign({ readyMs: loadMs }, nav || {});
  return { page, errors };
}
async function shoot(page, name) {
  const file = path.join(SHOTS, name + '.png');
  await page.screenshot({ path: file, fullPage: true });
  console.log('  screenshot ' + file);
}
function noErrors(errors, name) {
  check(errors.length === 0, `${name}: no console errors${errors.length ? ' (' + errors.slice(0, 5).join(' | ') + ')' : ''}`);
}

async function pagesPhase() {
  // ---- Overview ----
  console.log('overview');
  {
    const { page, errors } = await openPage('#/overview', () => document.querySelector('#chart-gpu svg path.mchart-line') && document.querySelector('#topstats b'), 'overview');
    const cluster = curlJson('/apis/muster.dev/v1alpha1/clusterviews/cluster');
    const top = await page.$eval('#topstats [data-stat=gpus] b', (e) => e.textContent);
    check(top.startsWith(`${q(cluster.used['nvidia.com/gpu'])} / ${q(cluster.allocatable['nvidia.com/gpu'])}`),
      `top bar GPUs "${top}" = clusterviews used/allocatable ${cluster.used['nvidia.com/gpu']}/${cluster.allocatable['nvidia.com/gpu']}`);
    const pending = await page.$eval('#topstats [data-stat=pending] b', (e) => e.textContent);
    check(Number(pending) === (cluster.workloads.Pending || 0), `top bar pending ${pending} = ${cluster.workloads.Pending || 0}`);
    await shoot(page, 'overview');
    noErrors(errors, 'overview');
    await page.close();
  }

  // ---- Queues: numbers equal the ClusterQueue status kubectl reads ----
  console.log('queues');
  {
    const { page, errors } = await openPage('#/queues', () => document.querySelectorAll('#queue-table tbody tr').length > 3, 'queues');
    const cqs = kubectlJson('get', 'clusterqueues');
    for (const cq of cqs.items) {
      const cells = await page.$$eval(`#queue-table tr.group[data-queue="${cq.metadata.name}"] td`, (tds) => Object.fromEntries(tds.map((t) => [t.dataset.cell, t.textContent])));
      check(parseInt(cells.pending, 10) === (cq.status.pendingWorkloads || 0),
        `queues: ${cq.metadata.name} pending ${cells.pending} = status.pendingWorkloads ${cq.status.pendingWorkloads || 0}`);
      check(parseInt(cells.admitted, 10) === (cq.status.admittedWorkloads || 0),
        `queues: ${cq.metadata.name} admitted ${cells.admitted} = status.admittedWorkloads ${cq.status.admittedWorkloads || 0}`);
      for (const f of cq.status.flavorsUsage || []) {
        for (const r of f.resources) {
          if (r.name !== 'nvidia.com/gpu') continue;
          const used = await page.$$eval(`#queue-table tr[data-key="clusterqueue.${cq.metadata.name}|${f.name}|nvidia.com/gpu"] td[data-cell=used]`, (t) => t.map((x) => x.textContent));
          check(used.length === 1 && q(used[0]) === q(r.total),
            `queues: ${cq.metadata.name} ${f.name} GPUs used ${used[0]} = status.flavorsUsage ${r.total}`);
        }
      }
    }
    await shoot(page, 'queues');
    noErrors(errors, 'queues');
    await page.close();
  }

  // ---- Workloads: states and positions equal the API's; a new job shows up live ----
  console.log('workloads');
  {
    const { page, errors } = await openPage('#/workloads', () => document.body.dataset.workloadsReady === '1', 'workloads');
    const wls = kubectlJson('get', 'workloads', '-A');
    const views = curlJson('/apis/muster.dev/v1alpha1/workloadviews');
    const rows = await page.$$eval('#workload-table tbody tr', (trs) => trs.map((tr) => ({
      key: tr.dataset.key, state: tr.children[2].textContent, position: tr.children[4].textContent })));
    check(rows.length === wls.items.length, `workloads: ${rows.length} rows = ${wls.items.length} Workload objects`);
    for (const wl of wls.items) {
      const key = `${wl.metadata.namespace}/${wl.metadata.name}`;
      const row = rows.find((r) => r.key === key);
      const admitted = ((wl.status || {}).conditions || []).some((c) => c.type === 'Admitted' && c.status === 'True');
      const shown = row ? row.state : '(missing)';
      check(row && (admitted ? ['Running', 'Admitted'].includes(shown) : ['Pending', 'Inadmissible'].includes(shown)),
        `workloads: ${key} shows ${shown}, Admitted condition ${admitted}`);
      const view = views.items.find((v) => `${v.metadata.namespace}/${v.metadata.name}` === key);
      const want = view && view.positionInClusterQueue !== undefined ? String(view.positionInClusterQueue + 1) : '';
      check(row && row.position === want, `workloads: ${key} position "${row && row.position}" = "${want}"`);
    }
    await shoot(page, 'workloads');

    // Live: a job created now appears and becomes Running without a reload.
    await page.evaluate(() => { window.__noReload = 'still here'; });
    const job = execFileSync('python3', [MAKE_CLUSTER, 'job', 'live-check', '1'], { encoding: 'utf8' });
    const file = path.join(profile, 'live-check.json');
    writeFileSync(file, job);
    const t0 = Date.now();
    kubectl('apply', '-f', file);
    const key = 'team-prod/pytorchjob-live-check';
    await page.waitForSelector(`#workload-table tr[data-key="${key}"]`, { timeout: 30000 });
    const appearMs = Date.now() - t0;
    check(true, `live: ${key} appeared ${appearMs} ms after kubectl apply`);
    await page.waitForFunction((k) => {
      const tr = document.querySelector(`#workload-table tr[data-key="${k}"]`);
      return tr && ['Running', 'Admitted'].includes(tr.children[2].textContent);
    }, { timeout: 30000, polling: 100 }, key);
    const admittedMs = Date.now() - t0;
    check(true, `live: ${key} Running ${admittedMs} ms after kubectl apply`);
    check(await page.evaluate(() => window.__noReload) === 'still here', 'live: no page reload');
    const wl = kubectlJson('get', 'workload', '-n', 'team-prod', 'pytorchjob-live-check');
    check((wl.status.conditions || []).some((c) => c.type === 'Admitted' && c.status === 'True'), 'live: kubectl agrees: Admitted=True');
    report.live = { appearMs, runningMs: admittedMs };
    await shoot(page, 'workloads-live');
    noErrors(errors, 'workloads');
    await page.close();
  }

  // ---- Job page ----
  console.log('job page');
  {
    const { page, errors } = await openPage('#/workload/team-research/pytorchjob-llm-pretrain',
      () => document.body.dataset.jobReady === '1' && document.querySelector('#pods-table'), 'job');
    const pods = kubectlJson('get', 'pods', '-n', 'team-research', '-l', 'muster.dev/job-name=llm-pretrain');
    const rows = await page.$$eval('#pods-table tbody tr', (trs) => trs.map((t) => t.children[0].textContent));
    check(rows.length === pods.items.length && pods.items.every((p) => rows.includes(p.metadata.name)),
      `job: pods table lists the ${pods.items.length} pods kubectl lists (${rows.length} rows)`);
    const events = kubectlJson('get', 'events', '-n', 'team-research', '--field-selector', 'involvedObject.name=llm-pretrain');
    const eventRows = await page.$$eval('#events-table tbody tr', (t) => t.length).catch(() => 0);
    check(eventRows === Math.min(50, events.items.length), `job: ${eventRows} events shown = ${events.items.length} from kubectl`);
    check(await page.$$eval('#decisions-table tbody tr', (t) => t.length).catch(() => 0) > 0, 'job: decision-log entries shown');
    check(await page.$$eval('pre.log', (t) => t.length) === pods.items.length, 'job: a log tail per pod');
    await shoot(page, 'job');
    noErrors(errors, 'job');
    await page.close();
  }
  {
    const { page, errors } = await openPage('#/workload/team-research/pytorchjob-llm-finetune',
      () => document.body.dataset.jobReady === '1', 'job-pending');
    const view = curlJson('/apis/muster.dev/v1alpha1/namespaces/team-research/workloadviews/pytorchjob-llm-finetune');
    const shortfall = await page.$$eval('#shortfall-table tbody tr', (trs) => trs.map((t) => [...t.children].map((c) => c.textContent)));
    check(shortfall.length === view.shortfall.length && view.shortfall.every((s, i) =>
      shortfall[i][0] === s.flavor && q(shortfall[i][2]) === q(s.requested) && q(shortfall[i][4]) === q(s.missing)),
    `pending job: missing quota table = the WorkloadView's shortfall (${view.shortfall.length} rows)`);
    await shoot(page, 'job-pending');
    noErrors(errors, 'job-pending');
    await page.close();
  }

  // ---- Nodes: GPUs held per node equal the GPUs of the pods kubectl lists there ----
  console.log('nodes');
  {
    const { page, errors } = await openPage('#/nodes', () => document.body.dataset.nodesReady === '1', 'nodes');
    const pods = kubectlJson('get', 'pods', '-A');
    const byNode = {};
    for (const p of pods.items) {
      if (!p.spec.nodeName || ['Succeeded', 'Failed'].includes((p.status || {}).phase)) continue;
      const g = p.spec.containers.reduce((n, c) => n + Number(((c.resources || {}).requests || {})['nvidia.com/gpu'] || 0), 0);
      byNode[p.spec.nodeName] = (byNode[p.spec.nodeName] || 0) + g;
    }
    const shown = await page.$$eval('#node-map .node', (ns) => ns.map((n) => [n.dataset.node, n.querySelectorAll('.gpu.held').length]));
    const nodes = kubectlJson('get', 'nodes');
    check(shown.length === nodes.items.length, `nodes: ${shown.length} node boxes = ${nodes.items.length} Nodes`);
    for (const [name, held] of shown) check(held === (byNode[name] || 0), `nodes: ${name} shows ${held} GPUs held = ${byNode[name] || 0} requested by its pods`);
    await shoot(page, 'nodes');
    noErrors(errors, 'nodes');
    await page.close();
  }

  // ---- Timeline ----
  console.log('timeline');
  {
    const { page, errors } = await openPage('#/timeline', () => document.body.dataset.timelineReady === '1', 'timeline');
    const tl = curlJson('/apis/muster.dev/v1alpha1/clusterviews/cluster/timeline');
    const rows = await page.$$eval('#timeline-table tbody tr', (t) => t.length);
    check(rows === Math.min(500, tl.entries.length), `timeline: ${rows} rows = ${tl.entries.length} entries`);
    const dots = await page.$$eval('#timeline-chart circle.mchart-event', (c) => c.length);
    check(dots === tl.entries.filter((e) => ['Admit', 'Start', 'Preempt', 'Evict', 'Finish', 'Fail'].includes(e.action)).length,
      `timeline: ${dots} chart marks`);
    await shoot(page, 'timeline');
    noErrors(errors, 'timeline');
    await page.close();
  }
}

// `muster simulate --report`: the same chart module draws the report's charts.
async function reportPhase(file) {
  console.log('simulator report');
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  page.on('pageerror', (e) => errors.push('exception: ' + e.message));
  page.on('request', (r) => { if (!r.url().startsWith('file:')) errors.push('fetched from elsewhere: ' + r.url()); });
  await page.goto('file://' + file, { waitUntil: 'load', timeout: 60000 });
  const charts = await page.$$eval('div.chart', (divs) => divs.map((d) => [d.id, d.querySelectorAll('path.mchart-line').length]));
  check(charts.length === 3 && charts.every(([, n]) => n > 0), `report: 3 charts drawn by chart.js (${JSON.stringify(charts)})`);
  await shoot(page, 'report');
  noErrors(errors, 'report');
  await page.close();
}

async function scalePhase() {
  console.log('workloads page at scale');
  const cluster = curlJson('/apis/muster.dev/v1alpha1/clusterviews/cluster');
  const total = Object.values(cluster.workloads).reduce((a, b) => a + b, 0);
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const { page, errors } = await openPage('#/workloads', () => document.body.dataset.workloadsReady === '1', 'workloads-scale');
    const m = await page.evaluate(() => window.__muster);
    const rows = await page.$$eval('#workload-table tbody tr', (t) => t.length);
    runs.push({ firstRenderMs: Math.round(m.workloadsFirstRenderMs), loadMs: Math.round(report.pages['workloads-scale'].loadMs || 0), readyMs: report.pages['workloads-scale'].readyMs, rows });
    if (i === 0) {
      check(rows > 0, `scale: ${rows} rows on the first page of ${total} workloads`);
      const pager = await page.$eval('#pager-text', (e) => e.textContent);
      check(pager.endsWith(`of ${total.toLocaleString('en-US')}`), `scale: pager "${pager}" counts ${total}`);
      await shoot(page, 'workloads-10k');
      noErrors(errors, 'workloads at scale');
    }
    await page.close();
  }
  report.scale = { workloads: total, runs };
  console.log(`  workloads page with ${total} workloads: first render ${runs.map((r) => r.firstRenderMs + ' ms').join(', ')} ` +
    `(from script start to the first page of rows drawn); navigation load event ${runs.map((r) => r.loadMs + ' ms').join(', ')}; ` +
    `ready (navigation start to rows drawn, measured by the test) ${runs.map((r) => r.readyMs + ' ms').join(', ')}`);
  {
    const { page, errors } = await openPage('#/nodes', () => document.body.dataset.nodesReady === '1', 'nodes-scale');
    report.scale.nodesReadyMs = report.pages['nodes-scale'].readyMs;
    console.log(`  nodes page with ${cluster.nodes.total} nodes ready in ${report.scale.nodesReadyMs} ms`);
    await shoot(page, 'nodes-1000');
    noErrors(errors, 'nodes at scale');
    await page.close();
  }
  {
    const { page, errors } = await openPage('#/queues', () => document.querySelectorAll('#queue-table tbody tr').length > 0, 'queues-scale');
    await shoot(page, 'queues-scale');
    noErrors(errors, 'queues at scale');
    await page.close();
  }
}

function curlJsonAs(token, p) {
  return JSON.parse(execFileSync('curl', ['-sf', '--max-time', '20', '-H', `Authorization: Bearer ${token}`, BASE + p],
    { encoding: 'utf8', maxBuffer: 256 << 20 }));
}

async function restrictedPhase() {
  const token = process.env.MUSTER_TOKEN;
  const admin = process.env.MUSTER_ADMIN_TOKEN;
  const ns = process.env.RESTRICTED_NS || 'team-a';
  const all = curlJsonAs(admin, '/apis/muster.dev/v1alpha1/workloadviews').items;
  const mine = all.filter((w) => w.metadata.namespace === ns);
  const others = [...new Set(all.map((w) => w.metadata.namespace).filter((n) => n !== ns))];
  check(mine.length > 0 && others.length > 0, `restricted: workloads in ${ns} (${mine.length}) and in other namespaces (${others.join(', ')})`);
  console.log('workloads, as a user of ' + ns);
  {
    const { page, errors } = await openPage('#/workloads', () => document.body.dataset.workloadsReady === '1', 'workloads-restricted', { token, denied403: true });
    const keys = await page.$$eval('#workload-table tbody tr td:first-child', (tds) => tds.map((t) => t.dataset.k));
    check(keys.length === mine.length && keys.every((k) => k.startsWith(ns + '/')),
      `restricted: the table holds the ${mine.length} workloads of ${ns} only (${keys.join(' ')})`);
    const allChip = await page.$eval('#state-chips [data-state=all] b', (e) => e.textContent);
    check(Number(allChip) === mine.length, `restricted: the All chip counts ${allChip} = ${mine.length}`);
    const text = await page.evaluate(() => document.body.innerText);
    for (const other of others) check(!text.includes(other), `restricted: nothing of namespace ${other} is shown`);

    // A job the user submits shows up without a reload (curl: kubectl sends no bearer
    // token to a plain-HTTP server).
    const job = execFileSync('python3', [MAKE_CLUSTER, 'restricted-job', ns, 'restricted-live'], { encoding: 'utf8' });
    execFileSync('curl', ['-sf', '-o', '/dev/null', '--max-time', '20', '-H', `Authorization: Bearer ${token}`,
      '-H', 'Content-Type: application/json', '-X', 'POST', '--data', job, `${BASE}/apis/batch/v1/namespaces/${ns}/jobs`]);
    let seen = false;
    for (let i = 0; i < 100 && !seen; i++) {
      await sleep(200);
      seen = await page.$$eval('#workload-table tbody tr td:first-child a', (as) => as.some((a) => a.textContent === 'restricted-live'));
    }
    check(seen, 'restricted: a job the user submits appears without a reload');
    const live = await page.$eval('#live', (e) => e.textContent.trim());
    check(live === 'polling', `restricted: the live indicator says it re-reads ("${live}")`);
    await shoot(page, 'workloads-restricted');
    noErrors(errors, 'workloads as a restricted user');
    await page.close();
  }
  console.log('nodes, as a user of ' + ns);
  {
    const { page, errors } = await openPage('#/nodes', () => document.querySelector('.error.denied'), 'nodes-restricted', { token, denied403: true });
    const msg = await page.$eval('.error.denied', (e) => e.textContent);
    check(/nodeviews/.test(msg), `restricted: the nodes page says the user may not read NodeViews ("${msg.slice(0, 120)}")`);
    await shoot(page, 'nodes-restricted');
    noErrors(errors, 'nodes as a restricted user');
    await page.close();
  }
}

try {
  if (mode === 'scale') await scalePhase();
  else if (mode === 'restricted') await restrictedPhase();
  else {
    await pagesPhase();
    if (process.env.REPORT_FILE) await reportPhase(process.env.REPORT_FILE);
  }
} catch (e) {
  failures.push('exception: ' + (e.stack || e));
  console.log('  FAIL ' + (e.stack || e));
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
writeFileSync(path.join(SHOTS, `report-${mode}.json`), JSON.stringify(report, null, 1));
if (failures.length) {
  console.log(`${failures.length} check(s) failed`);
  process.exit(1);
}
console.log(`${mode}: all checks passed`);
