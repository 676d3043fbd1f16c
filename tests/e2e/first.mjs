// The first view (src/first.rs, one Yew-free module per framework) against the app that takes
// over from it. For every link of tests/links.txt and of cases.mjs, the app's wasm is held back
// until the first view has painted; its results, summary, form (values, states, messages) and
// notices are read; then the app is let through, and once it has taken over it must show exactly
// the same for the same link. Then the hand-over itself: what is typed in the first view while the
// app loads reaches the app, the focus and caret stay in the field, nothing above it moves.
import { readFile } from 'node:fs/promises';
import { cases } from './cases.mjs';

// What both renderers must agree on, read inside `root` (a selector).
// The app's own inputs (src/calc/field.rs APP_ONLY): no first view shows them, and a link that
// gives one is left to the app.
const APP_ONLY = ['calibration_compute_factor', 'calibration_comm_factor', 'second_run_nodes',
  'second_run_tokens_per_second_per_gpu', 'second_run_seconds_per_step', 'gpu_hour_price', 'deadline_hours', 'max_nodes',
  'multi_latent_attention', 'q_lora_rank', 'kv_lora_rank', 'qk_nope_head_dim', 'qk_rope_head_dim', 'qk_head_dim', 'qk_pos_emb_head_dim', 'v_head_dim',
  'num_distributed_optimizer_instances', 'defer_embedding_wgrad_compute', 'wgrad_deferral_limit',
  'torch_compile', 'fp8_format', 'decoder_first_pipeline_num_layers', 'decoder_last_pipeline_num_layers',
  'account_for_embedding_in_pipeline_split', 'account_for_loss_in_pipeline_split', 'bf16', 'zero_stage',
  'accumulate_grad_in_fp32', 'tp_mode', 'tp_linear_async_communication', 'pp_engine', 'compile.enable',
  'model.converters', 'pipeline_parallel_schedule'];
const SNAPSHOT = ({ root, appOnly }) => {
  const r = document.querySelector(root);
  if (!r) return null;
  const all = (s) => [...r.querySelectorAll(s)];
  const text = (e) => e.textContent.replace(/\s+/g, ' ').trim();
  return {
    results: all('#results [data-output]').map((e) => [e.dataset.output, e.getAttribute('data-value'), e.getAttribute('data-needs'), text(e)]),
    results_title: text(r.querySelector('#results h2')),
    summary: all('[data-summary]').map((e) => [e.dataset.summary, e.getAttribute('data-value'), text(e)]),
    links: all('main.embed .full-link [data-output], main.embed span[hidden][data-output="share_url"]').map((e) => [e.dataset.output, e.getAttribute('data-value')]),
    fields: all('form.inputs input').filter((e) => !appOnly.includes(e.id.replace(/^in-/, ''))).map((e) => [e.id, e.type === 'checkbox' ? e.checked : e.value, e.getAttribute('aria-invalid'),
      e.getAttribute('aria-describedby'), e.readOnly, e.disabled, e.placeholder, e.getAttribute('inputmode')]),
    groups: all('form.inputs > *').map((e) => [e.tagName, e.open ?? null, text(e.querySelector('legend, summary'))]),
    messages: all('form.inputs .msg').map((e) => [e.id, e.className, text(e)]),
    notices: all('[data-notice]').map((e) => [e.dataset.notice, text(e)]),
    picker: all('.picker select').map((e) => [e.id, e.value, e.disabled, e.options.length]),
    lede: r.querySelector('.lede') ? text(r.querySelector('.lede')) : null,
    theme: document.documentElement.dataset.theme,
  };
};

/** The queries of tests/links.txt (left of "=>"). */
async function linkQueries() {
  const text = await readFile(new URL('../links.txt', import.meta.url), 'utf8');
  return text.split('\n').filter((l) => l.trim() && !l.startsWith('#')).map((l) => l.split('=>')[0].trim().replace(/^\?/, ''));
}

// A page whose app wasm waits until `release()` is called.
async function held(context, url) {
  const page = await context.newPage();
  let release;
  const gate = new Promise((ok) => { release = ok; });
  await page.route('**/dpcalc_bg.wasm', async (route) => { await gate; await route.continue(); });
  const errors = [];
  page.on('pageerror', (e) => errors.push(`page error: ${e.message}`));
  await page.goto(url);
  return { page, release, errors };
}

const stage = (page, want) => page.waitForFunction((w) => w.includes(document.documentElement.dataset.stage), want, { timeout: 20000 });

