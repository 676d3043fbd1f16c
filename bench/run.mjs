// `make bench`: sizes, cold load to the first computed result for a link of every framework,
// the full app's arrival, start-up long tasks, interaction latency and the layout explorer, for
// dpcalc (dist/) against the bare-Yew baseline (bench/baseline/dist/), with the ratios its
// targets (the `target(...)` lines at its end) are set in. Prints a table and the targets (met /
// NOT MET, naming the frameworks that fail), writes bench/out/bench.json with every figure and,
// after a full run (no ONLY, FRAMEWORKS or PROFILES), its section of docs/benchmark.md (doc.mjs).
// Absolute times drift on shared machines; read the ratios (the baseline's loads are interleaved
// with dpcalc's in each profile).
//
// The page may come in two stages: a small first view (dist/first-<id>.js + first-<id>_bg.wasm)
// paints the form and results and sets <html data-stage="first">, then the full Yew app
// (dpcalc.js + dpcalc_bg.wasm) takes over and sets data-stage="app". Without data-stage (a single
// Yew module), the full app's arrival is the first result. The first result is
// [data-output="global_batch_size"][data-value]; the full app is data-stage="app" when the page
// uses stages (or dist/ has the framework's first view), else the first result. Interaction and
// explorer measurements start once the full app is there.
//
// Env knobs (defaults give the full run, about 5-8 minutes on a 2-core VM):
//   LOADS=21            local cold loads of the baseline and of the main (axolotl) link
//   FW_LOADS=7          local cold loads of each other framework's link
//   THROTTLED_LOADS=7   cold loads of the baseline and of each framework's link per throttled profile
//   EDITS=250           edits in the interaction measurement
//   ONLY=cold,interaction,explorer,planner,scale   run only these parts (comma-separated; `first` = `cold`);
//                       sizes are always reported; the targets of parts not run say "not run"
//   FRAMEWORKS=axolotl,hf,...        only these frameworks' links (cold loads and explorer)
//   PROFILES=local,10mbit,1.6mbit    only these network profiles for the cold loads
//   CHROMIUM=/usr/bin/chromium       the browser
import { createServer } from 'node:http';
import { readFile, readdir, mkdir, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';
import { createRequire } from 'node:module';
import { writeSection, measuredAt } from './doc.mjs';

const started = performance.now();
const require = createRequire(import.meta.url);
const { chromium } = require('../.tools/node_modules/playwright-core');
const here = new URL('./', import.meta.url).pathname;
const APPS = { dpcalc: join(here, '../dist/'), baseline: join(here, 'baseline/dist/') };
const LOADS = Number(process.env.LOADS || 21);
const FW_LOADS = Number(process.env.FW_LOADS || 7);
const THROTTLED_LOADS = Number(process.env.THROTTLED_LOADS || 7);
const EDITS = Number(process.env.EDITS || 250);
const list = (v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : null);
const ONLY = new Set((list(process.env.ONLY) || ['cold', 'interaction', 'explorer', 'planner', 'scale']).map((s) => (s === 'first' ? 'cold' : s)));
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };
const KIND = { '.wasm': 'wasm', '.js': 'js', '.css': 'css', '.html': 'html' };
const KB = 1024;

// One realistic link per framework, each with its own keys (src/calc/frameworks/*/, tests/links.txt):
// 16 GPUs (2 nodes × 8), tensor parallel 2, a global batch of 64; each computes global_batch_size.
// axolotl's is the main link (LOADS local loads; the others FW_LOADS).
const LINKS = {
  axolotl: '?nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000',
  hf: '?framework=hf&nodes=2&tp_size=2&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=10000',
  deepspeed: '?framework=deepspeed&nodes=2&autotp_size=2&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=4&num_samples=10000',
  megatron: '?framework=megatron&nodes=2&tensor_model_parallel_size=2&micro_batch_size=2&global_batch_size=64&train_samples=10000',
  torchtitan: '?framework=torchtitan&nodes=2&tensor_parallel_degree=2&local_batch_size=2&global_batch_size=64&steps=1000',
  nanotron: '?framework=nanotron&nodes=2&dp=8&tp=2&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=1000',
};
const MAIN = 'axolotl';
// The explorer for 65,536 GPUs: [link, the field each edit changes, the first edit's value]
const EXPLORER = {
  axolotl: ['world_size=65536&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=100000', 'num_samples', 100000],
  megatron: ['framework=megatron&world_size=65536&micro_batch_size=2&global_batch_size=65536&train_samples=100000', 'train_samples', 100000],
  hf: ['framework=hf&world_size=65536&per_device_train_batch_size=2&gradient_accumulation_steps=4&num_samples=100000', 'num_samples', 100000],
  torchtitan: ['framework=torchtitan&world_size=65536&local_batch_size=2&global_batch_size=131072&steps=1000', 'steps', 100000],
  // 10M rows: at a global batch of 524,288 the data loader has whole steps
  deepspeed: ['framework=deepspeed&world_size=65536&train_micro_batch_size_per_gpu=2&gradient_accumulation_steps=4&num_samples=10000000', 'num_samples', 10000000],
  // no dp: each layout sets it (nanotron's dp has no default)
  nanotron: ['framework=nanotron&world_size=65536&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=1000', 'train_steps', 100000],
};
const FRAMEWORKS = list(process.env.FRAMEWORKS) || Object.keys(LINKS);
for (const fw of FRAMEWORKS) if (!LINKS[fw]) throw new Error(`FRAMEWORKS: unknown framework ${fw}`);

