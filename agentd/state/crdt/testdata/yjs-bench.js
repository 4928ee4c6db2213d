// Yjs baseline for BenchmarkRGAText_AutomergePaper (docs/CRDT.md). Not part of
// the build. Run: npm install yjs@13 && node --expose-gc yjs-bench.js \
//   editing-traces/automerge-paper.json.gz   (from this testdata directory)
const Y = require('yjs'), fs = require('fs'), zlib = require('zlib')
const tr = JSON.parse(zlib.gunzipSync(fs.readFileSync(process.argv[2])))
const patches = []
for (const t of tr.txns) for (const p of t.patches) patches.push(p)
global.gc(); const base = process.memoryUsage().heapUsed
let peak = base
const t0 = process.hrtime.bigint()
const doc = new Y.Doc(), text = doc.getText('t')
let i = 0
for (const [pos, del, ins] of patches) {
  if (del > 0) text.delete(pos, del)
  if (ins) text.insert(pos, ins)
  if (++i % 2000 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed)
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6
if (text.toString() !== tr.endContent) throw new Error('mismatch')
global.gc(); const live = process.memoryUsage().heapUsed - base
console.log(`yjs ${require('yjs/package.json').version}: ${ms.toFixed(0)} ms, peak-heap ${( (peak-base)/2**20).toFixed(2)} MB, live-heap ${(live/2**20).toFixed(2)} MB`)
