// Reference data for the Playground tests, computed with the npm package
// lz-string 1.5.0 (the codec of the TypeSafe Playground share links):
//   cd /tmp && npm install lz-string@1.5.0
//   NODE_PATH=/tmp/node_modules node gen.js
// *.link are real share links found in published TypeSafe documentation
// (intent-routing: docs.typesafe.ai/patterns/intent-routing "Try it in the
// Playground"; insurance-claim: a TypeSafe cookbook notebook's "Open this
// claim + rubric in the TypeSafe playground"; entity-pair: an entity
// resolution cookbook page's "Open this pair + questions"; skill-shortlist:
// a skill-routing cookbook page's "open this shortlist and its questions"
// link, model jev-1.12). gen.js writes their decoded
// JSON to *.decoded.json, and export-links.json: for wire requests, the
// link the Playground's own builder would make (JSON.stringify(state, null,
// 2) or the state string, JSON.stringify(questions, null, 2)).
const lz = require("lz-string");
const fs = require("fs");
for (const f of ["intent-routing", "insurance-claim", "entity-pair", "skill-shortlist"]) {
  const link = fs.readFileSync(f + ".link", "utf8").trim();
  fs.writeFileSync(f + ".decoded.json", lz.decompressFromEncodedURIComponent(link.split("#share/")[1]));
}
const requests = [
  JSON.parse(fs.readFileSync("../assistant-runtime.json", "utf8")),
  {model: "jev-1.13.0", state: "Help! My payouts have been failing for 3 days — « urgent » <b>&</b>",
   questions: {is_urgent: {type: "noul", instructions: "Does this convey urgency?"},
               tone: {type: "score", instructions: "How calm is it?", criteria: ["calm", "tense", "panicked"]}}},
];
const out = requests.map((r) => ({
  request: {model: r.model || "jev-latest", state: r.state, questions: r.questions},
  link: "https://console.typesafe.ai/playground#share/" + lz.compressToEncodedURIComponent(JSON.stringify({
    apiVersion: "v1",
    documentText: typeof r.state === "string" ? r.state : JSON.stringify(r.state, null, 2),
    promptsText: JSON.stringify(r.questions, null, 2),
    selectedModels: [r.model || "jev-latest"],
  })),
}));
fs.writeFileSync("export-links.json", JSON.stringify(out, null, 1) + "\n");
