// End-to-end test of the release build: serves dist/ from a local static server under a
// sub-path (as a docs site would), opens links in headless Chromium and reads the data-output
// contract. Run by `make e2e` (after `make dist`).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { serve, BASE } from './server.mjs';
import { cases, payloads, hostileQuery, hostileProbe, hostileProblems } from './cases.mjs';
import { firstViews } from './first.mjs';

const require = createRequire(import.meta.url);
const { chromium } = require('../../.tools/node_modules/playwright-core');

const { origin, close } = await serve();

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
    // the app, once it has taken over from the first view (which first.mjs compares with it)
    await page.waitForSelector('html[data-stage="app"] #app [data-output="global_batch_size"][data-value]', { timeout: 15000 });
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
  failures += await phone(browser);
  failures += await firstVisit(browser);
  failures += await everyValueSpeaks(browser);
  failures += await planner(browser);
  failures += await firstViews(browser, origin, BASE);
} finally {
  await browser.close();
  close();
}
// Opens `url` at a stage of the start (static/boot.js): 'first' holds the app's wasm back, so the
// first view alone is tested; 'app' waits until the app has taken over from it.
async function open(page, url, stage) {
  if (stage === 'first') await page.route('**/dpcalc_bg.wasm', () => {});
  await page.goto(url);
  await page.waitForFunction((s) => document.documentElement.dataset.stage === s, stage, { timeout: 15000 });
}

// The host page: dpcalc in an iframe, read-only, auto-sized by its height messages, under the CSP.
async function embedded(browser) {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const problems = [];
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) problems.push(`CSP: ${m.text()}`); });
  await page.goto(`${origin}/host/`);
  const frame = page.frameLocator('iframe.dpcalc');
  // the app, once it has taken over from the first view (until then both hold the results; the
  // first view alone is checked by first.mjs and by the axe and hostile-link runs)
  await frame.locator('html[data-stage="app"] #app [data-output="global_batch_size"][data-value]')
    .waitFor({ state: 'attached', timeout: 15000 })
    .catch(async (e) => { await page.screenshot({ path: new URL('../../target/host-fail.png', import.meta.url).pathname }); throw e; });
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
  let failed = 0;
  for (const [stage, p] of ['first', 'app'].flatMap((s) => payloads.map((p) => [s, p]))) {
    const query = hostileQuery(p);
    const page = await browser.newPage();
    const problems = [];
    page.on('dialog', (d) => { problems.push('a dialog opened'); d.dismiss(); });
    await open(page, `${origin}${BASE}?${query}`, stage);
    await page.waitForSelector('[data-output="global_batch_size"][data-value]', { timeout: 15000 })
      .catch(() => problems.push('the page did not compute'));
    problems.push(...hostileProblems(await page.evaluate(`(() => { ${hostileProbe} })()`)));
    console.log(`${problems.length ? 'FAIL' : 'ok  '} hostile link, ${stage === 'first' ? 'first view' : 'app'}: ${p}`);
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
    ['phone 375 px, the bare address', '', { width: 375, height: 812 }],
    ['phone 375 px, dark, a link', `${base}&theme=dark`, { width: 375, height: 812 }],
    ['full, dark', `${base}&theme=dark`],
    ['full, with errors and warnings', 'world_size=6&tensor_parallel_size=4&micro_batch_size=2&batch_size=16&num_samples=abc&foo=1'],
    ['embed', `${base}&embed=1`],
    ['embed, read-only, dark', `${base}&embed=1&readonly=1&theme=dark`],
  ];
  let failed = 0;
  // axe is injected through the devtools protocol, which the page's CSP does not govern
  const context = await browser.newContext({ bypassCSP: true });
  for (const [stage, [name, query, viewport]] of ['first', 'app'].flatMap((s) => modes.map((m) => [s, m]))) {
    const page = await context.newPage();
    if (viewport) await page.setViewportSize(viewport);
    await open(page, `${origin}${BASE}?${query}`, stage);
    await page.waitForSelector('[data-output="world_size"][data-value]', { timeout: 15000 });
    await page.evaluate(axe);
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    const minor = result.violations.length - bad.length;
    console.log(`${bad.length ? 'FAIL' : 'ok  '} axe-core, ${stage === 'first' ? 'first view' : 'app'}, ${name}: ${bad.length} serious/critical, ${minor} minor/moderate`);
    for (const v of result.violations) console.log(`     ${v.impact} ${v.id}: ${v.help} (${v.nodes.length}) ${v.nodes[0]?.target}`);
    failed += bad.length ? 1 : 0;
    await page.close();
  }
  await context.close();
  return failed;
}

