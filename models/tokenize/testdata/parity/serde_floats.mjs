// serde_floats.mjs writes serde-floats.txt: JSON numbers and the value
// HuggingFace's tokenizers read each as (serde_json's default parse, which
// is not correctly rounded), for TestSerdeFloatMatchesHuggingFace. Each
// number is a Unigram score of a tokenizer.json that HuggingFace's Rust
// tokenizers 0.22.2 (npm @anush008/tokenizers@0.6.0) load and save again:
// the saved score is the shortest decimal of the value it read.
//
//   NODE_PATH=/tmp/tokref/node_modules node testdata/parity/serde_floats.mjs
import { createRequire } from "module";
import fs from "fs";
import os from "os";
import path from "path";
import url from "url";

const { Tokenizer } = createRequire(import.meta.url)("@anush008/tokenizers");
let seed = 20261126n;
const rand = (n) => { // a 64-bit LCG: the same numbers every run
  seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
  return Number((seed >> 33n) % BigInt(n));
};
const nums = ["-10.246616157728505", "-123456789012345678901234.5", "-18446744073709551616.0", "-1844674407370955161.60"];
while (nums.length < 600) {
  const k = [15, 16, 17, 17, 17, 18, 19, 20, 22][rand(9)];
  let d = String(1 + rand(9));
  while (d.length < k) d += String(rand(10));
  const ip = 1 + rand(2);
  let s = "-" + d.slice(0, ip) + "." + d.slice(ip);
  if (rand(5) === 0) s += "e-0" + (1 + rand(9));
  else if (rand(10) === 0) s = "-0.000" + d;
  nums.push(s);
}
const vocab = '[["[UNK]",0]' + nums.map((s, i) => `,["p${i}",${s}]`).join("") + "]";
const doc = `{"version":"1.0","truncation":null,"padding":null,"added_tokens":[],"normalizer":null,` +
  `"pre_tokenizer":null,"post_processor":null,"decoder":null,` +
  `"model":{"type":"Unigram","unk_id":0,"byte_fallback":false,"vocab":${vocab}}}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "serde-"));
fs.writeFileSync(path.join(dir, "in.json"), doc);
Tokenizer.fromFile(path.join(dir, "in.json")).save(path.join(dir, "out.json"));
// The saved file's numbers, as written (JSON.parse would round them again).
const saved = fs.readFileSync(path.join(dir, "out.json"), "utf8");
const read = [...saved.matchAll(/\["p(\d+)",\s*(-?[0-9.eE+-]+)\]/g)];
if (read.length !== nums.length) throw new Error(`${read.length} scores saved of ${nums.length}`);
const lines = read.map((m) => `${nums[Number(m[1])]} ${m[2]}`);
const here = path.dirname(url.fileURLToPath(import.meta.url));
fs.writeFileSync(path.join(here, "serde-floats.txt"), lines.join("\n") + "\n");
console.log(lines.length, "numbers");