export async function firstViews(browser, origin, base) {
  const context = await browser.newContext();
  const queries = [...new Set([...(await linkQueries()), ...cases.map(([q]) => q),
    // errors, warnings, notes and a conflict in the form; every view parameter
    'world_size=6&tensor_parallel_size=4&micro_batch_size=2&batch_size=16&num_samples=abc&foo=1',
    'framework=megatron&world_size=8&tensor_model_parallel_size=3&micro_batch_size=2&global_batch_size=7',
    'framework=deepspeed&world_size=8&train_batch_size=60&train_micro_batch_size_per_gpu=4',
    'framework=torchtitan&world_size=8&local_batch_size=2&global_batch_size=7',
    'framework=nanotron&world_size=8&dp=3',
    'framework=hf&world_size=8&per_device_train_batch_size=0&max_steps=x',
    'nodes=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000&embed=1',
    'nodes=2&micro_batch_size=2&num_samples=1000&embed=1&readonly=1&theme=dark',
    'nodes=2&micro_batch_size=2&num_samples=1000&readonly=1&theme=light',
    'gpu=H100-80GB&mfu=0.4&micro_batch_size=2',
  ])];
  let failed = 0, declined = 0;
  for (const q of queries) {
    const { page, release, errors } = await held(context, `${origin}${base}${q ? '?' + q : ''}`);
    const problems = [];
    await stage(page, ['first', 'loading']).catch(() => problems.push('the first view neither painted nor stood aside'));
    const shownStage = await page.evaluate(() => document.documentElement.dataset.stage);
    const first = await page.evaluate(SNAPSHOT, { root: '[data-first-view]', appOnly: APP_ONLY });
    release();
    await stage(page, ['app']).catch(() => problems.push('the app never took over'));
    const app = await page.evaluate(SNAPSHOT, { root: '#app', appOnly: APP_ONLY });
    const left = await page.evaluate(() => document.querySelectorAll('[data-first-view]').length);
    if (left) problems.push('the first view is still in the page');
    if (shownStage === 'loading') {
      // only a link that names a model (its key, or an architecture key, which opens the folded
      // architecture group) is left to the app: its memory and FLOPs are the app's
      declined++;
      const names = await page.evaluate(() => !!document.querySelector('#app details.group.architecture[open]')
        || [...document.querySelectorAll('#app form.inputs input[type=text]')].some((e) => /^in-(base_model|model_name_or_path|model_id|model)$/.test(e.id) && e.value.trim() !== ''));
      const keys = /(^|&)(base_model|model_name_or_path|model|model_type|model\.model_config\.[a-z_]+|hidden_size|num_hidden_layers|num_layers|intermediate_size|ffn_hidden_size|num_attention_heads|num_key_value_heads|num_query_groups|head_dim|kv_channels|vocab_size)=[^&]/;
      const own = APP_ONLY.some((k) => new RegExp(`(^|&)${k}=`).test(q));
      if (!names && !keys.test(q) && !own) problems.push('the first view stood aside for a link without a model or the app\'s own inputs');
    } else if (first && app) {
      for (const k of Object.keys(first)) {
        const [a, b] = [JSON.stringify(first[k]), JSON.stringify(app[k])];
        if (a !== b) problems.push(`${k} differs:\n       first view ${a.slice(0, 600)}\n       app        ${b.slice(0, 600)}`);
      }
    } else problems.push('nothing to compare');
    problems.push(...errors);
    if (problems.length) {
      console.log(`FAIL first view = app ?${q}`);
      for (const p of problems) console.log(`     ${p}`);
      failed++;
    }
    await page.close();
  }
  console.log(`${failed ? 'FAIL' : 'ok  '} first view = app for ${queries.length} links (${declined} left to the app: they name a model or the app's own inputs)`);
  failed += await handOver(context, origin, base);
  failed += await typedModel(context, origin, base);
  await context.close();
  return failed;
}

