// End-to-end test of the release build: serves dist/ from a local static server under a
// sub-path (as a docs site would), opens links in headless Chromium and reads the data-output
// contract. Run by `make e2e` (after `make dist`).
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('../../.tools/node_modules/playwright-core');

const DIST = new URL('../../dist/', import.meta.url).pathname;
const HOST = new URL('../host/', import.meta.url).pathname;
const BASE = '/docs/tools/dpcalc/';
// The strict policy the page must run under: no inline script or style.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'";
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css' };

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  const [root, prefix] = url.pathname.startsWith(BASE) ? [DIST, BASE] : url.pathname.startsWith('/host/') ? [HOST, '/host/'] : [];
  if (!root) { res.writeHead(404).end(); return; }
  const rel = url.pathname.slice(prefix.length) || 'index.html';
  const file = normalize(join(root, rel));
  if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
  try {
    const body = await readFile(file);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] || 'application/octet-stream',
      'content-security-policy': CSP }).end(body);
  } catch { res.writeHead(404).end(); }
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

// Each case: a link and the data-values it must show (null = no data-value).
const cases = [
  ['world_size=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000',
    { world_size: '4', dp_world_size: '2', global_batch_size: '16', total_num_steps: '63', max_steps: '63',
      steps_per_epoch: '63', warmup_steps: '2', legacy_global_batch_size: '32', legacy_total_num_steps: '63' }],
  ['world_size=4&micro_batch_size=2&gradient_accumulation_steps=4&sequence_len=2048&sample_packing=true&sample_packing_eff_est=0.95&total_num_tokens=10000000',
    { global_batch_size: '32', total_num_steps: '158.0', max_steps: '158.0', tokens_per_step: '65536' }],
  ['', { world_size: '8', dp_world_size: '8', global_batch_size: '8', total_num_steps: null, legacy_total_num_steps: null }],
  ['nodes=16&gpus_per_node=8&tensor_parallel_size=8&micro_batch_size=4&gradient_accumulation_steps=16&num_samples=500000&num_epochs=3&saves_per_epoch=2',
    { world_size: '128', dp_world_size: '16', global_batch_size: '1024', total_num_steps: '1465', save_steps: '245', warmup_steps: '43' }],
  ['world_size=6&tensor_parallel_size=4&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000',
    { dp_world_size: '1', global_batch_size: '8', total_num_steps: '125' }, ['world_size']],
];

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run'],
});
let failures = 0;
try {
  for (const [query, expected, errors = []] of cases) {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) problems.push(`CSP: ${m.text()}`); });
    const url = `${origin}${BASE}${query ? '?' + query : ''}`;
    await page.goto(url);
    await page.waitForSelector('[data-output="global_batch_size"][data-value]', { timeout: 15000 });
    for (const [name, want] of Object.entries(expected)) {
      const got = await page.getAttribute(`[data-output="${name}"]`, 'data-value');
      if (got !== want) problems.push(`${name}: got ${got}, want ${want}`);
    }
    for (const field of errors) {
      if (!(await page.$(`[data-error="${field}"][role="alert"]`))) problems.push(`no error at ${field}`);
    }
    const share = await page.getAttribute('[data-output="share_url"]', 'data-value');
    // the share link is this page's own canonical link: it reloads to the same values
    if (!share.startsWith(`${origin}${BASE}`)) problems.push(`share_url ${share}`);
    console.log(`${problems.length ? 'FAIL' : 'ok  '} ?${query}`);
    for (const p of problems) console.log(`     ${p}`);
    failures += problems.length ? 1 : 0;
    await page.close();
  }
  failures += await embedded(browser);
  failures += await hostile(browser);
  failures += await accessibility(browser);
} finally {
  await browser.close();
  server.close();
}
// The host page: dpcalc in an iframe, read-only, auto-sized by its height messages, under the CSP.
async function embedded(browser) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const problems = [];
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) problems.push(`CSP: ${m.text()}`); });
  await page.goto(`${origin}/host/`);
  const frame = page.frameLocator('iframe.dpcalc');
  await frame.locator('[data-output="global_batch_size"][data-value]').waitFor({ state: 'attached', timeout: 15000 })
    .catch(async (e) => { await page.screenshot({ path: '/tmp/host-fail.png' }); throw e; });
  const want = { dp_world_size: '16', global_batch_size: '256', max_steps: '1954' };
  for (const [name, v] of Object.entries(want)) {
    const got = await frame.locator(`[data-output="${name}"]`).getAttribute('data-value');
    if (got !== v) problems.push(`embedded ${name}: got ${got}, want ${v}`);
  }
  // auto-sized: the host script set the iframe's height from the message, and no scrollbar remains
  await page.waitForFunction(() => document.getElementById('calc').style.height !== '', null, { timeout: 5000 })
    .catch(() => problems.push('the host never received a height message'));
  const sizes = await page.evaluate(() => {
    const f = document.getElementById('calc');
    return { iframe: f.getBoundingClientRect().height, content: f.contentDocument.documentElement.scrollHeight };
  });
  if (Math.abs(sizes.iframe - sizes.content) > 2) problems.push(`iframe ${sizes.iframe}px for content ${sizes.content}px`);
  const readonly = await frame.locator('#in-nodes').getAttribute('readonly');
  if (readonly === null) problems.push('readonly=1 left inputs editable');
  const chrome = await frame.locator('header.top').count();
  if (chrome) problems.push('embed=1 still shows the page header');
  const full = await frame.locator('[data-output="full_url"]').getAttribute('data-value');
  if (!full || /embed|readonly/.test(full) || !full.includes('theme=light')) problems.push(`full_url ${full}`);
  const theme = await frame.locator('html').getAttribute('data-theme');
  if (theme !== 'light') problems.push(`theme ${theme}`);
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
  console.log(`${problems.length ? 'FAIL' : 'ok  '} host page with an embedded, read-only, auto-sized dpcalc (${Math.round(sizes.iframe)}px) under CSP`);
  for (const p of problems) console.log(`     ${p}`);
  await page.close();
  return problems.length ? 1 : 0;
}