// Chromium's network emulation (DevTools protocol): latency per request, throughput in bytes/s.
const ALL_PROFILES = {
  local: { label: 'local', profile: null },
  '10mbit': { label: '10 Mbit/s + 40 ms', profile: { latency: 40, throughput: 10e6 / 8 } },
  '1.6mbit': { label: '1.6 Mbit/s + 150 ms', profile: { latency: 150, throughput: 1.6e6 / 8 } },
};
const PROFILES = list(process.env.PROFILES) || Object.keys(ALL_PROFILES);
for (const p of PROFILES) if (!ALL_PROFILES[p]) throw new Error(`PROFILES: unknown profile ${p} (local, 10mbit, 1.6mbit)`);

// ---- sizes ---------------------------------------------------------------------------------

const gz = (body) => gzipSync(body, { level: 9 });
async function sizes(dir) {
  const out = {};
  for (const f of await readdir(dir)) {
    const kind = KIND[extname(f)];
    if (!kind) continue;
    const body = await readFile(join(dir, f));
    const s = out[kind] ||= { raw: 0, gzip: 0, brotli: 0 };
    s.raw += body.length;
    s.gzip += gz(body).length;
    s.brotli += brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
  }
  out.total = ['raw', 'gzip', 'brotli'].reduce((t, k) => ({ ...t, [k]: Object.values(out).reduce((a, s) => a + s[k], 0) }), {});
  return out;
}
async function gzipOf(dir, files) {
  let total = 0;
  const each = {};
  for (const f of files) total += each[f] = gz(await readFile(join(dir, f))).length;
  return { files: each, gzip: total };
}
const SHELL = ['index.html', 'style.css', 'boot.js'];
const FULL_APP = ['dpcalc.js', 'dpcalc_bg.wasm'];
const firstView = (fw) => [`first-${fw}.js`, `first-${fw}_bg.wasm`];
// the frameworks whose first view is built: their pages must reach data-stage="app"
const hasFirstView = (fw) => firstView(fw).every((f) => existsSync(join(APPS.dpcalc, f)));

// ---- server --------------------------------------------------------------------------------

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
      if (!gzipped.has(file)) gzipped.set(file, gz(body));
      headers['content-encoding'] = 'gzip';
      res.writeHead(200, headers).end(gzipped.get(file));
    } else {
      res.writeHead(200, headers).end(body);
    }
  } catch { res.writeHead(404).end(); }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

// Runs in the page before any of its scripts: the time the result first has a data-value, the
// time each data-stage value first appears, and every long task (> 50 ms) with its start.
const PROBE = () => {
  const b = window.__bench = { first: null, stages: {}, longTasks: [], observer: null };
  try {
    b.observer = new PerformanceObserver((l) => { for (const e of l.getEntries()) b.longTasks.push([e.startTime, e.duration]); });
    b.observer.observe({ type: 'longtask', buffered: true });
  } catch {}
  const check = () => {
    const now = performance.now();
    if (b.first === null && document.querySelector('[data-output="global_batch_size"][data-value]')) b.first = now;
    const stage = document.documentElement?.dataset.stage;
    if (stage && !(stage in b.stages)) b.stages[stage] = now;
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true });
};

// Until the full app is there: data-stage="app" when the page uses stages (or is expected to),
// else nothing more than the first result.
const APP_READY = (expectStages) => {
  const b = window.__bench;
  if (!b || b.first === null) return false;
  if (b.stages.app !== undefined) return true;
  return !expectStages && Object.keys(b.stages).length === 0;
};

const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (!s.length) return { n: 0, median: NaN, p95: NaN, max: NaN };
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  const mid = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return { n: s.length, median: mid, p95: q(0.95), max: s[s.length - 1] };
};

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});

// The bytes on the wire (compressed, headers included) each request had received by a time on
// the DevTools clock: all of it once loadingFinished, else its headers and body chunks so far
// (a download still running when the first result appears counts for what it had by then).
function wireBytesBy(requests, t) {
  let total = 0;
  for (const r of requests.values()) {
    if (r.finished && r.finished[0] <= t) { total += r.finished[1]; continue; }
    if (r.headers && r.headers[0] <= t) total += r.headers[1];
    for (const [ts, n] of r.chunks) if (ts <= t) total += n;
  }
  return total;
}

