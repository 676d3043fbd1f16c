import init from './baseline.js';

init({ module_or_path: new URL('./baseline_bg.wasm', import.meta.url) });
