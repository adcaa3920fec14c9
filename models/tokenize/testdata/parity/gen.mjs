// gen.mjs writes the parity goldens of tokenizer.json tokenizers with
// HuggingFace's own Rust tokenizers (npm @anush008/tokenizers@0.6.0, which
// embeds the tokenizers 0.22.2 crate). Run it outside the repository:
//
//   mkdir -p /tmp/tokref && cd /tmp/tokref && npm init -y && npm install @anush008/tokenizers@0.6.0
//   cd models/tokenize && BELUGA_WRITE_PARITY_CORPUS=/tmp/tokref/corpus.jsonl go test -run TestParity .
//   NODE_PATH=/tmp/tokref/node_modules node testdata/parity/gen.mjs /tmp/tokref/corpus.jsonl \
//     roberta-base=$SHARED/data/tokenizers/FacebookAI__roberta-base/tokenizer.json ...
//
// Each golden is gzipped: the corpus hash (FNV-1a 64 over
// "len:text|len:pair|is_pair\n", lengths in UTF-8 bytes), the number of
// inputs (uint32) and, per input, FNV-1a 32 over its ids as little-endian
// uint32s. `--show TOKENIZER TEXT [PAIR]` prints one input's ids instead.
// With --every8, NAME.bin.gz covers every 8th input only (deberta-v3-fast:
// the tokenizer.json that BELUGA_WRITE_DEBERTA_FAST=FILE go test -run
// TestPrecompiledParity writes). With --offsets, NAME-offsets.bin.gz covers every 8th input with a hash of
// its ids, type ids and character offsets, untruncated and truncated to 12
// tokens (longest first).
import { createRequire } from "module";
import fs from "fs";
import zlib from "zlib";
import path from "path";
import url from "url";

const require = createRequire(import.meta.url);
const { Tokenizer } = require("@anush008/tokenizers");

function fnv32(ids) {
  let h = 0x811c9dc5;
  for (const id of ids) {
    for (let k = 0; k < 4; k++) {
      h ^= (id >>> (8 * k)) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  }
  return h >>> 0;
}

function fnv64(buf, h) {
  const p = 0x100000001b3n, m = (1n << 64n) - 1n;
  for (const b of buf) h = ((h ^ BigInt(b)) * p) & m;
  return h;
}

const args = process.argv.slice(2);
if (args[0] === "--show") {
  const tk = Tokenizer.fromFile(args[1]);
  const e = await tk.encode(args[2], args.length > 3 ? args[3] : null);
  console.log(JSON.stringify({ ids: e.getIds(), tokens: e.getTokens() }));
  process.exit(0);
}
const offsets = args[0] === "--offsets";
if (offsets) args.shift();
const every8 = args[0] === "--every8";
if (every8) args.shift();
const corpus = fs.readFileSync(args[0], "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
let ch = 0xcbf29ce484222325n;
for (const x of corpus) {
  const t = x.text, p = x.pair || "";
  const s = `${Buffer.byteLength(t)}:${t}|${Buffer.byteLength(p)}:${p}|${x.is_pair ? "true" : "false"}\n`;
  ch = fnv64(Buffer.from(s, "utf8"), ch);
}
const here = path.dirname(url.fileURLToPath(import.meta.url));
for (const spec of args.slice(1)) {
  const [name, file] = spec.split("=");
  if (offsets) {
    const full = Tokenizer.fromFile(file), cut = Tokenizer.fromFile(file);
    cut.setTruncation(12);
    const picked = corpus.filter((_, i) => i % 8 === 0);
    const out = Buffer.alloc(12 + 4 * picked.length);
    out.writeBigUInt64LE(ch, 0);
    out.writeUInt32LE(picked.length, 8);
    for (let i = 0; i < picked.length; i++) {
      const x = picked[i], vals = [];
      for (const tk of [full, cut]) {
        const e = await tk.encode(x.text, x.is_pair ? x.pair || "" : null);
        const ids = e.getIds();
        vals.push(ids.length, ...ids, ...e.getTypeIds(), ...e.getOffsets().flat());
      }
      out.writeUInt32LE(fnv32(vals), 12 + 4 * i);
    }
    fs.writeFileSync(path.join(here, name + "-offsets.bin.gz"), zlib.gzipSync(out, { level: 9 }));
    console.log(name, picked.length, "inputs (offsets), corpus hash", ch.toString(16));
    continue;
  }
  const tk = Tokenizer.fromFile(file);
  const inputs = every8 ? corpus.filter((_, i) => i % 8 === 0) : corpus;
  const out = Buffer.alloc(12 + 4 * inputs.length);
  out.writeBigUInt64LE(ch, 0);
  out.writeUInt32LE(inputs.length, 8);
  for (let i = 0; i < inputs.length; i++) {
    const x = inputs[i];
    const e = await tk.encode(x.text, x.is_pair ? x.pair || "" : null);
    out.writeUInt32LE(fnv32(e.getIds()), 12 + 4 * i);
  }
  fs.writeFileSync(path.join(here, name + ".bin.gz"), zlib.gzipSync(out, { level: 9 }));
  console.log(name, inputs.length, "inputs, corpus hash", ch.toString(16));
}