// One fresh load (new context: no cache, no compiled-wasm cache) of `path`.
async function coldLoad(path, profile, expectStages) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    if (profile) {
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false, latency: profile.latency,
        downloadThroughput: profile.throughput, uploadThroughput: profile.throughput,
      });
    }
    const requests = new Map();
    const req = (id) => requests.get(id) || requests.set(id, { url: '', chunks: [] }).get(id);
    let documentId = null;
    cdp.on('Network.requestWillBeSent', (e) => {
      req(e.requestId).url = e.request.url;
      if (e.type === 'Document' && documentId === null) documentId = e.requestId;
    });
    cdp.on('Network.responseReceived', (e) => {
      const r = req(e.requestId);
      r.headers = [e.timestamp, e.response.encodedDataLength || 0];
      r.timing = e.response.timing;
    });
    cdp.on('Network.dataReceived', (e) => { req(e.requestId).chunks.push([e.timestamp, e.encodedDataLength || 0]); });
    cdp.on('Network.loadingFinished', (e) => { req(e.requestId).finished = [e.timestamp, e.encodedDataLength]; });
    await page.addInitScript(PROBE);
    await page.goto(`${origin}${path}`, { waitUntil: 'commit' });
    const timeout = profile ? 120000 : 60000;
    await page.waitForFunction(() => window.__bench && window.__bench.first !== null, null, { timeout, polling: 10 });
    let arrived = true;
    try {
      await page.waitForFunction(APP_READY, expectStages, { timeout, polling: 10 });
    } catch { arrived = false; }
    const b = await page.evaluate(async () => {
      await new Promise((ok) => setTimeout(ok, 0)); // the task that painted has ended: its long-task entry is queued
      const b = window.__bench;
      if (b.observer) for (const e of b.observer.takeRecords()) b.longTasks.push([e.startTime, e.duration]);
      const nav = performance.getEntriesByType('navigation')[0];
      return { first: b.first, stages: b.stages, longTasks: b.longTasks, timeOrigin: performance.timeOrigin, requestStart: nav ? nav.requestStart : null };
    });
    const staged = Object.keys(b.stages).length > 0;
    const app = arrived ? (staged ? b.stages.app : b.first) : null;
    // The page's clock on the DevTools one: the document's request was sent at
    // timing.requestTime + sendStart (DevTools, s) = timeOrigin + requestStart (page, ms).
    const doc = requests.get(documentId);
    const t0 = doc?.timing && b.requestStart !== null
      ? doc.timing.requestTime + doc.timing.sendStart / 1000 - b.requestStart / 1000
      : null;
    const at = (ms) => (t0 === null || ms === null ? Infinity : t0 + ms / 1000);
    const tasksBefore = (ms) => Math.max(0, ...b.longTasks.filter(([start]) => ms === null || start < ms).map(([, d]) => d));
    return {
      first: b.first,
      app,
      arrived,
      staged,
      stage_first: b.stages.first ?? null,
      bytes_before_first_result: wireBytesBy(requests, at(b.first)),
      bytes_before_app: wireBytesBy(requests, at(app)),
      longest_task_before_first_result: tasksBefore(b.first),
      longest_task_before_app: tasksBefore(app),
      long_tasks: b.longTasks,
    };
  } finally {
    await context.close();
  }
}

function summarize(loads) {
  const startup = loads.map((l) => l.longest_task_before_first_result);
  return {
    first_result: stats(loads.map((l) => l.first)),
    // the full app's arrival (data-stage="app"; the first result when the page has no stages)
    full_app: stats(loads.filter((l) => l.arrived).map((l) => l.app)),
    full_app_arrived: loads.filter((l) => l.arrived).length,
    staged: loads.some((l) => l.staged),
    bytes_before_first_result: Math.max(...loads.map((l) => l.bytes_before_first_result)),
    bytes_before_app: Math.max(...loads.map((l) => l.bytes_before_app)),
    longest_task_before_first_result: Math.max(...startup),
    loads_with_task_over_50ms_before_first_result: startup.filter((t) => t > 50).length,
    longest_task_before_app: Math.max(...loads.map((l) => l.longest_task_before_app)),
    loads,
  };
}

// Every app's loads of one profile, interleaved: each app's loads are spread evenly over the
// profile's run, so a machine that gets busier or quieter affects all of them alike.
async function coldProfile(id) {
  const { profile } = ALL_PROFILES[id];
  const jobs = [];
  const add = (key, path, n, expect) => {
    for (let j = 0; j < n; j++) jobs.push({ key, path, expect, order: (j + 0.5) / n });
  };
  add('baseline', '/baseline/', profile ? THROTTLED_LOADS : LOADS, false);
  for (const fw of FRAMEWORKS) {
    const n = profile ? THROTTLED_LOADS : fw === MAIN ? LOADS : FW_LOADS;
    add(fw, `/dpcalc/${LINKS[fw]}`, n, hasFirstView(fw));
  }
  jobs.sort((a, b) => a.order - b.order);
  const loads = {};
  const t = performance.now();
  for (const job of jobs) {
    try {
      (loads[job.key] ||= []).push(await coldLoad(job.path, profile, job.expect));
    } catch (e) {
      throw new Error(`cold load of ${job.path} (${ALL_PROFILES[id].label}): ${e.message}`);
    }
  }
  const out = { label: ALL_PROFILES[id].label, seconds: (performance.now() - t) / 1000, apps: {} };
  for (const [key, l] of Object.entries(loads)) out.apps[key] = summarize(l);
  return out;
}

