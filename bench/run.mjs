// `make bench`: sizes, cold load to first computed result, interaction latency, long tasks,
// for dpcalc (dist/) and the baseline (bench/baseline/dist/), side by side, with ratios.
// Prints a table and writes bench/out/bench.json. Absolute times drift on shared machines;
// read the ratios.
import { createServer } from 'node:http';
import { readFile, readdir, mkdir, writeFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../.tools/node_modules/playwright-core');
const here = new URL('./', import.meta.url).pathname;
const APPS = { dpcalc: join(here, '../dist/'), baseline: join(here, 'baseline/dist/') };
const LOADS = Number(process.env.LOADS || 21);
const EDITS = Number(process.env.EDITS || 250);
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };
const KIND = { '.wasm': 'wasm', '.js': 'js', '.css': 'css', '.html': 'html' };

async function sizes(dir) {
  const out = {};
  for (const f of await readdir(dir)) {
    const kind = KIND[extname(f)];
    if (!kind) continue;
    const body = await readFile(join(dir, f));
    const s = out[kind] ||= { raw: 0, gzip: 0, brotli: 0 };
    s.raw += body.length;
    s.gzip += gzipSync(body, { level: 9 }).length;
    s.brotli += brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  }
  out.total = ['raw', 'gzip', 'brotli'].reduce((t, k) => ({ ...t, [k]: Object.values(out).reduce((a, s) => a + s[k], 0) }), {});
  return out;
}

// Served as a static host serves them: gzip when the browser accepts it (every browser does),
// each file compressed once (level 9, as the sizes above are counted).
const gzipped = new Map();
const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const [, app, ...rest] = url.pathname.split('/');
  const root = APPS[app];
  if (!root) { res.writeHead(404).end(); return; }
  const file = normalize(join(root, rest.join('/') || 'index.html'));
  try {
    const body = await readFile(file);
    const headers = { 'content-type': TYPES[extname(file)] || 'application/octet-stream', 'cache-control': 'no-store' };
    if (/\bgzip\b/.test(req.headers['accept-encoding'] || '')) {
      if (!gzipped.has(file)) gzipped.set(file, gzipSync(body, { level: 9 }));
      headers['content-encoding'] = 'gzip';
      res.writeHead(200, headers).end(gzipped.get(file));
    } else {
      res.writeHead(200, headers).end(body);
    }
  } catch { res.writeHead(404).end(); }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

// Runs in the page before any of its scripts: the time the result first has a data-value, and
// every long task (> 50 ms) until then.
const PROBE = () => {
  window.__bench = { first: null, longTasks: [] };
  try {
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__bench.longTasks.push(e.duration); })
      .observe({ type: 'longtask', buffered: true });
  } catch {}
  const check = () => {
    if (window.__bench.first === null && document.querySelector('[data-output="global_batch_size"][data-value]')) {
      window.__bench.first = performance.now();
    }
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true });
};

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { n: s.length, median: q(0.5), p95: q(0.95), max: s[s.length - 1] };
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

// Chromium's network emulation (DevTools protocol): latency per request, throughput in bytes/s.
const PROFILES = {
  local: null,
  '10 Mbit/s + 40 ms': { latency: 40, throughput: 10e6 / 8 },
  '1.6 Mbit/s + 150 ms': { latency: 150, throughput: 1.6e6 / 8 },
};

async function coldLoads(app, query, profile = null, loads = LOADS) {
  const times = [], longest = [], bytes = [];
  for (let i = 0; i < loads; i++) {
    const context = await browser.newContext(); // fresh: no cache, no compiled-wasm cache
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    if (profile) {
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false, latency: profile.latency,
        downloadThroughput: profile.throughput, uploadThroughput: profile.throughput,
      });
    }
    // the bytes on the wire (compressed, headers included) until the first result
    let transferred = 0;
    cdp.on('Network.loadingFinished', (e) => { transferred += e.encodedDataLength; });
    await page.addInitScript(PROBE);
    await page.goto(`${origin}/${app}/${query}`);
    await page.waitForFunction(() => window.__bench.first !== null, null, { timeout: 60000, polling: 10 });
    const b = await page.evaluate(() => window.__bench);
    times.push(b.first);
    bytes.push(transferred);
    longest.push(Math.max(0, ...b.longTasks));
    await context.close();
  }
  return {
    load: stats(times), longest_task: Math.max(...longest), tasks_over_50ms: longest.filter((t) => t > 50).length,
    bytes_before_first_result: Math.max(...bytes),
  };
}

