// End-to-end test of the release build: serves dist/ from a local static server under a
// sub-path (as a docs site would), opens links in headless Chromium and reads the data-output
// contract. Run by `make e2e` (after `make dist`).
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { serve, BASE } from './server.mjs';
import { cases, payloads, hostileQuery, hostileProbe, hostileProblems } from './cases.mjs';

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
  close();
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
  let failed = 0;
  for (const p of payloads) {
    const query = hostileQuery(p);
    const page = await browser.newPage();
    const problems = [];
    page.on('dialog', (d) => { problems.push('a dialog opened'); d.dismiss(); });
    await page.goto(`${origin}${BASE}?${query}`);
    await page.waitForSelector('[data-output="global_batch_size"][data-value]', { timeout: 15000 })
      .catch(() => problems.push('the page did not compute'));
    problems.push(...hostileProblems(await page.evaluate(`(() => { ${hostileProbe} })()`)));
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
