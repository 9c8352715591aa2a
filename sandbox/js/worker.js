'use strict';
// gisclaw's JavaScript worker: the warm half of the confined JS runtime.
//
// Started by `gisclaw __js` (src/js/serve.rs) after it confined itself:
// namespaces, the sandbox's user, Landlock on this folder and the case's,
// seccomp with no sockets, rlimits, an empty environment, and Node's own
// permission model on top. This process is hostile ground once a call has
// run in it: the host trusts nothing it says beyond one bounded line per
// call, judged on the host.
//
// Protocol: one JSON request per line on stdin, one JSON answer per line
// on stdout. The first line written is `{"ready": …}` once the libraries
// are compiled. A request:
//   {"id": N, "code": "<function source>", "name": "fnName",
//    "args": ["<JS expression>", …], "eval_methods": ["getZoom()", …],
//    "timeout_ms": 30000, "max_bytes": 8388608}
// Each call runs in a fresh realm (a jsdom window) holding the five
// libraries under their usual globals (turf, jsts, geolib, L, ol), so a
// call cannot change what the next one sees without escaping the realm.
// The answer:
//   {"id": N, "ok": true, "kind": "Number", "value": …,
//    "indirect": [{"method": "getZoom()", "kind": …, "value": …}],
//    "log": "…", "ms": 12.3}
//   {"id": N, "ok": false, "phase": "compile|arguments|call|indirect|output",
//    "error": {"name": "TypeError", "message": "…"}, "log": "…", "ms": …}

const vm = require('node:vm');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const v8 = require('node:v8');

const HERE = __dirname;
const MODULES = path.join(HERE, 'node_modules');
const { JSDOM, VirtualConsole } = require(path.join(MODULES, 'jsdom'));

/** The five libraries: their package, their browser bundle, their global. */
const LIBRARIES = [
  { name: 'turf', pkg: '@turf/turf', bundle: 'turf.min.js', global: 'turf' },
  { name: 'jsts', pkg: 'jsts', bundle: 'dist/jsts.min.js', global: 'jsts' },
  { name: 'geolib', pkg: 'geolib', bundle: 'lib/index.js', global: 'geolib' },
  { name: 'leaflet', pkg: 'leaflet', bundle: 'dist/leaflet.js', global: 'L' },
  { name: 'ol', pkg: 'ol', bundle: 'dist/ol.js', global: 'ol' },
];

const PAGE =
  '<!DOCTYPE html><html><head></head><body>' +
  '<div id="map" style="width: 800px; height: 600px"></div></body></html>';

/** Heap in use above which the worker collects after a call. */
const GC_ABOVE = 192 * 1024 * 1024;

/** Most characters of console output kept per call. */
const MAX_LOG = 16 * 1024;

