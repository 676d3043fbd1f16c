// The screenshots of docs/page.md (docs/screenshots/): the bare address and a link, at 1280 px and
// 375 px, from the release build in dist/. Run after `make dist`: node tests/e2e/screenshots.mjs
import { createRequire } from 'node:module';
import { serve, BASE } from './server.mjs';

const require = createRequire(import.meta.url);
const { chromium } = require('../../.tools/node_modules/playwright-core');
const { origin, close } = await serve();
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
const link = 'version=0.19.0&nodes=2&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=10000&sequence_len=2048&theme=light';
const out = new URL('../../docs/screenshots/', import.meta.url).pathname;
try {
  for (const [name, query] of [['bare', 'theme=light'], ['link', link]]) {
    for (const [width, height] of [[1280, 900], [375, 812]]) {
      const page = await browser.newPage({ viewport: { width, height } });
      await page.goto(`${origin}${BASE}?${query}`);
      await page.waitForSelector('[data-output="world_size"][data-value]', { timeout: 15000 });
      await page.waitForTimeout(400);
      await page.screenshot({ path: `${out}${name}-${width}.png` });
      console.log(`${out}${name}-${width}.png`);
      await page.close();
    }
  }
} finally {
  await browser.close();
  close();
}