async function interactions() {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/dpcalc/?nodes=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000`);
  await page.waitForSelector('[data-output="total_num_steps"][data-value]');
  await page.waitForSelector('.explorer tr[data-layout]');
  const times = await page.evaluate(async (edits) => {
    const input = document.getElementById('in-num_samples');
    // every edit changes the link, which is rendered in the same update as the results
    const out = document.querySelector('[data-output="share_url"]');
    const tick = () => new Promise((ok) => setTimeout(ok, 0));
    const result = [], full = [];
    for (let i = 0; i < edits; i++) {
      const before = out.getAttribute('data-value');
      const done = new Promise((resolve) => {
        const obs = new MutationObserver(() => {
          if (out.getAttribute('data-value') !== before) { obs.disconnect(); resolve(performance.now()); }
        });
        obs.observe(out, { attributes: true });
        setTimeout(() => resolve(NaN), 2000);
      });
      const t0 = performance.now();
      input.value = String(1000 + 37 * (i + 1));
      input.dispatchEvent(new InputEvent('input', { bubbles: true }));
      result.push((await done) - t0);
      // the run section (tokens, map, explorer) redraws on the next task: wait for it, and
      // count it as the time to a fully updated page
      await tick();
      full.push(performance.now() - t0);
      await tick();
    }
    return { result, full };
  }, EDITS);
  await context.close();
  return { ...stats(times.result), full: stats(times.full) };
}

// The explorer's own computation time (data-compute-ms, measured in the page around
// calc::layout::explore) for 65,536 GPUs, over several recomputations each.
async function explorer(query, field) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/dpcalc/?${query}`);
  await page.waitForSelector('.explorer[data-compute-ms] tr[data-layout]', { timeout: 20000 });
  const r = await page.evaluate(async (field) => {
    const input = document.getElementById(`in-${field}`);
    const times = [Number(document.querySelector('.explorer').dataset.computeMs)];
    for (let i = 0; i < 15; i++) {
      // each edit changes the inputs, so the explorer recomputes (one task after the results,
      // components/run.rs) and rewrites data-compute-ms; wait for that new element or value
      const before = document.querySelector('.explorer');
      const stamp = before.dataset.computeMs;
      const changed = new Promise((ok) => {
        const obs = new MutationObserver(() => {
          const now = document.querySelector('.explorer');
          if (now !== before || now.dataset.computeMs !== stamp || now.querySelector('tr[data-layout]') !== before.querySelector('tr[data-layout]')) {
            obs.disconnect(); ok(true);
          }
        });
        obs.observe(document.body, { subtree: true, attributes: true, childList: true, characterData: true });
        setTimeout(() => { obs.disconnect(); ok(false); }, 2000);
      });
      input.value = String(100000 + 997 * (i + 1));
      input.dispatchEvent(new InputEvent('input', { bubbles: true }));
      await changed;
      await new Promise((ok) => setTimeout(ok, 0));
      times.push(Number(document.querySelector('.explorer').dataset.computeMs));
    }
    return { rows: document.querySelectorAll('.explorer tr[data-layout]').length, times };
  }, field);
  await context.close();
  // the first computation runs in baseline-compiled (Liftoff) code during the page load; the
  // rest are the recomputations an edit causes
  return { rows: r.rows, first: r.times[0], compute: stats(r.times.slice(1)) };
}

const report = { when: new Date().toISOString(), loads: LOADS, edits: EDITS, apps: {} };
for (const app of Object.keys(APPS)) report.apps[app] = { size: await sizes(APPS[app]) };
const appQuery = '?nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000';
// interleave nothing: run each app's loads back to back, baseline first, then dpcalc, then baseline again
const b1 = await coldLoads('baseline', '');
const d = await coldLoads('dpcalc', appQuery);
const b2 = await coldLoads('baseline', '');
report.apps.baseline.cold = { ...b1, load: stats([]) };
report.apps.baseline.cold.load = { median: (b1.load.median + b2.load.median) / 2, p95: (b1.load.p95 + b2.load.p95) / 2, n: b1.load.n + b2.load.n };
report.apps.baseline.cold.longest_task = Math.max(b1.longest_task, b2.longest_task);
report.apps.dpcalc.cold = d;
// the throttled profiles, both apps served gzip, THROTTLED_LOADS fresh loads each (median)
const THROTTLED_LOADS = Number(process.env.THROTTLED_LOADS || 7);
report.throttled = {};
for (const [name, profile] of Object.entries(PROFILES)) {
  if (!profile) continue;
  const base = await coldLoads('baseline', '', profile, THROTTLED_LOADS);
  const app = await coldLoads('dpcalc', appQuery, profile, THROTTLED_LOADS);
  report.throttled[name] = { dpcalc: app, baseline: base };
}
report.apps.dpcalc.interaction = await interactions();
report.apps.dpcalc.explorer = {
  axolotl: await explorer('world_size=65536&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=100000', 'num_samples'),
  megatron: await explorer('framework=megatron&world_size=65536&micro_batch_size=2&global_batch_size=65536&train_samples=100000', 'train_samples'),
  hf: await explorer('framework=hf&world_size=65536&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=100000', 'num_samples'),
  torchtitan: await explorer('framework=torchtitan&world_size=65536&local_batch_size=2&global_batch_size=131072&steps=1000', 'steps'),
};
await browser.close();
server.close();