// A phone: a shared link at 375 × 812 shows the key results (the summary bar) in the first
// viewport and keeps them while the form scrolls; no page scrolls sideways at 375 or 360 px
// (every framework's bare page and a link); tap targets are at least 44 px.
async function phone(browser) {
  const link = 'version=0.19.0&nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000&sequence_len=2048&tokens_per_second_per_gpu=3000';
  const problems = [];
  for (const width of [375, 360]) {
    const page = await browser.newPage({ viewport: { width, height: 812 } });
    for (const q of [link, '', 'framework=hf', 'framework=deepspeed', 'framework=megatron&version=0.19.2&nodes=4&tensor_model_parallel_size=8&micro_batch_size=1&global_batch_size=128&train_iters=1000&seq_length=8192',
      'framework=torchtitan', 'framework=nanotron']) {
      await page.goto(`${origin}${BASE}${q ? '?' + q : ''}`);
      await page.waitForSelector('html[data-stage="app"] #app [data-output="world_size"][data-value]', { timeout: 15000 });
      await page.waitForTimeout(300); // the later parts render one task after the first
      const w = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      if (w[0] > w[1]) problems.push(`${width} px ?${q}: the page is ${w[0]} px wide (scrolls sideways)`);
      if (q !== link || width !== 375) continue;
      const want = { dp_world_size: '8', global_batch_size: '64', max_steps: '157' };
      for (const [name, v] of Object.entries(want)) {
        const el = page.locator(`[data-summary-bar] [data-summary="${name}"]`);
        if ((await el.getAttribute('data-value')) !== v) problems.push(`summary ${name}: ${await el.getAttribute('data-value')}, want ${v}`);
        const box = await el.boundingBox();
        if (!box || box.y < 0 || box.y + box.height > 812) problems.push(`summary ${name} is not in the first viewport: ${JSON.stringify(box)}`);
      }
      if (await page.locator('[data-summary-bar] [data-output]').count()) problems.push('the summary repeats a data-output');
      // the results come before the form
      const order = await page.evaluate(() => [document.querySelector('.results').getBoundingClientRect().top,
        document.querySelector('form.inputs').getBoundingClientRect().top]);
      if (!(order[0] < order[1])) problems.push(`the results (${order[0]}) come after the form (${order[1]})`);
      // scrolled to the middle of the form, the summary is still on screen
      await page.evaluate(() => document.querySelector('#in-num_samples').scrollIntoView());
      const sticky = await page.locator('[data-summary="global_batch_size"]').boundingBox();
      if (!sticky || sticky.y < 0 || sticky.y > 100) problems.push(`the summary scrolled away: ${JSON.stringify(sticky)}`);
      // tap targets: controls, the examples and the summary's links
      const small = await page.evaluate(() => [...document.querySelectorAll(
        'input:not([type=hidden]), select, button, a[data-example], [data-summary-bar] a, details > summary')]
        .filter((e) => e.getClientRects().length && getComputedStyle(e).visibility !== 'hidden')
        .map((e) => [e.id || e.getAttribute('class') || e.textContent.slice(0, 30), e.getBoundingClientRect().height])
        .filter(([, h]) => h < 44));
      for (const [what, h] of small) problems.push(`tap target ${what}: ${h} px high`);
    }
    await page.close();
  }
  console.log(`${problems.length ? 'FAIL' : 'ok  '} phone: summary in the first viewport and sticky, no sideways scroll at 375/360 px, tap targets ≥ 44 px`);
  for (const p of problems) console.log(`     ${p}`);
  return problems.length ? 1 : 0;
}