// Links carrying HTML or script: shown as text or rejected, never interpreted; the page still computes.
async function hostile(browser) {
  const payloads = [
    '<img src=x onerror="window.__pwned=1">',
    '"><script>window.__pwned=1</script>',
    '<svg onload="window.__pwned=1"></svg>',
    'javascript:window.__pwned=1',
  ];
  let failed = 0;
  for (const p of payloads) {
    const e = encodeURIComponent(p);
    const query = `num_samples=${e}&max_steps=${e}&${e}=${e}&theme=${e}&micro_batch_size=2&gradient_accumulation_steps=4`;
    const page = await browser.newPage();
    const problems = [];
    page.on('dialog', (d) => { problems.push('a dialog opened'); d.dismiss(); });
    await page.goto(`${origin}${BASE}?${query}`);
    await page.waitForSelector('[data-output="global_batch_size"][data-value]', { timeout: 15000 })
      .catch(() => problems.push('the page did not compute'));
    const found = await page.evaluate(() => ({
      pwned: window.__pwned !== undefined,
      injected: document.querySelectorAll('main img, main svg, main script, main iframe').length,
      scripts: [...document.scripts].map((s) => s.src.split('/').pop()),
      error: !!document.querySelector('[data-error="num_samples"][role="alert"]'),
      notice: document.querySelectorAll('[data-notice]').length,
    }));
    if (found.pwned) problems.push('injected script ran');
    if (found.injected) problems.push(`${found.injected} injected element(s)`);
    if (found.scripts.join(',') !== 'boot.js') problems.push(`scripts: ${found.scripts}`);
    if (!found.error) problems.push('no error at num_samples');
    if (!found.notice) problems.push('no notice for the unknown parameter');
    console.log(`${problems.length ? 'FAIL' : 'ok  '} hostile link ${p}`);
    for (const x of problems) console.log(`     ${x}`);
    failed += problems.length ? 1 : 0;
    await page.close();
  }
  return failed;
}

// axe-core in each mode; the target is zero serious or critical violations.
async function accessibility(browser) {
  const axe = await readFile(new URL('../../.tools/node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
  const base = 'nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000';
  const modes = [
    ['full, light', `${base}&theme=light`],
    ['full, dark', `${base}&theme=dark`],
    ['full, with errors and warnings', 'world_size=6&tensor_parallel_size=4&micro_batch_size=2&batch_size=16&num_samples=abc&foo=1'],
    ['embed', `${base}&embed=1`],
    ['embed, read-only, dark', `${base}&embed=1&readonly=1&theme=dark`],
  ];
  let failed = 0;
  // axe is injected through the devtools protocol, which the page's CSP does not govern
  const context = await browser.newContext({ bypassCSP: true });
  for (const [name, query] of modes) {
    const page = await context.newPage();
    await page.goto(`${origin}${BASE}?${query}`);
    await page.waitForSelector('[data-output="world_size"][data-value]', { timeout: 15000 });
    await page.evaluate(axe);
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    const minor = result.violations.length - bad.length;
    console.log(`${bad.length ? 'FAIL' : 'ok  '} axe-core, ${name}: ${bad.length} serious/critical, ${minor} minor/moderate`);
    for (const v of result.violations) console.log(`     ${v.impact} ${v.id}: ${v.help} (${v.nodes.length}) ${v.nodes[0]?.target}`);
    failed += bad.length ? 1 : 0;
    await page.close();
  }
  await context.close();
  return failed;
}

if (failures) { console.log(`${failures} end-to-end case(s) failed`); process.exit(1); }
console.log(`end-to-end: ${cases.length} links computed as expected from ${BASE}`);