/** Helpers defined in every realm: the type tag and plain JSON of a value. */
const REALM_HELPERS = `
(function (g) {
  const has = (name) => typeof g[name] !== 'undefined';
  function kind(v) {
    if (v === null) return 'null';
    if (v === undefined) return 'undefined';
    const t = typeof v;
    if (t === 'number' || t === 'bigint') return 'Number';
    if (t === 'boolean') return 'Boolean';
    if (t === 'string') return 'String';
    if (t === 'function') return 'Function';
    if (has('L')) {
      if (v instanceof L.Map) return 'leaflet.Map';
      if (v instanceof L.Layer) return 'leaflet.Layer';
      if (v instanceof L.LatLngBounds) return 'leaflet.LatLngBounds';
      if (v instanceof L.LatLng) return 'leaflet.LatLng';
      if (v instanceof L.Bounds) return 'leaflet.Bounds';
      if (v instanceof L.Point) return 'leaflet.Point';
    }
    if (has('ol')) {
      if (v instanceof ol.Map) return 'ol.Map';
      if (v instanceof ol.View) return 'ol.View';
      if (v instanceof ol.layer.Base) return 'ol.Layer';
      if (v instanceof ol.source.Source) return 'ol.Source';
      if (v instanceof ol.Feature) return 'ol.Feature';
      if (v instanceof ol.geom.Geometry) return 'ol.Geometry';
      if (v instanceof ol.Collection) return 'ol.Collection';
    }
    if (has('jsts') && v instanceof jsts.geom.Geometry) return 'jsts.Geometry';
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return 'Array';
    return 'Object';
  }
  function number(v) {
    if (typeof v === 'bigint') return Number(v);
    if (Number.isFinite(v)) return v;
    return { $nonfinite: String(v) };
  }
  function plain(v, depth, seen) {
    if (depth > 64) return { $deep: true };
    const k = kind(v);
    switch (k) {
      case 'null': return null;
      case 'undefined': return { $undefined: true };
      case 'Number': return number(v);
      case 'Boolean': case 'String': return v;
      case 'Function': return { $function: String(v.name || '') };
      case 'leaflet.LatLng':
        return v.alt === undefined ? { lat: number(v.lat), lng: number(v.lng) }
          : { lat: number(v.lat), lng: number(v.lng), alt: number(v.alt) };
      case 'leaflet.LatLngBounds': {
        const sw = v.getSouthWest(), ne = v.getNorthEast();
        if (!sw || !ne) return { $empty: 'leaflet.LatLngBounds' };
        return { southWest: plain(sw, depth + 1, seen), northEast: plain(ne, depth + 1, seen) };
      }
      case 'leaflet.Point': return { x: number(v.x), y: number(v.y) };
      case 'leaflet.Bounds':
        if (!v.min || !v.max) return { $empty: 'leaflet.Bounds' };
        return { min: plain(v.min, depth + 1, seen), max: plain(v.max, depth + 1, seen) };
      case 'ol.Feature':
        return new ol.format.GeoJSON().writeFeatureObject(v);
      case 'ol.Geometry':
        return new ol.format.GeoJSON().writeGeometryObject(v);
      case 'ol.Collection':
        return plain(v.getArray(), depth + 1, seen);
      case 'jsts.Geometry':
        return new jsts.io.GeoJSONWriter().write(v);
      case 'leaflet.Map': case 'leaflet.Layer': case 'ol.Map': case 'ol.View':
      case 'ol.Layer': case 'ol.Source':
        return { $object: k };
    }
    if (seen.has(v)) return { $cycle: true };
    seen.add(v);
    let out;
    if (k === 'Array') {
      out = Array.from(v, (x) => plain(x, depth + 1, seen));
    } else if (v instanceof Date) {
      out = Number.isNaN(v.getTime()) ? { $date: 'Invalid Date' } : { $date: v.toISOString() };
    } else if (v instanceof Map) {
      out = { $map: Array.from(v.entries(), ([a, b]) => [plain(a, depth + 1, seen), plain(b, depth + 1, seen)]) };
    } else if (v instanceof Set) {
      out = { $set: Array.from(v.values(), (x) => plain(x, depth + 1, seen)) };
    } else {
      out = {};
      for (const key of Object.keys(v)) {
        const x = v[key];
        if (typeof x === 'function') continue;
        out[key] = plain(x, depth + 1, seen);
      }
    }
    seen.delete(v);
    return out;
  }
  Object.defineProperty(g, '__gisclaw_answer', {
    value: function (v, maxBytes) {
      const text = JSON.stringify({ kind: kind(v), value: plain(v, 0, new Set()) });
      if (text.length > maxBytes) {
        throw new RangeError('the output is ' + text.length + ' characters, more than the ' + maxBytes + ' allowed');
      }
      return text;
    },
  });
})(globalThis);
`;

function compileLibraries() {
  const compiled = [];
  const versions = {};
  for (const lib of LIBRARIES) {
    const dir = path.join(MODULES, lib.pkg);
    const file = path.join(dir, lib.bundle);
    const source = fs.readFileSync(file, 'utf8');
    compiled.push(new vm.Script(source, { filename: `${lib.pkg}/${lib.bundle}` }));
    versions[lib.name] = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  }
  compiled.push(new vm.Script(REALM_HELPERS, { filename: 'gisclaw-realm-helpers.js' }));
  return { compiled, versions };
}

const { compiled, versions } = compileLibraries();

/** A fresh realm: a jsdom window with the libraries loaded. */
function newRealm(log) {
  const virtualConsole = new VirtualConsole();
  const keep = (level) => (...parts) => {
    if (log.text.length >= MAX_LOG) return;
    const line = parts.map((p) => (typeof p === 'string' ? p : safeInspect(p))).join(' ');
    log.text += (level === 'log' ? '' : level + ': ') + line + '\n';
    if (log.text.length > MAX_LOG) log.text = log.text.slice(0, MAX_LOG) + '…\n';
  };
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) virtualConsole.on(level, keep(level));
  // jsdom's own complaints ("not implemented: …") are the realm's business.
  virtualConsole.on('jsdomError', (e) => keep('jsdom')(String(e && e.message)));
  const dom = new JSDOM(PAGE, { runScripts: 'outside-only', pretendToBeVisual: true, virtualConsole });
  const w = dom.window;
  // What a browser has and jsdom lacks, which OpenLayers uses at load.
  w.TextEncoder = TextEncoder;
  w.TextDecoder = TextDecoder;
  w.structuredClone = structuredClone;
  w.ResizeObserver = class ResizeObserver { observe() {} unobserve() {} disconnect() {} };
  const context = dom.getInternalVMContext();
  for (const script of compiled) script.runInContext(context);
  return { dom, context };
}