const A = report.apps.dpcalc, B = report.apps.baseline;
const kb = (n) => (n / 1024).toFixed(1);
const ratio = (a, b) => (b ? (a / b).toFixed(2) + '×' : '-');
const rows = [['', 'dpcalc', 'baseline', 'ratio']];
for (const kind of ['wasm', 'js', 'css', 'html', 'total']) {
  for (const enc of ['raw', 'gzip', 'brotli']) {
    const a = A.size[kind]?.[enc] ?? 0, b = B.size[kind]?.[enc] ?? 0;
    rows.push([`${kind} ${enc} (KB)`, kb(a), kb(b), ratio(a, b)]);
  }
}
rows.push([`cold load median (ms, n=${A.cold.load.n})`, A.cold.load.median.toFixed(1), B.cold.load.median.toFixed(1), ratio(A.cold.load.median, B.cold.load.median)]);
rows.push(['cold load p95 (ms)', A.cold.load.p95.toFixed(1), B.cold.load.p95.toFixed(1), ratio(A.cold.load.p95, B.cold.load.p95)]);
rows.push(['longest start-up task (ms)', A.cold.longest_task.toFixed(1), B.cold.longest_task.toFixed(1), '']);
rows.push(['bytes before the first result (KB, gzip on the wire)', kb(A.cold.bytes_before_first_result), kb(B.cold.bytes_before_first_result), ratio(A.cold.bytes_before_first_result, B.cold.bytes_before_first_result)]);
for (const [name, t] of Object.entries(report.throttled)) {
  rows.push([`cold load median, ${name} (ms, n=${t.dpcalc.load.n})`, t.dpcalc.load.median.toFixed(1), t.baseline.load.median.toFixed(1), ratio(t.dpcalc.load.median, t.baseline.load.median)]);
}
rows.push([`interaction median (ms, n=${A.interaction.n})`, A.interaction.median.toFixed(2), '', '']);
rows.push(['interaction p95 (ms)', A.interaction.p95.toFixed(2), '', '']);
rows.push(['…until the run section too, median / p95 (ms)', `${A.interaction.full.median.toFixed(2)} / ${A.interaction.full.p95.toFixed(2)}`, '', '']);
for (const [fw, e] of Object.entries(A.explorer)) {
  rows.push([`explorer ${fw}, 65,536 GPUs, ${e.rows} rows (ms, first / median / max)`, `${e.first.toFixed(2)} / ${e.compute.median.toFixed(2)} / ${e.compute.max.toFixed(2)}`, '', '']);
}
const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
for (const r of rows) console.log(r.map((c, i) => (i ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  '));
const targets = [
  ['total gzip ≤ 100 KB', A.size.total.gzip <= 100 * 1024],
  ['cold load ≤ 1.3 × baseline', A.cold.load.median <= 1.3 * B.cold.load.median],
  ...Object.entries(report.throttled).map(([name, t]) => [`cold load ≤ 1.3 × baseline at ${name}`, t.dpcalc.load.median <= 1.3 * t.baseline.load.median]),
  ['≤ 100 KB transferred before the first result', A.cold.bytes_before_first_result <= 100 * 1024],
  ['interaction median ≤ 4 ms', A.interaction.median <= 4],
  ['interaction p95 ≤ 8 ms', A.interaction.p95 <= 8],
  ['no start-up task over 50 ms', A.cold.tasks_over_50ms === 0],
  ['explorer (65,536 GPUs) well under a frame: recomputation max < 8 ms', Object.values(A.explorer).every((e) => e.compute.max < 8)],
];
console.log('\ntargets:');
for (const [t, ok] of targets) console.log(`  ${ok ? 'met    ' : 'NOT MET'}  ${t}`);
report.targets = Object.fromEntries(targets);
await mkdir(join(here, 'out'), { recursive: true });
await writeFile(join(here, 'out/bench.json'), JSON.stringify(report, null, 2));
console.log('\nwrote bench/out/bench.json');
