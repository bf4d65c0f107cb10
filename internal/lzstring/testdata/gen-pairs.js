// Computes the reference pairs in pairs.json with the npm package lz-string
// 1.5.0 (the implementation the TypeSafe Playground's share links use):
//   cd /tmp && npm install lz-string@1.5.0
//   NODE_PATH=/tmp/node_modules node gen-pairs.js > pairs.json
const lz = require("lz-string");
const inputs = [
  "a",
  "ab",
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "hello",
  "hello world hello world hello world",
  "TOBEORNOTTOBEORTOBEORNOT",
  "café — naïve résumé",
  "日本語のテキストと中文",
  "emoji 😀👍🏽 and a lone 🎉",
  "line\nbreak\ttab \"quote\" back\\slash",
  "{\"apiVersion\":\"v1\",\"documentText\":\"Help! My payouts have been failing for 3 days.\",\"promptsText\":\"{\\n  \\\"is_urgent\\\": {\\n    \\\"type\\\": \\\"noul\\\",\\n    \\\"instructions\\\": \\\"Does this convey urgency?\\\"\\n  }\\n}\",\"selectedModels\":[\"jev-latest\"]}",
  Array.from({length: 300}, (_, i) => String.fromCharCode(32 + (i * 7919) % 95)).join(""),
  Array.from({length: 2000}, (_, i) => "item" + (i % 37) + (i % 3 ? " " : ",")).join(""),
  Array.from({length: 600}, (_, i) => String.fromCodePoint(0x4e00 + (i * 31) % 500)).join(""),
];
const pairs = inputs.map((input) => ({input, encoded: lz.compressToEncodedURIComponent(input)}));
process.stdout.write(JSON.stringify(pairs, null, 1) + "\n");