function safeInspect(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

function describe(e) {
  if (e && typeof e === 'object') {
    let name = 'Error';
    let message = '';
    try { name = String(e.name || e.constructor?.name || 'Error'); } catch {}
    try { message = String(e.message ?? ''); } catch {}
    return { name, message: message.slice(0, 2000) };
  }
  return { name: 'Thrown', message: String(e).slice(0, 2000) };
}

function timeoutError(ms) {
  const e = new Error(`the call did not end within ${ms} ms`);
  e.name = 'Timeout';
  return e;
}

/** Waits for a thenable within `ms`; anything else is returned as is. */
async function settle(value, ms) {
  let isThenable = false;
  try { isThenable = value !== null && typeof value === 'object' && typeof value.then === 'function'; } catch {}
  if (!isThenable) return value;
  let timer;
  const limit = new Promise((_, reject) => { timer = setTimeout(() => reject(timeoutError(ms)), ms); });
  try {
    return await Promise.race([Promise.resolve(value), limit]);
  } finally {
    clearTimeout(timer);
  }
}

async function call(request) {
  const started = performance.now();
  const log = { text: '' };
  const timeout = Math.max(1, Math.min(Number(request.timeout_ms) || 30000, 600000));
  const maxBytes = Math.max(1024, Number(request.max_bytes) || 8 * 1024 * 1024);
  const answer = { id: request.id };
  let phase = 'realm';
  let realm;
  try {
    realm = newRealm(log);
    const run = (source, filename) => vm.runInContext(source, realm.context, { timeout, filename });
    phase = 'compile';
    run(`${request.code}\n;globalThis.__gisclaw_fn = (typeof ${request.name} === 'function') ? ${request.name} : undefined;`, 'solution.js');
    if (run('typeof globalThis.__gisclaw_fn', 'check.js') !== 'function') {
      throw new ReferenceError(`${request.name} is not defined as a function`);
    }
    phase = 'arguments';
    const args = (request.args || []).map((a) => `(${a})`).join(',\n');
    run(`globalThis.__gisclaw_args = [${args}];`, 'arguments.js');
    phase = 'call';
    let result = run('globalThis.__gisclaw_fn(...globalThis.__gisclaw_args)', 'call.js');
    result = await settle(result, timeout);
    realm.context.__gisclaw_result = result;
    phase = 'output';
    const main = JSON.parse(run(`__gisclaw_answer(globalThis.__gisclaw_result, ${maxBytes})`, 'answer.js'));
    answer.kind = main.kind;
    answer.value = main.value;
    const methods = request.eval_methods || [];
    if (methods.length > 0) {
      phase = 'indirect';
      answer.indirect = [];
      for (const method of methods) {
        let value = run(`(function (o) { return o.${method}; })(globalThis.__gisclaw_result)`, 'eval-method.js');
        value = await settle(value, timeout);
        realm.context.__gisclaw_method = value;
        const got = JSON.parse(run(`__gisclaw_answer(globalThis.__gisclaw_method, ${maxBytes})`, 'answer.js'));
        answer.indirect.push({ method, kind: got.kind, value: got.value });
      }
    }
    answer.ok = true;
  } catch (e) {
    answer.ok = false;
    answer.phase = phase;
    answer.error = e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT'
      ? { name: 'Timeout', message: `the call did not end within ${timeout} ms` }
      : describe(e);
  } finally {
    if (realm) {
      try { realm.dom.window.close(); } catch {}
    }
  }
  answer.log = log.text;
  answer.ms = Math.round((performance.now() - started) * 10) / 10;
  return answer;
}

function write(obj) {
  fs.writeSync(1, JSON.stringify(obj) + '\n');
}

/** The confinement report `gisclaw __js` passed as the last argument. */
function confinement() {
  try {
    return process.argv[2] ? JSON.parse(process.argv[2]) : null;
  } catch {
    return null;
  }
}

write({ ready: true, node: process.version, libraries: versions, confinement: confinement() });

const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    let request;
    try {
      request = JSON.parse(line);
    } catch (e) {
      write({ id: null, ok: false, phase: 'request', error: describe(e) });
      return;
    }
    const answer = await call(request);
    let text = JSON.stringify(answer);
    const limit = Math.max(1024, Number(request.max_bytes) || 8 * 1024 * 1024);
    if (Buffer.byteLength(text) > limit) {
      text = JSON.stringify({
        id: request.id, ok: false, phase: 'output', log: '', ms: answer.ms,
        error: { name: 'RangeError', message: `the answer is ${Buffer.byteLength(text)} bytes, more than the ${limit} allowed` },
      });
    }
    fs.writeSync(1, text + '\n');
    // Let jsdom finish closing the call's window (its clean-up runs on
    // the event loop): without this turn, a burst of calls keeps every
    // realm alive.
    await new Promise((resolve) => setImmediate(resolve));
    // V8 grows its heap rather than collect the closed realms; a full
    // collection once they add up keeps a long run's memory flat.
    if (typeof gc === 'function' && v8.getHeapStatistics().used_heap_size > GC_ABOVE) gc();
  });
});
lines.on('close', () => queue.then(() => process.exit(0)));
