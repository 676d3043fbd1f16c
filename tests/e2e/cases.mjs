// Each case: a link and the data-values it must show (null = no data-value).
export const cases = [
  ['world_size=4&tensor_parallel_size=2&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000',
    { world_size: '4', dp_world_size: '2', global_batch_size: '16', total_num_steps: '63', max_steps: '63',
      steps_per_epoch: '63', warmup_steps: '2', legacy_global_batch_size: '32', legacy_total_num_steps: '63' }],
  ['world_size=4&micro_batch_size=2&gradient_accumulation_steps=4&sequence_len=2048&sample_packing=true&sample_packing_eff_est=0.95&total_num_tokens=10000000',
    { global_batch_size: '32', total_num_steps: '158.0', max_steps: '158.0', tokens_per_step: '65536' }],
  // the bare address: no other-release box (it says nothing about inputs nobody typed)
  ['', { world_size: '8', dp_world_size: '8', global_batch_size: '8', total_num_steps: null }],
  ['nodes=16&gpus_per_node=8&tensor_parallel_size=8&micro_batch_size=4&gradient_accumulation_steps=16&num_samples=500000&num_epochs=3&saves_per_epoch=2',
    { world_size: '128', dp_world_size: '16', global_batch_size: '1024', total_num_steps: '1465', save_steps: '245', warmup_steps: '43' }],
  ['world_size=6&tensor_parallel_size=4&micro_batch_size=2&gradient_accumulation_steps=4&num_samples=1000',
    { dp_world_size: '1', global_batch_size: '8', total_num_steps: '125' }, ['world_size']],
  // Trainer.set_initial_training_values, run: L = 32, 11 steps per epoch (4.51: 10), 22 steps
  ['framework=hf&world_size=8&per_device_train_batch_size=4&gradient_accumulation_steps=3&num_samples=1001&num_train_epochs=2',
    { steps_per_epoch: '11', max_steps: '22', global_batch_size: '96', total_train_batch_size: '96' }],
  ['framework=hf&version=4.51&world_size=8&per_device_train_batch_size=4&gradient_accumulation_steps=3&num_samples=1001&num_train_epochs=2',
    { steps_per_epoch: '10', max_steps: '20' }],
  // Megatron's update_train_iters, run: train_samples 1000 at a constant 16 → 62 iterations (floor)
  ['framework=megatron&world_size=2&micro_batch_size=8&global_batch_size=16&train_samples=1000',
    { dp_world_size: '2', num_microbatches: '1', max_steps: '62' }],
  // DeepSpeed's _set_batch_related_parameters, run: W = 8, train 64 + micro 2 → GA 4
  ['framework=deepspeed&world_size=8&train_batch_size=64&train_micro_batch_size_per_gpu=2',
    { gradient_accumulation_steps: '4', train_batch_size: '64', dp_world_size: '8' }],
  // torchtitan 0.3.0's trainer.py, run: (gbs 64, local 8, degree 4) → GA 2
  ['framework=torchtitan&world_size=4&local_batch_size=8&global_batch_size=64',
    { dp_world_size: '4', gradient_accumulation_steps: '2', global_batch_size: '64', data_parallel_shard_degree: '4' }],
  ['framework=nanotron&world_size=8&dp=4&tp=2&pp=1&micro_batch_size=2&batch_accumulation_per_replica=4&sequence_length=2048&train_steps=100',
    { global_batch_size: '32', tokens_per_step: '65536', max_steps: '100' }],
];


// Links carrying HTML or script (each payload goes into a field, an unknown key and value, and theme).
export const payloads = [
  '<img src=x onerror="window.__pwned=1">',
  '"><script>window.__pwned=1</script>',
  '<svg onload="window.__pwned=1"></svg>',
  'javascript:window.__pwned=1',
];
export const hostileQuery = (p) => {
  const e = encodeURIComponent(p);
  return `num_samples=${e}&max_steps=${e}&${e}=${e}&theme=${e}&micro_batch_size=2&gradient_accumulation_steps=4`;
};

// What a hostile link must not have done, read in the page (the body of a function returning an
// object; both the Chromium and the Firefox run evaluate this same text).
export const hostileProbe = `return {
  pwned: window.__pwned !== undefined,
  // dpcalc draws its own SVGs (the GPU map, the timeline); no element may carry an event handler
  injected: document.querySelectorAll('main img, main script, main iframe, main [onload], main [onerror]').length,
  scripts: [...document.scripts].map((s) => s.src.split('/').pop()),
  alert: !!document.querySelector('[data-error="num_samples"][role="alert"]'),
  notice: document.querySelectorAll('[data-notice]').length,
};`;

/** The problems a probe result shows, as messages. */
export function hostileProblems(found) {
  const problems = [];
  if (found.pwned) problems.push('injected script ran');
  if (found.injected) problems.push(`${found.injected} injected element(s)`);
  if (found.scripts.join(',') !== 'boot.js') problems.push(`scripts: ${found.scripts}`);
  if (!found.alert) problems.push('no error at num_samples');
  if (!found.notice) problems.push('no notice for the unknown parameter');
  return problems;
}
