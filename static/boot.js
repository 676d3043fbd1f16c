// Starts the page in two stages. An external module (not Trunk's inline initialiser) so that the
// page runs under a strict Content Security Policy: script-src 'self' 'wasm-unsafe-eval'.
//
// 1. The first view: the link's framework's small Yew-free module (`first-<id>.js`, src/first.rs)
//    writes the first screen as HTML and recomputes it on every edit, writing the link back with
//    history.replaceState as the app does.
// 2. The full app (`dpcalc.js`, Yew) loads behind it into a hidden root. When it has rendered the
//    link the first view shows (the link is the only state that crosses: anything typed meanwhile
//    is sent to it), it takes the first view's place, with the focus and caret where they were.
// A link the first view cannot show (one that arrives naming a model: its memory and FLOPs are
// the app's), or any failure of the first view, leaves the page to the app alone, as before; a
// model typed into the first view keeps it, computing all but the model stage until the app
// takes over.
const html = document.documentElement;
const FRAMEWORKS = ['axolotl', 'hf', 'deepspeed', 'megatron', 'torchtitan', 'nanotron'];
const base = () => location.origin + location.pathname;
const search = () => location.search.replace(/^\?/, '');
const named = new URLSearchParams(location.search).get('framework');

let first = null; // { mod, root } while the first view is shown
let shown = null; // the link (query) the first view shows

// The module and its wasm are requested together (one round trip, not two in series).
async function load(id) {
  const wasm = fetch(new URL(`./first-${id}_bg.wasm`, import.meta.url));
  const mod = await import(`./first-${id}.js`);
  await mod.default({ module_or_path: wasm });
  return mod;
}

// Runs `swap` (which replaces the first view's elements) and puts the focus and the caret back
// on the element with the same id.
function keepFocus(swap) {
  const active = document.activeElement;
  const focus = active && first.root.contains(active) && active.id
    ? { id: active.id, start: active.selectionStart, end: active.selectionEnd } : null;
  swap();
  const el = focus && document.getElementById(focus.id);
  if (el) {
    el.focus({ preventScroll: true });
    if (focus.start != null && el.setSelectionRange) el.setSelectionRange(focus.start, focus.end);
  }
}

// the user opened the folded architecture group (its fields are drawn)
let opened = false;

// `edited`: after an edit here (a model typed in keeps the first view, computing all but the
// model stage); a link that arrives naming a model is the app's.
function paint(edited) {
  const out = first.mod.render(shown, base(), opened, edited);
  if (!out) return false;
  keepFocus(() => { first.root.innerHTML = out; });
  postHeight();
  return true;
}

// The same message the app posts when framed (src/web/iframe.rs).
function postHeight() {
  if (window.parent !== window) {
    window.parent.postMessage({ type: 'dpcalc:height', height: html.scrollHeight, href: location.href }, '*');
  }
}

async function edit(name, value) {
  if (!first) return;
  const q = first.mod.edit(shown, name, value);
  write(q);
  if (name === 'framework' && !first.mod.computes(first.mod.framework(q))) {
    // another framework's rules are another module
    try { first.mod = await load(first.mod.framework(q)); } catch { return leave(); }
  }
  if (!paint(true)) leave();
}

// The address bar shows the link `q` (a query without "?"), replaced, never pushed.
function setUrl(q) {
  history.replaceState(null, '', q ? `${base()}?${q}` : base());
}

function write(q) {
  shown = q;
  setUrl(q);
}

function leave() {
  if (first) { first.root.remove(); first = null; }
  html.dataset.stage = 'loading'; // the app alone, when it arrives
  if (html.dataset.appQuery !== undefined) {
    // the app is there already: it shows the link as it is now
    app.hidden = false;
    html.dataset.stage = 'app';
    if (shown !== null) {
      setUrl(shown);
      window.dispatchEvent(new Event('dpcalc:load'));
    }
  }
}

async function start() {
  const id = FRAMEWORKS.includes(named) ? named : 'axolotl';
  let mod = await load(id);
  const fw = mod.framework(search());
  if (!mod.computes(fw)) mod = await load(fw);
  const root = document.createElement('div');
  root.dataset.firstView = '';
  document.body.insertBefore(root, app);
  first = { mod, root };
  // the link as given (an old link without version= keeps its note); an edit writes the
  // canonical link, as the app does
  shown = search();
  html.dataset.theme = mod.theme(shown);
  if (!paint(false)) { leave(); return; }
  html.dataset.stage = 'first';
  root.addEventListener('input', (e) => {
    const t = e.target;
    if (t.matches('input[type=text]')) edit(t.name, t.value);
  });
  root.addEventListener('change', (e) => {
    const t = e.target;
    if (t.matches('input[type=checkbox]')) edit(t.name, t.checked ? 'true' : '');
    else if (t.matches('select')) edit(t.name, t.value);
  });
  root.addEventListener('submit', (e) => e.preventDefault());
  // the folded architecture group opens with its fields (toggle does not bubble: captured)
  root.addEventListener('toggle', (e) => {
    if (e.target.matches('details.architecture') && e.target.open && !opened) {
      opened = true;
      if (!paint(true)) leave();
    }
  }, true);
}

// The app mounts into #app (src/app.rs), hidden while the first view is shown, and marks each
// render with the query it shows (html[data-app-query]).
const app = document.createElement('div');
app.id = 'app';
app.hidden = true;
document.body.append(app);

function handOver() {
  if (!first) { app.hidden = false; html.dataset.stage = 'app'; return true; }
  if (html.dataset.appQuery !== first.mod.edit(shown, '', '')) {
    // typed in the first view while the app loaded: the app reads the link again
    setUrl(shown);
    window.dispatchEvent(new Event('dpcalc:load'));
    return false;
  }
  const y = window.scrollY;
  keepFocus(() => {
    first.root.remove();
    app.hidden = false;
  });
  first = null;
  window.scrollTo(0, y);
  html.dataset.stage = 'app';
  return true;
}

const firstView = start().catch(() => leave());
firstView.then(async () => {
  const watch = new MutationObserver(() => { if (handOver()) watch.disconnect(); });
  watch.observe(html, { attributes: true, attributeFilter: ['data-app-query'] });
  if (html.dataset.appQuery !== undefined && handOver()) watch.disconnect();
  // the app's own styles (below the first screen: static/app.css) arrive with it
  const styles = new Promise((ok) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = new URL('./app.css', import.meta.url);
    link.onload = link.onerror = ok;
    document.head.append(link);
  });
  const [{ default: init }] = await Promise.all([import('./dpcalc.js'), styles]);
  await init({ module_or_path: new URL('./dpcalc_bg.wasm', import.meta.url) });
});
