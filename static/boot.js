// Starts the app. An external module (not Trunk's inline initialiser) so that the page runs
// under a strict Content Security Policy: script-src 'self' 'wasm-unsafe-eval'.
import init from './dpcalc.js';

init({ module_or_path: new URL('./dpcalc_bg.wasm', import.meta.url) });