// The first visit: the bare address says what a missing value needs, shows no other-release box,
// and offers examples whose links compute.
async function firstVisit(browser) {
  const problems = [];
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${origin}${BASE}`);
  await page.waitForSelector('html[data-stage="app"] #app [data-output="world_size"][data-value]', { timeout: 15000 });
  await page.waitForTimeout(300);
  const steps = page.locator('[data-output="total_num_steps"]');
  if ((await steps.getAttribute('data-value')) !== null) problems.push('total_num_steps has a value on the bare page');
  if ((await steps.getAttribute('data-needs')) !== 'num_samples') problems.push(`data-needs ${await steps.getAttribute('data-needs')}`);
  if ((await steps.textContent()) !== 'needs Training rows') problems.push(`total_num_steps reads ${await steps.textContent()}`);
  if (await page.locator('.legacy').count()) problems.push('the bare page shows the other release\'s box');
  const dashes = await page.locator('.results dd').evaluateAll((dds) => dds.filter((d) => d.textContent.trim() === '—').length);
  if (dashes) problems.push(`${dashes} bare dashes among the results`);
  const examples = await page.locator('a[data-example]').evaluateAll((as) => as.map((a) => [a.textContent, a.href]));
  if (examples.length < 3) problems.push(`${examples.length} examples`);
  for (const [label, href] of examples) {
    if (!href.startsWith(`${origin}${BASE}?`) || !href.includes('version=')) problems.push(`example ${label}: ${href}`);
  }
  // one click loads the example's link, and it computes
  await page.click('a[data-example]:first-of-type');
  await page.waitForSelector('html[data-stage="app"] #app [data-output="max_steps"][data-value]', { timeout: 15000 });
  if (page.url() !== examples[0][1]) problems.push(`clicked ${examples[0][1]}, at ${page.url()}`);
  if (await page.locator('form.inputs [data-error]').count()) problems.push('the first example has errors');
  // a link of PR #3462's table: the other release gives another batch, and the box says why
  const pr = examples.find(([l]) => l.includes('#3462'));
  await page.goto(pr[1]);
  await page.waitForSelector('.legacy [data-legacy-why]', { timeout: 15000 }).catch(() => problems.push('no other-release box on the #3462 link'));
  await page.close();
  console.log(`${problems.length ? 'FAIL' : 'ok  '} first visit: needs at the values, no unprompted other-release box, examples load`);
  for (const p of problems) console.log(`     ${p}`);
  return problems.length ? 1 : 0;
}

// After the app has taken over and drawn the run section: no `[data-output]` of the
// results, the tokens-and-time panel or the other release's box, and no explorer cell, is a bare
// dash; the outputs of a feature the link does not use are not on the page (Megatron's ramp-up);
// a dense model's explorer has no expert-parallel row or column, a model with experts has them;
// at 1280 px the explorer's columns (memory included) fit without a horizontal scroll (axolotl,
// and the longest keys: Megatron's and torchtitan's three dimensions).
async function everyValueSpeaks(browser) {
  const problems = [];
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const open = async (q) => {
    await page.goto(`${origin}${BASE}${q ? '?' + q : ''}`);
    await page.waitForSelector('html[data-stage="app"] #app [data-output="world_size"][data-value]', { timeout: 15000 });
    await page.waitForSelector('#app .explorer', { timeout: 15000 });
    await page.waitForSelector('#app .tokens-time', { timeout: 15000 });
  };
  const llama = 'version=0.21.0&micro_batch_size=2&gradient_accumulation_steps=8&num_samples=50000&sequence_len=4096&base_model=meta-llama/Llama-3.1-8B&zero_optimization.stage=3&gpu=h100-sxm';
  const megatron = 'framework=megatron&version=0.19.2&nodes=4&tensor_model_parallel_size=8&micro_batch_size=1&global_batch_size=128&train_iters=1000&seq_length=8192&model=meta-llama/Llama-3.1-70B&use_distributed_optimizer=true&gpu=h100-sxm';
  const titan = 'framework=torchtitan&nodes=2&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&local_batch_size=2&global_batch_size=64&seq_len=2048&steps=100';
  const ramp = ['initial_global_batch_size', 'initial_num_microbatches', 'rampup_samples_per_increment', 'full_batch_iteration'];
  for (const q of ['', 'framework=hf', 'framework=deepspeed', 'framework=megatron', 'framework=torchtitan', 'framework=nanotron',
    'version=0.19.0&nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000', llama, megatron, titan]) {
    await open(q);
    const bare = await page.evaluate(() => [...document.querySelectorAll('#app [data-output]:not([data-value])')]
      .filter((e) => ['', '\u2014', '-'].includes(e.textContent.trim()))
      .map((e) => e.getAttribute('data-output')));
    for (const name of bare) problems.push(`?${q}: ${name} is a bare dash`);
    const cells = await page.locator('#app .layouts td').evaluateAll((tds) => tds.filter((d) => d.textContent.trim() === '\u2014').length);
    if (cells) problems.push(`?${q}: ${cells} explorer cells are a bare dash`);
    if (q.startsWith('framework=megatron')) {
      for (const name of ramp) if (await page.locator(`[data-output="${name}"]`).count()) problems.push(`?${q}: ${name} shown without a ramp-up`);
      if (!(await page.locator('[data-output="train_iters"]').count())) problems.push(`?${q}: no train_iters`);
    }
    if ([llama, megatron, titan].includes(q)) {
      const fit = await page.evaluate(() => {
        const t = document.querySelector('#app .explorer .table-scroll');
        const m = document.querySelector('#app .explorer th:nth-last-child(2)');
        return [t.scrollWidth, t.clientWidth, m ? m.textContent : ''];
      });
      if (fit[0] > fit[1] + 1) problems.push(`1280 px ?${q}: the explorer is ${fit[0]} px wide in ${fit[1]} px (scrolls sideways)`);
      if (!fit[2].includes('Memory')) problems.push(`?${q}: no memory column (${fit[2]})`);
    }
  }
  // a ramp-up shows its outputs
  await open('framework=megatron&version=0.16.1&world_size=8&micro_batch_size=1&global_batch_size=32&rampup_batch_size=8+8+400&train_samples=1000');
  for (const name of ramp) if (!(await page.locator(`[data-output="${name}"]`).count())) problems.push(`ramp-up: no ${name}`);
  // expert parallelism: none for a dense model, offered for a model with experts
  const ep = () => page.locator('#app tr[data-layout]').evaluateAll((trs) => trs
    .filter((t) => /expert_parallel_size=(?!1(&|$))\d+/.test(t.getAttribute('data-layout'))).length);
  await open(llama);
  if (await ep()) problems.push(`Llama-3.1-8B: ${await ep()} expert-parallel rows`);
  if (await page.locator('#app .layouts th code', { hasText: 'expert_parallel_size' }).count()) problems.push('Llama-3.1-8B: an ep column');
  await open(llama.replace('meta-llama/Llama-3.1-8B', 'mistralai/Mixtral-8x7B-v0.1'));
  if (!(await ep())) problems.push('Mixtral-8x7B: no expert-parallel row');
  await page.close();
  console.log(`${problems.length ? 'FAIL' : 'ok  '} every value speaks: no bare dash, no unused feature's outputs, EP only with experts, the explorer fits 1280 px`);
  for (const p of problems) console.log(`     ${p}`);
  return problems.length ? 1 : 0;
}