// Waits for the full app: data-stage="app" when the page uses stages, and the given selectors.
async function fullApp(page, fw, selectors) {
  for (const s of selectors) await page.waitForSelector(s, { timeout: 60000 });
  await page.waitForFunction((expect) => {
    const stage = document.documentElement.dataset.stage;
    return stage === 'app' || (!expect && stage === undefined);
  }, hasFirstView(fw), { timeout: 60000, polling: 10 });
}

async function interactions() {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/dpcalc/?nodes=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000`);
  await fullApp(page, 'axolotl', ['[data-output="total_num_steps"][data-value]', '.explorer tr[data-layout]']);
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
async function explorer(fw) {
  const [query, field, base] = EXPLORER[fw];
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${origin}/dpcalc/?${query}`);
  await fullApp(page, fw, ['.explorer[data-compute-ms] tr[data-layout]']);
  const r = await page.evaluate(async ([field, base]) => {
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
      input.value = String(base + 997 * (i + 1));
      input.dispatchEvent(new InputEvent('input', { bubbles: true }));
      await changed;
      await new Promise((ok) => setTimeout(ok, 0));
      times.push(Number(document.querySelector('.explorer').dataset.computeMs));
    }
    return { rows: document.querySelectorAll('.explorer tr[data-layout]').length, times };
  }, [field, base]);
  await context.close();
  // the first computation runs in baseline-compiled (Liftoff) code during the page load; the
  // rest are the recomputations an edit causes
  return { link: `?${query}`, rows: r.rows, first: r.times[0], compute: stats(r.times.slice(1)) };
}

// The planner (view=plan, Megatron, Llama 3.1 8B on H100, global batch 2 × GPUs): its work
// summed over its slices (data-compute-ms on [data-plan]) for `world` GPUs, over several
// re-plannings each; and input→DOM while it runs (an edit every few milliseconds, measured from
// when the edit was due, so a slice that delays it counts).
async function plannerBench(world) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const query = `framework=megatron&version=0.19.2&world_size=${world}&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=${2 * world}&seq_length=4096&micro_batch_size=1&train_iters=100&view=plan`;
  await page.goto(`${origin}/dpcalc/?${query}`);
  await fullApp(page, 'megatron', ['[data-plan][data-compute-ms]']);
  const r = await page.evaluate(async () => {
    const input = document.getElementById('in-train_iters');
    const plan = () => document.querySelector('[data-plan]');
    const first = Number(plan().dataset.computeMs);
    const times = [], slices = [], longest = [];
    const waitDone = () => new Promise((ok) => {
      const check = () => (plan().dataset.computeMs ? ok(true) : setTimeout(check, 1));
      setTimeout(check, 1);
    });
    for (let i = 0; i < 8; i++) {
      input.value = String(100 + i + 1);
      input.dispatchEvent(new InputEvent('input', { bubbles: true }));
      // the planning starts again: its attributes leave, then come back when it is done
      await new Promise((ok) => setTimeout(ok, 0));
      await waitDone();
      times.push(Number(plan().dataset.computeMs));
      slices.push(Number(plan().dataset.slices));
      longest.push(Number(plan().dataset.longestSliceMs));
    }
    const rows = document.querySelectorAll('[data-plan-row]').length;
    // typing while it plans, as the interaction phase measures it (the input event to the share
    // link showing it), with a zero-delay task between edits, in which a slice of the planning
    // (which each edit starts again) runs
    const out = document.querySelector('[data-output="share_url"]');
    const typing = [];
    for (let i = 0; i < 40; i++) {
      const before = out.getAttribute('data-value');
      const done = new Promise((resolve) => {
        const obs = new MutationObserver(() => {
          if (out.getAttribute('data-value') !== before) { obs.disconnect(); resolve(performance.now()); }
        });
        obs.observe(out, { attributes: true });
        setTimeout(() => resolve(NaN), 2000);
      });
      const t0 = performance.now();
      input.value = String(500 + i);
      input.dispatchEvent(new InputEvent('input', { bubbles: true }));
      typing.push((await done) - t0);
      await new Promise((ok) => setTimeout(ok, 0));
    }
    return { first, times, slices, longest, rows, typing };
  });
  await context.close();
  return { world, rows: r.rows, first: r.first, compute: stats(r.times), slices: stats(r.slices), longest_slice: stats(r.longest), typing: stats(r.typing) };
}

