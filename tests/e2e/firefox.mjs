// The end-to-end links and the hostile links again, in Firefox ESR through geckodriver (W3C
// WebDriver over HTTP), so the app is not accidentally Chromium-only. Run by `make e2e`.
import { spawn } from 'node:child_process';
import { serve, BASE } from './server.mjs';
import { cases, payloads, hostileQuery, hostileProbe, hostileProblems } from './cases.mjs';

const GECKODRIVER = process.env.GECKODRIVER || 'geckodriver';
const PORT = 4444 + Math.floor(Math.random() * 1000);
const driver = spawn(GECKODRIVER, ['--port', String(PORT)], { stdio: 'ignore' });
const { origin, close } = await serve();
const wd = async (method, path, body) => {
  const res = await fetch(`http://127.0.0.1:${PORT}${path}`, {
    method, headers: { 'content-type': 'application/json' }, body: body && JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${json.value.message}`);
  return json.value;
};
for (let i = 0; ; i++) { // wait for geckodriver
  try { await wd('GET', '/status'); break; } catch (e) { if (i > 100) throw e; await new Promise((r) => setTimeout(r, 100)); }
}
const session = await wd('POST', '/session', { capabilities: { alwaysMatch: {
  browserName: 'firefox', 'moz:firefoxOptions': { binary: process.env.FIREFOX || '/usr/bin/firefox-esr', args: ['-headless'] },
} } });
const sid = session.sessionId;
const run = (script, args = []) => wd('POST', `/session/${sid}/execute/sync`, { script, args });
const open = async (query) => {
  await wd('POST', `/session/${sid}/url`, { url: `${origin}${BASE}${query ? '?' + query : ''}` });
  for (let i = 0; i < 150; i++) {
    // the app has taken over from the first view (static/boot.js), and computed
    if (await run('return document.documentElement.dataset.stage === \'app\' && !!document.querySelector(\'#app [data-output="global_batch_size"][data-value]\')')) {
      // the explanation, the comparison box and the run section follow one task later
      await new Promise((r) => setTimeout(r, 200));
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

let failures = 0;
try {
  for (const [query, expected, errors = []] of cases) {
    const problems = [];
    if (!(await open(query))) problems.push('the page did not compute');
    const got = await run(`const out = {}; for (const n of arguments[0]) { const e = document.querySelector('[data-output="' + n + '"]'); out[n] = e && e.getAttribute('data-value'); } return out;`, [Object.keys(expected)]);
    for (const [name, want] of Object.entries(expected)) if (got[name] !== want) problems.push(`${name}: got ${got[name]}, want ${want}`);
    for (const f of errors) if (!(await run(`return !!document.querySelector('[data-error="${f}"][role="alert"]')`))) problems.push(`no error at ${f}`);
    console.log(`${problems.length ? 'FAIL' : 'ok  '} firefox ?${query}`);
    for (const p of problems) console.log(`     ${p}`);
    failures += problems.length ? 1 : 0;
  }
  for (const p of payloads) {
    const problems = [];
    if (!(await open(hostileQuery(p)))) problems.push('the page did not compute');
    problems.push(...hostileProblems(await run(hostileProbe)));
    console.log(`${problems.length ? 'FAIL' : 'ok  '} firefox hostile link ${p}`);
    for (const x of problems) console.log(`     ${x}`);
    failures += problems.length ? 1 : 0;
  }
} finally {
  await wd('DELETE', `/session/${sid}`).catch(() => {});
  driver.kill();
  close();
}
if (failures) { console.log(`${failures} Firefox end-to-end case(s) failed`); process.exit(1); }
console.log(`end-to-end in Firefox ESR: ${cases.length} links and ${payloads.length} hostile links as expected`);
