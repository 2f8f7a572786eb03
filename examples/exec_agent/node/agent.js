#!/usr/bin/env node
// An issue-triage agent in Node.js, run by heartbeat as its step:
//   exec = "node agent.js"   (heartbeat.toml)   or   heartbeat tick --exec "node agent.js"
//
// Each heartbeat it labels the next few issues of issues.json with simple
// keyword rules (a stand-in for a model call, hence the small cost it
// reports). Everything it tells heartbeat goes through the JSON-lines file
// named by HEARTBEAT_ACTIONS; it reads its saved data from HEARTBEAT_DATA and
// recovery text or a human's note from HEARTBEAT_INSTRUCTIONS. Only Node's
// standard library is used.
"use strict";

const fs = require("node:fs");

const PER_HEARTBEAT = 2;
const COST_PER_LABEL = 0.0004; // what the model call would cost, in dollars; [budget] caps the day
const RULES = [
  ["bug", /crash|fails|error|traceback|never stop/i],
  ["docs", /readme|typo|docs?\b/i],
  ["question", /\?\s*$|how do i/i],
  ["enhancement", /support|would be nice|please add/i],
];

function emit(line) {
  fs.appendFileSync(process.env.HEARTBEAT_ACTIONS, JSON.stringify(line) + "\n");
}

function label(issue) {
  const text = `${issue.title}\n${issue.body}`;
  for (const [name, pattern] of RULES) {
    if (pattern.test(text)) return name;
  }
  return null;
}

function main() {
  // What we saved last time ({} on the first heartbeat).
  const data = JSON.parse(fs.readFileSync(process.env.HEARTBEAT_DATA, "utf8"));
  data.labels = data.labels || {};
  data.skipped = data.skipped || [];

  const instructions = process.env.HEARTBEAT_INSTRUCTIONS || "";
  if (instructions) {
    console.log(`  [node agent] instructions: ${instructions.split("\n")[0]}`);
    emit({ tool: "acknowledge", args: { instructions }, output: "noted; will follow on this heartbeat" });
  }

  const issues = JSON.parse(fs.readFileSync("issues.json", "utf8")); // heartbeat runs us in the config's folder
  const done = new Set([...Object.keys(data.labels).map(Number), ...data.skipped]);
  const todo = issues.filter((issue) => !done.has(issue.id)).slice(0, PER_HEARTBEAT);
  if (todo.length === 0) {
    // Nothing to triage is not being stuck: no progress sample this heartbeat.
    console.log("  [node agent] the queue is empty");
    return;
  }

  for (const issue of todo) {
    if (!issue.body.trim()) {
      // A failed tool call is an errored action; heartbeat's error_rate
      // detector would notice if most calls started failing.
      emit({ tool: "label_issue", args: { id: issue.id }, error: `issue #${issue.id} has no description` });
      data.skipped.push(issue.id);
      continue;
    }
    const name = label(issue) || "needs-triage";
    data.labels[issue.id] = name;
    emit({
      tool: "label_issue",
      args: { id: issue.id, label: name },
      output: `labelled #${issue.id} "${issue.title}" as ${name}`,
      cost: COST_PER_LABEL,
    });
  }

  const handled = Object.keys(data.labels).length + data.skipped.length;
  emit({ progress: handled }); // issues handled: only real triage moves it
  emit({ data }); // replaces the saved data; the next heartbeat reads it back
  console.log(`  [node agent] ${handled}/${issues.length} issues triaged`);
}

main();