// The scaling view (view=scale, the planner's link at 128 nodes of 8 H100s: 1, 2, 4, … 128
// nodes): its work summed over its slices (data-compute-ms on [data-scale]), over a few loads.
async function scaleBench(nodes) {
  const times = [];
  let rows = 0;
  for (let i = 0; i < 3; i++) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const world = nodes * 8;
    const query = `framework=megatron&version=0.19.2&world_size=${world}&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=${2 * world}&seq_length=4096&micro_batch_size=1&train_iters=100&view=scale`;
    await page.goto(`${origin}/dpcalc/?${query}`);
    await fullApp(page, 'megatron', ['[data-scale][data-compute-ms]']);
    const r = await page.evaluate(() => ({
      ms: Number(document.querySelector('[data-scale]').dataset.computeMs),
      rows: document.querySelectorAll('[data-scale-row][data-step-seconds]').length,
    }));
    times.push(r.ms);
    rows = r.rows;
    await context.close();
  }
  return { nodes, rows, compute: stats(times) };
}

// ---- run -----------------------------------------------------------------------------------

const report = {
  when: new Date().toISOString(),
  settings: { loads: LOADS, fw_loads: FW_LOADS, throttled_loads: THROTTLED_LOADS, edits: EDITS, only: [...ONLY], frameworks: FRAMEWORKS, profiles: PROFILES },
  links: Object.fromEntries(FRAMEWORKS.map((fw) => [fw, LINKS[fw]])),
  apps: {},
  first_visit: {},
  phases: {},
};
for (const app of Object.keys(APPS)) report.apps[app] = { size: await sizes(APPS[app]) };
// what a first visit of each framework needs (gzip): the page, its style and boot script, and the
// framework's first view; without a first view, the full app
for (const fw of Object.keys(LINKS)) {
  const first = hasFirstView(fw);
  const files = [...SHELL, ...(first ? firstView(fw) : FULL_APP)].filter((f) => existsSync(join(APPS.dpcalc, f)));
  report.first_visit[fw] = { first_view: first, ...(await gzipOf(APPS.dpcalc, files)) };
}
report.full_app = await gzipOf(APPS.dpcalc, FULL_APP.filter((f) => existsSync(join(APPS.dpcalc, f))));

const phase = async (name, f) => {
  const t = performance.now();
  const r = await f();
  report.phases[name] = (performance.now() - t) / 1000;
  console.error(`[bench] ${name}: ${report.phases[name].toFixed(0)} s`);
  return r;
};
if (ONLY.has('cold')) {
  report.cold = {};
  for (const id of PROFILES) report.cold[id] = await phase(`cold loads, ${ALL_PROFILES[id].label}`, () => coldProfile(id));
}
if (ONLY.has('interaction')) report.interaction = await phase('interaction', interactions);
if (ONLY.has('explorer')) {
  report.explorer = await phase('explorer', async () => {
    const out = {};
    for (const fw of FRAMEWORKS) out[fw] = await explorer(fw);
    return out;
  });
}
if (ONLY.has('planner')) {
  report.planner = await phase('planner', async () => ({ 1024: await plannerBench(1024), 65536: await plannerBench(65536) }));
}
if (ONLY.has('scale')) report.scale = await phase('scale', () => scaleBench(128));
await browser.close();
server.close();

// ---- print ---------------------------------------------------------------------------------

