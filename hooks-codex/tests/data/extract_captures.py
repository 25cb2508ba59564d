#!/usr/bin/env python3
"""Regenerates captures.json from the Codex 0.169 oracle captures.

For every `<scenario>__app` capture with a hook_runs.txt it lists each hook
invocation (event, stdin exactly as received), the answer the recording hook
gave (replaying oracle/hook.py's behavior.json rules, including `times`), and
how Codex classified the run (status + entries from hook_runs.txt).
Usage: extract_captures.py <captures dir> > captures.json
"""
import json, os, re, sys

root = sys.argv[1]
out = {"runs": [], "stdin": []}
for name in sorted(os.listdir(root)):
    d = os.path.join(root, name)
    if not name.endswith("__app") or not os.path.exists(os.path.join(d, "hook_runs.txt")):
        continue
    scenario = json.load(open(os.path.join(d, "scenario.json")))
    behavior = json.load(open(os.path.join(d, "behavior.json")))
    hooks = json.load(open(os.path.join(d, "hooks.json")))
    runs = []
    for line in open(os.path.join(d, "hook_runs.txt")).read().splitlines():
        m = re.match(r"(\w+)\s+status=(\w+)\s+entries=(.*)$", line)
        if m:
            runs.append({"event": m.group(1), "status": m.group(2), "entries": json.loads(m.group(3))})
    counts = {}
    invocations = []
    if any("event" not in h for h in hooks):
        continue
    for h in hooks:
        event, label = h["event"], h.get("label")
        spec = (behavior.get(f"{event}@{label}") if label else None) or behavior.get(event) or behavior.get("*") or {}
        n = counts.get(event, 0)
        counts[event] = n + 1
        times = spec.get("times")
        active = bool(spec) and (times is None or n < times)
        answer = {"exit": 0, "stdout": "", "stderr": "", "timed_out_after": None}
        if active:
            out_ = spec.get("stdout", "")
            answer["stdout"] = out_ if isinstance(out_, str) else json.dumps(out_)
            answer["stderr"] = spec.get("stderr", "")
            answer["exit"] = int(spec.get("exit", 0))
            timeout = scenario.get("timeout")
            if spec.get("sleep") and timeout and spec["sleep"] > timeout and event in scenario.get("timeout_events", scenario["events"]):
                answer["timed_out_after"] = timeout
        invocations.append({"event": event, "label": label, "stdin_raw": h["stdin_raw"], "answer": answer})
    if scenario.get("async"):
        continue
    # Only zip when Codex reported one completion per invocation.
    if len(runs) != len(invocations):
        continue
    for inv, run in zip(invocations, runs):
        expected_event = inv["event"][0].lower() + inv["event"][1:]
        if expected_event != run["event"]:
            break
        out["runs"].append({"scenario": name, **inv, "status": run["status"], "entries": run["entries"]})
for name in ["baseline", "apply_patch", "model_error", "resume", "stop_continue", "permission_approve_for_me_allow", "interrupt__app"]:
    path = os.path.join(root, name, "hooks.json")
    if os.path.exists(path):
        for h in json.load(open(path)):
            out["stdin"].append({"scenario": name, "event": h["event"], "stdin_raw": h["stdin_raw"]})
beh = json.load(open(os.path.join(root, "big_context", "behavior.json")))
reqs = json.load(open(os.path.join(root, "big_context", "requests.json")))
dev = [it for r in reqs if "body" in r for it in r["body"]["input"] if it.get("role") == "developer" and "content" in it]
out["big_context"] = {
    "context": beh["UserPromptSubmit"]["stdout"]["hookSpecificOutput"]["additionalContext"],
    "model_text": dev[0]["content"][0]["text"],
}
json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