// Typed while the app loads: kept, focused, caret in place, nothing moved.
async function handOver(context, origin, base) {
  const problems = [];
  const { page, release, errors } = await held(context, `${origin}${base}?nodes=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000`);
  await stage(page, ['first']);
  const initial = await page.getAttribute('[data-output="max_steps"]', 'data-value');
  const input = page.locator('[data-first-view] #in-num_samples');
  await input.click();
  await page.keyboard.press('End');
  await page.keyboard.type('23');
  await page.keyboard.press('ArrowLeft');
  const before = await page.evaluate(() => ({
    value: document.querySelector('[data-output="global_batch_size"]').getAttribute('data-value'),
    steps: document.querySelector('[data-output="max_steps"]').getAttribute('data-value'),
    url: location.search,
    top: document.querySelector('#in-num_samples').getBoundingClientRect().top,
    results: document.querySelector('#results').getBoundingClientRect().top,
  }));
  if (!before.url.includes('num_samples=100023')) problems.push(`the first view did not write the link: ${before.url}`);
  if (!before.steps || before.steps === initial) problems.push(`the first view did not recompute: max_steps ${initial} → ${before.steps}`);
  release();
  await stage(page, ['app']).catch(() => problems.push('the app never took over'));
  const after = await page.evaluate(() => {
    const a = document.activeElement;
    return {
      focused: a && a.id, start: a && a.selectionStart, inApp: !!(a && a.closest('#app')),
      value: document.querySelector('#in-num_samples').value,
      steps: document.querySelector('[data-output="max_steps"]').getAttribute('data-value'),
      url: location.search,
      top: document.querySelector('#in-num_samples').getBoundingClientRect().top,
      results: document.querySelector('#results').getBoundingClientRect().top,
    };
  });
  if (after.value !== '100023' || after.steps !== before.steps) problems.push(`the app lost what was typed: ${after.value}, max_steps ${after.steps}`);
  if (after.focused !== 'in-num_samples' || !after.inApp) problems.push(`focus not kept: ${after.focused}`);
  if (after.start !== 5) problems.push(`caret at ${after.start}, want 5`);
  if (after.url !== before.url) problems.push(`link changed at the hand-over: ${before.url} → ${after.url}`);
  if (Math.abs(after.top - before.top) > 0.5 || Math.abs(after.results - before.results) > 0.5) {
    problems.push(`layout moved at the hand-over: field ${before.top}→${after.top}, results ${before.results}→${after.results}`);
  }
  // typed after the app has its state but the first view still shows: the app reads it again
  problems.push(...errors);
  await page.close();
  console.log(`${problems.length ? 'FAIL' : 'ok  '} hand-over: typed text, focus, caret and layout kept`);
  for (const p of problems) console.log(`     ${p}`);
  return problems.length ? 1 : 0;
}

// A model typed into the first view keeps the page visible and computing (all but the
// model stage) until the app takes over; the folded architecture group opens with its fields.
async function typedModel(context, origin, base) {
  const problems = [];
  const { page, release, errors } = await held(context, `${origin}${base}?nodes=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000`);
  await stage(page, ['first']);
  // the folded architecture group, opened here, shows its fields
  const opened = await page.locator('[data-first-view] details.architecture > summary').click({ timeout: 5000 })
    .then(() => true, () => problems.push('no architecture group in the first view') && false);
  if (opened) {
    await page.waitForSelector('[data-first-view] details.architecture[open] input', { timeout: 5000 })
      .catch(() => problems.push('the opened architecture group has no fields'));
  }
  await page.locator('[data-first-view] #in-base_model').fill('meta-llama/Llama-3.1-8B');
  await page.waitForFunction(() => location.search.includes('base_model='), null, { timeout: 5000 })
    .catch(() => problems.push('the link was not written'));
  const typed = await page.evaluate(() => ({
    stage: document.documentElement.dataset.stage,
    first: !!document.querySelector('[data-first-view] #results'),
    batch: document.querySelector('[data-first-view] [data-output="global_batch_size"]')?.getAttribute('data-value'),
    model: document.querySelector('[data-first-view] #in-base_model')?.value,
  }));
  if (typed.stage !== 'first' || !typed.first) problems.push(`the first view went away after a model was typed: ${JSON.stringify(typed)}`);
  if (typed.batch !== '128') problems.push(`global_batch_size ${typed.batch} after a model was typed, want 128`);
  if (typed.model !== 'meta-llama/Llama-3.1-8B') problems.push(`the model field reads ${typed.model}`);
  release();
  await stage(page, ['app']).catch(() => problems.push('the app never took over'));
  const app = await page.evaluate(() => document.querySelector('#app #in-base_model')?.value);
  if (app !== 'meta-llama/Llama-3.1-8B') problems.push(`the app lost the typed model: ${app}`);
  problems.push(...errors);
  await page.close();
  console.log(`${problems.length ? 'FAIL' : 'ok  '} a model typed in the first view: the page stays and computes; the architecture group opens with its fields`);
  for (const p of problems) console.log(`     ${p}`);
  return problems.length ? 1 : 0;
}
