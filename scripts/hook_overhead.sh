#!/usr/bin/env bash
# Hook dispatch overhead, measured in one run: `dsh replay` of 50 bash calls
# with two `true` PreToolUse hooks each (distinct texts: identical commands
# run once, as in Claude Code), against the same replay with no
# hooks, against 100 raw `sh -c true` spawns.
#   overhead ratio = (replay with hooks - replay without) / (100 raw spawns)
# Usage: scripts/hook_overhead.sh [path/to/dsh]   (default: target/debug/dsh)
set -euo pipefail
dsh=$(realpath "${1:-target/debug/dsh}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$work/fixture.json" <<'PY'
import json, sys
turns = [{"text": "", "tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]} for _ in range(50)]
turns.append({"text": "done"})
json.dump({"description": "50 bash calls", "prompts": ["go"], "model": turns}, open(sys.argv[1], "w"))
PY
mkdir -p "$work/hooks/.claude" "$work/none" "$work/home"
cat > "$work/hooks/.claude/settings.json" <<'JSON'
{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "true"},
  {"type": "command", "command": "true # second"}
]}]}}
JSON
now() { date +%s.%N; }
replay() {
  (cd "$1" && HOME="$work/home" DSH_HOME="$work/home/.dsh" "$dsh" replay "$work/fixture.json" --max-steps 60 >/dev/null)
}
replay "$work/none"; replay "$work/hooks"   # warm up
runs=$(cd "$work/hooks" && HOME="$work/home" DSH_HOME="$work/home/.dsh" "$dsh" replay "$work/fixture.json" --max-steps 60 | grep -c '"hook/invoked"')
[ "$runs" = 100 ] || { echo "expected 100 hook runs, got $runs" >&2; exit 1; }
t0=$(now); replay "$work/hooks"; t1=$(now)
replay "$work/none"; t2=$(now)
for _ in $(seq 100); do sh -c true; done; t3=$(now)
python3 - "$t0" "$t1" "$t2" "$t3" <<'PY'
import sys
t0, t1, t2, t3 = map(float, sys.argv[1:])
hooks, none, raw = t1 - t0, t2 - t1, t3 - t2
print(f"replay with 2x50 hooks: {hooks*1e3:.0f} ms; without hooks: {none*1e3:.0f} ms; "
      f"100 raw sh -c true: {raw*1e3:.0f} ms; overhead ratio: {(hooks - none) / raw:.2f}x")
PY