const kb = (n) => (n / KB).toFixed(1);
const ms = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const ratio = (a, b) => (b && Number.isFinite(a) ? (a / b).toFixed(2) + '×' : '-');
const table = (rows) => {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const r of rows) console.log(r.map((c, i) => (i ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join('  '));
};

const A = report.apps.dpcalc, B = report.apps.baseline;
console.log('sizes (all files of dist/)');
const sizeRows = [['', 'dpcalc', 'baseline', 'ratio']];
for (const kind of ['wasm', 'js', 'css', 'html', 'total']) {
  for (const enc of ['raw', 'gzip', 'brotli']) {
    const a = A.size[kind]?.[enc] ?? 0, b = B.size[kind]?.[enc] ?? 0;
    sizeRows.push([`${kind} ${enc} (KB)`, kb(a), kb(b), ratio(a, b)]);
  }
}
sizeRows.push([`full app, ${FULL_APP.join(' + ')} (KB gzip)`, kb(report.full_app.gzip), '', '']);
for (const [fw, v] of Object.entries(report.first_visit)) {
  sizeRows.push([`first visit, ${fw}: ${v.first_view ? 'shell + first view' : 'shell + full app (no first view)'} (KB gzip)`, kb(v.gzip), kb(B.size.total.gzip), ratio(v.gzip, B.size.total.gzip)]);
}
table(sizeRows);

const cold = report.cold || {};
const profIds = Object.keys(cold);
const short = { local: 'local', '10mbit': '10M+40', '1.6mbit': '1.6M+150' };
if (profIds.length) {
  console.log('\ncold loads, served gzip (medians; × = ratio to the baseline in the same profile)');
  for (const id of profIds) {
    const c = cold[id];
    console.log(`  ${id === 'local' ? 'local' : `${short[id]} = ${c.label}`}: baseline n=${c.apps.baseline.first_result.n}, ${FRAMEWORKS.map((fw) => `${fw} n=${c.apps[fw].first_result.n}`).join(', ')}`);
  }
  const head = ['', 'KB before 1st'];
  for (const id of profIds) head.push(`1st ${short[id]} ms`);
  for (const id of profIds) head.push(`app ${short[id]} ms`);
  head.push('start-up task ms (loads > 50)', 'task before app ms');
  const rows = [head];
  for (const key of ['baseline', ...FRAMEWORKS]) {
    const per = profIds.map((id) => cold[id].apps[key]);
    const row = [key, kb(Math.max(...per.map((p) => p.bytes_before_first_result)))];
    for (const id of profIds) {
      const m = cold[id].apps[key].first_result.median;
      row.push(key === 'baseline' ? ms(m) : `${ms(m)} (${ratio(m, cold[id].apps.baseline.first_result.median)})`);
    }
    for (const id of profIds) {
      const p = cold[id].apps[key];
      row.push(`${ms(p.full_app.median)}${p.full_app_arrived < p.first_result.n ? ` (${p.full_app_arrived}/${p.first_result.n})` : ''}`);
    }
    const longest = Math.max(...per.map((p) => p.longest_task_before_first_result));
    const over = per.reduce((a, p) => a + p.loads_with_task_over_50ms_before_first_result, 0);
    const n = per.reduce((a, p) => a + p.first_result.n, 0);
    const beforeApp = Math.max(...per.map((p) => p.longest_task_before_app));
    row.push(`${longest ? ms(longest) : 'none'} (${over}/${n})`, beforeApp ? ms(beforeApp) : 'none');
    rows.push(row);
  }
  table(rows);
  console.log('  KB before 1st: on the wire (gzip, headers included) before the first result, max over all loads;');
  console.log('  app: the full app (data-stage="app"; the first result when the page has no stages);');
  console.log('  start-up task: the longest task that started before the first result (loads with one over 50 ms / loads).');
}

const I = report.interaction, E = report.explorer, P = report.planner, S = report.scale;
if (I || E || P || S) {
  console.log('');
  const rows = [['', 'dpcalc']];
  if (I) {
    rows.push([`interaction median / p95 (ms, n=${I.n})`, `${I.median.toFixed(2)} / ${I.p95.toFixed(2)}`]);
    rows.push(['…until the run section too, median / p95 (ms)', `${I.full.median.toFixed(2)} / ${I.full.p95.toFixed(2)}`]);
  }
  for (const [fw, e] of Object.entries(E || {})) {
    rows.push([`explorer ${fw}, 65,536 GPUs, ${e.rows} rows (ms, first / median / max)`, `${e.first.toFixed(2)} / ${e.compute.median.toFixed(2)} / ${e.compute.max.toFixed(2)}`]);
  }
  for (const p of Object.values(P || {})) {
    rows.push([`planner, Megatron, ${p.world.toLocaleString('en')} GPUs, ${p.rows} rows (ms of work, first / median / max)`, `${p.first.toFixed(1)} / ${p.compute.median.toFixed(1)} / ${p.compute.max.toFixed(1)}`]);
    rows.push([`…its slices (median count, longest slice median / max ms)`, `${p.slices.median} / ${p.longest_slice.median.toFixed(2)} / ${p.longest_slice.max.toFixed(2)}`]);
    rows.push([`…input→DOM while it plans, median / p95 (ms, n=${p.typing.n})`, `${p.typing.median.toFixed(2)} / ${p.typing.p95.toFixed(2)}`]);
  }
  if (S) rows.push([`scaling view, Megatron, 1 … ${S.nodes} nodes, ${S.rows} sizes with a plan (ms of work, median / max)`, `${S.compute.median.toFixed(1)} / ${S.compute.max.toFixed(1)}`]);
  table(rows);
}

// The targets, each for every framework; `null`: that part was not run.
const every = (check) => {
  const failing = FRAMEWORKS.map((fw) => [fw, check(fw)]).filter(([, why]) => why);
  return [failing.length === 0, failing.length ? `fails: ${failing.map(([fw, why]) => `${fw} ${why}`).join('; ')}` : '', failing.map(([fw]) => fw)];
};
const targets = [];
const target = (name, ran, f) => {
  if (!ran) { targets.push([name, null, '']); return; }
  const [ok, fails, who] = f();
  targets.push([name, ok, fails, who]);
};
const coldOf = (fw) => profIds.map((id) => cold[id].apps[fw]);
target('≤ 100 KB on the wire before the first result, every framework', profIds.length, () =>
  every((fw) => {
    const b = Math.max(...coldOf(fw).map((p) => p.bytes_before_first_result));
    return b > 100 * KB && `${kb(b)} KB`;
  }));
for (const id of Object.keys(ALL_PROFILES)) {
  target(`first result ≤ 1.3 × baseline, ${ALL_PROFILES[id].label}, every framework (median)`, cold[id], () =>
    every((fw) => {
      const a = cold[id].apps[fw].first_result.median, b = cold[id].apps.baseline.first_result.median;
      return !(a <= 1.3 * b) && ratio(a, b);
    }));
}
target('no start-up task over 50 ms before the first result, every framework', profIds.length, () =>
  every((fw) => {
    const per = coldOf(fw);
    const over = per.reduce((a, p) => a + p.loads_with_task_over_50ms_before_first_result, 0);
    const n = per.reduce((a, p) => a + p.first_result.n, 0);
    return over > 0 && `${over}/${n} loads, longest ${ms(Math.max(...per.map((p) => p.longest_task_before_first_result)))} ms`;
  }));
target('the full app arrives by itself after the first result, every framework (time in the table)', profIds.length, () =>
  every((fw) => {
    const per = coldOf(fw);
    const missing = per.reduce((a, p) => a + p.first_result.n - p.full_app_arrived, 0);
    return missing > 0 && `${missing} loads without data-stage="app"`;
  }));
target('interaction median ≤ 4 ms', I, () => [I.median <= 4, `${I.median.toFixed(2)} ms`]);
target('interaction p95 ≤ 8 ms', I, () => [I.p95 <= 8, `${I.p95.toFixed(2)} ms`]);
target('explorer (65,536 GPUs) median ≤ 2 ms, every framework', E, () =>
  every((fw) => !(E[fw].compute.median <= 2) && `${E[fw].compute.median.toFixed(2)} ms`));
target('planner (1,024 GPUs) median ≤ 50 ms', P, () => [P[1024].compute.median <= 50, `${P[1024].compute.median.toFixed(1)} ms`]);
target('planner (65,536 GPUs) median ≤ 500 ms', P, () => [P[65536].compute.median <= 500, `${P[65536].compute.median.toFixed(1)} ms`]);
target('input→DOM while the planner runs, median ≤ 4 ms and p95 ≤ 8 ms (1,024 GPUs)', P, () =>
  [P[1024].typing.median <= 4 && P[1024].typing.p95 <= 8, `${P[1024].typing.median.toFixed(2)} / ${P[1024].typing.p95.toFixed(2)} ms`]);
target('scaling view (1 … 128 nodes) median ≤ 1 s', S, () => [S.compute.median <= 1000, `${S.compute.median.toFixed(0)} ms`]);
console.log('\ntargets:');
for (const [t, ok, fails] of targets) {
  const mark = ok === null ? 'not run' : ok ? 'met    ' : 'NOT MET';
  console.log(`  ${mark}  ${t}${fails ? ` — ${fails}` : ''}`);
}
report.targets = Object.fromEntries(targets.map(([t, ok, detail]) => [t, { met: ok, detail }]));
report.seconds = (performance.now() - started) / 1000;
await mkdir(join(here, 'out'), { recursive: true });
await writeFile(join(here, 'out/bench.json'), JSON.stringify(report, null, 2));
console.log(`\nwrote bench/out/bench.json; the bench took ${Math.floor(report.seconds / 60)} min ${Math.round(report.seconds % 60)} s`);

// ---- docs/benchmark.md -----------------------------------------------------------------------

// Every figure above as markdown tables, in docs/benchmark.md's `page` section; only after a
// full run, so the file never mixes figures of two runs.
const fullRun = !process.env.ONLY && !process.env.FRAMEWORKS && !process.env.PROFILES;
if (fullRun) {
  writeSection('page', pageSection());
  console.log('wrote docs/benchmark.md (page)');
} else {
  console.log('a partial run (ONLY, FRAMEWORKS or PROFILES): docs/benchmark.md left as it was');
}

function pageSection() {
  const NAMES = { axolotl: 'axolotl', hf: 'HF Trainer', deepspeed: 'DeepSpeed', megatron: 'Megatron-LM', torchtitan: 'torchtitan', nanotron: 'nanotron', baseline: 'baseline (bare Yew)' };
  // three significant digits (2.20, 15.7, 129); a time below 0.01 ms or not measured: -
  const sig = (n) => (!Number.isFinite(n) ? '-' : n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
  const size = (n) => (Number.isFinite(n) && n > 0 ? kb(n) : '-');
  const kib = (n) => (Number.isFinite(n) && n > 0 ? `${kb(n)} KiB` : '-');
  const t = (n) => (Number.isFinite(n) ? `${ms(n)} ms` : '-');
  const row = (cells) => `| ${cells.join(' | ')} |`;
  const head = (cells) => `${row(cells)}\n${row(cells.map(() => '---'))}`;
  const secs = Math.round(report.seconds);
  const out = [];
  out.push('## The page (`node bench/run.mjs`)', '');
  out.push(`${measuredAt()}: \`LOADS=${LOADS} FW_LOADS=${FW_LOADS} THROTTLED_LOADS=${THROTTLED_LOADS} EDITS=${EDITS}\`, ${Math.floor(secs / 60)} min ${secs % 60} s. Each framework's link (\`LINKS\` in \`bench/run.mjs\`: 2 × 8 GPUs, tensor parallel 2, no \`version=\`) is loaded in fresh browser contexts (headless Chromium, served gzip -9 from localhost), on localhost and under Chromium's network emulation, interleaved with \`bench/baseline\` (a one-component Yew app with the same toolchain, profile and loader). Times are medians; × is the ratio to the baseline's in the same profile.`, '');
  out.push('### Sizes (gzip -9, brotli quality 11; KiB)', '');
  out.push(head(['files of `dist/`', 'dpcalc raw', 'gzip', 'brotli', 'baseline raw', 'gzip', 'brotli']));
  for (const kind of ['wasm', 'js', 'css', 'html', 'total']) {
    const cells = [kind];
    for (const app of [A, B]) for (const enc of ['raw', 'gzip', 'brotli']) cells.push(size(app.size[kind]?.[enc]));
    out.push(row(cells));
  }
  out.push('');
  out.push(head(['what loads (gzip -9)', 'files', 'KiB']));
  out.push(row(['the full app', FULL_APP.map((f) => `\`${f}\``).join(' + '), size(report.full_app.gzip)]));
  for (const [fw, v] of Object.entries(report.first_visit)) {
    out.push(row([`a first visit, ${NAMES[fw]}`, v.first_view ? `the shell (${SHELL.map((f) => `\`${f}\``).join(', ')}) + \`first-${fw}.js\` + \`first-${fw}_bg.wasm\`` : 'the shell + the full app (no first view)', size(v.gzip)]));
  }
  out.push('');
  out.push('### Cold loads', '');
  const ids = Object.keys(ALL_PROFILES);
  out.push(head(['link', 'on the wire before the first result', ...ids.map((id) => `first result, ${ALL_PROFILES[id].label}`), ...ids.map((id) => `full app, ${ALL_PROFILES[id].label}`), 'longest start-up task (loads over 50 ms)', 'longest task before the full app']));
  for (const key of ['baseline', ...Object.keys(LINKS)]) {
    const per = ids.map((id) => cold[id]?.apps[key]).filter(Boolean);
    const cells = [NAMES[key], kib(Math.max(...per.map((p) => p.bytes_before_first_result)))];
    for (const id of ids) {
      const p = cold[id]?.apps[key];
      const m = p ? p.first_result.median : NaN;
      cells.push(!p || key === 'baseline' ? t(m) : `${t(m)} (${ratio(m, cold[id].apps.baseline.first_result.median)})`);
    }
    for (const id of ids) {
      const p = cold[id]?.apps[key];
      cells.push(!p || key === 'baseline' ? '-' : `${t(p.full_app.median)}${p.full_app_arrived < p.first_result.n ? ` (${p.full_app_arrived}/${p.first_result.n} arrived)` : ''}`);
    }
    const longest = Math.max(0, ...per.map((p) => p.longest_task_before_first_result));
    const over = per.reduce((a, p) => a + p.loads_with_task_over_50ms_before_first_result, 0);
    const n = per.reduce((a, p) => a + p.first_result.n, 0);
    const beforeApp = Math.max(0, ...per.map((p) => p.longest_task_before_app));
    cells.push(`${longest ? t(longest) : 'none'} (${over}/${n})`, key === 'baseline' || !Number.isFinite(beforeApp) ? '-' : beforeApp ? t(beforeApp) : 'none');
    out.push(row(cells));
  }
  out.push('');
  out.push('### The full app', '');
  out.push(head(['measured in the full app', 'median / p95 (or first / median / max)']));
  if (I) {
    out.push(row([`input event to updated results (n=${I.n})`, `${sig(I.median)} / ${sig(I.p95)} ms`]));
    out.push(row(['… until the run section (tokens, map, explorer) has redrawn', `${sig(I.full.median)} / ${sig(I.full.p95)} ms`]));
  }
  for (const [fw, e] of Object.entries(E || {})) {
    out.push(row([`explorer, 65,536 GPUs, ${NAMES[fw]} (${e.rows} rows): first / median / max`, `${e.first.toFixed(1)} / ${e.compute.median.toFixed(1)} / ${e.compute.max.toFixed(1)} ms`]));
  }
  for (const p of Object.values(P || {})) {
    out.push(row([`planner, Megatron, Llama 3.1 8B, H100, ${p.world.toLocaleString('en')} GPUs (${p.rows} rows): work first / median / max`, `${sig(p.first)} / ${sig(p.compute.median)} / ${sig(p.compute.max)} ms`]));
    out.push(row(['… its slices: median count; longest slice, median / max', `${p.slices.median}; ${sig(p.longest_slice.median)} / ${sig(p.longest_slice.max)} ms`]));
    out.push(row([`… input to updated DOM while it plans (n=${p.typing.n})`, `${sig(p.typing.median)} / ${sig(p.typing.p95)} ms`]));
  }
  if (S) out.push(row([`scaling view, Megatron, Llama 3.1 8B, H100, 1 … ${S.nodes} nodes (${S.rows} sizes): work median / max`, `${sig(S.compute.median)} / ${sig(S.compute.max)} ms`]));
  out.push('');
  out.push('### Targets', '');
  out.push(head(['target', 'met']));
  for (const [t, ok, , who] of targets) out.push(row([t, ok === null ? 'not run' : ok ? 'yes' : `no${who && who.length ? `: ${who.map((fw) => NAMES[fw]).join(', ')}` : ''}`]));
  return out.join('\n');
}