// The planner (view=plan): its rows in rank order and step-time order, each with the DOM
// contract's attributes; the first row's link opens on the same step time; Apply sets it here.
async function planner(browser) {
  const problems = [];
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (/Content Security Policy|Refused to/.test(m.text())) problems.push(`CSP: ${m.text()}`); });
  const q = 'framework=megatron&version=0.19.2&world_size=64&model=meta-llama/Llama-3.1-8B&gpu=h100-sxm&global_batch_size=256&seq_length=4096&micro_batch_size=1&train_iters=100&view=plan';
  await page.goto(`${origin}${BASE}?${q}`);
  await page.waitForSelector('html[data-stage="app"] #app [data-plan][data-compute-ms]', { timeout: 30000 });
  const rows = await page.locator('#app [data-plan-row]').evaluateAll((trs) => trs.map((t) => ({
    rank: Number(t.dataset.rank), step: Number(t.dataset.stepSeconds), href: t.querySelector('a[href]')?.href,
    attrs: ['tp', 'cp', 'pp', 'ep', 'dp', 'microBatch', 'recompute', 'sharding', 'virtualStages', 'stepSeconds',
      'tokensPerSecondPerGpu', 'mfu', 'memoryBytes'].filter((k) => !(k in t.dataset)),
  })));
  if (rows.length < 1 || rows.length > 20) problems.push(`${rows.length} rows`);
  rows.forEach((r, i) => {
    if (r.rank !== i + 1) problems.push(`row ${i}: data-rank ${r.rank}`);
    if (i && r.step < rows[i - 1].step) problems.push(`row ${i}: out of step-time order`);
    if (r.attrs.length) problems.push(`row ${i}: no ${r.attrs.join(', ')}`);
    if (!r.href) problems.push(`row ${i}: no link`);
  });
  if (rows.length) {
    await page.goto(rows[0].href);
    await page.waitForSelector('html[data-stage="app"] #app [data-output="step_time_seconds"][data-value]', { timeout: 15000 });
    const step = Number(await page.getAttribute('#app [data-output="step_time_seconds"]', 'data-value'));
    if (step !== rows[0].step) problems.push(`the first row's link shows ${step} s, the row ${rows[0].step} s`);
    // Apply on the plan page sets the plan here
    await page.goto(`${origin}${BASE}?${q}`);
    await page.waitForSelector('#app [data-plan-row]', { timeout: 30000 });
    await page.click('#app [data-plan-row] button.apply');
    await page.waitForFunction((s) => Number(document.querySelector('#app [data-output="step_time_seconds"]')?.dataset.value) === s,
      rows[0].step, { timeout: 15000 }).catch(() => problems.push('Apply did not set the plan'));
  }
  await page.close();
  console.log(`${problems.length ? 'FAIL' : 'ok  '} the planner: ranked rows with their attributes, a row's link reproduces its step time, Apply`);
  for (const p of problems) console.log(`     ${p}`);
  return problems.length ? 1 : 0;
}

if (failures) { console.log(`${failures} end-to-end case(s) failed`); process.exit(1); }
console.log(`end-to-end: ${cases.length} links computed as expected from ${BASE}`);
