#!/usr/bin/env bash
# Peak memory (RSS) of `dsh replay` for long sessions and chatty hooks.
#
#   ./scripts/memory-figures.sh [DSH]     (default: target/debug/dsh, built)
#
# 1. Fixtures of N one-call steps (N = 50, 200, 800), replayed with
#    --requests-out: peak RSS, time, log and requests sizes.
# 2. Twenty Claude Code PreToolUse hooks each printing 1.4 MB, over ten
#    bash calls: peak RSS, log size, spill directory size.
# 3. One hook printing 2 MB of NUL bytes, over ten calls: the same.
# Peak RSS is GNU time's "maximum resident set size" (/usr/bin/time).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 1 ]; then
  dsh=$1
else
  cargo build --quiet --bin dsh --manifest-path "$repo/Cargo.toml"
  dsh="${CARGO_TARGET_DIR:-$repo/target}/debug/dsh"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" DSH_HOME="$scratch/home/.dsh"
mkdir -p "$HOME" "$scratch/steps" "$scratch/chatty/.claude" "$scratch/nul/.claude"

steps_fixture() {
  printf '{ "description": "%s one-call steps", "prompts": ["go"], "model": [' "$1"
  for i in $(seq 1 "$1"); do
    printf '{ "tool_calls": [ { "name": "bash", "arguments": { "command": "echo step %s" } } ] },' "$i"
  done
  printf '{ "text": "done" } ] }\n'
}

peak() { # DIR LABEL ARGS... : runs dsh in DIR, prints "LABEL: RSS KiB, seconds"
  local dir=$1 label=$2
  shift 2
  (cd "$dir" && /usr/bin/time -f "$label: peak RSS %M KiB, %e s" "$dsh" "$@" > /dev/null)
}

for n in 50 200 800; do
  steps_fixture "$n" > "$scratch/f$n.json"
  peak "$scratch/steps" "replay $n steps" replay "$scratch/f$n.json" --max-steps 2000 \
    --out "$scratch/s$n.jsonl" --requests-out "$scratch/r$n.jsonl" --session-id s1
  echo "  log $(stat -c %s "$scratch/s$n.jsonl") bytes, requests $(stat -c %s "$scratch/r$n.jsonl") bytes"
done

{
  printf '{ "description": "ten calls", "prompts": ["go"], "model": ['
  for i in $(seq 1 10); do
    printf '{ "tool_calls": [ { "name": "bash", "arguments": { "command": "echo %s" } } ] },' "$i"
  done
  printf '{ "text": "done" } ] }\n'
} > "$scratch/f10.json"
{
  printf '{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": ['
  for i in $(seq 1 20); do
    [ "$i" -gt 1 ] && printf ','
    printf '{ "type": "command", "command": "head -c 1400000 /dev/zero | tr %s a # %s" }' "'\\\\0'" "$i"
  done
  printf '] } ] } }\n'
} > "$scratch/chatty/.claude/settings.json"
cat > "$scratch/nul/.claude/settings.json" <<'JSON'
{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [
  { "type": "command", "command": "head -c 2000000 /dev/zero" } ] } ] } }
JSON
for case in chatty nul; do
  peak "$scratch/$case" "$case hooks" replay "$scratch/f10.json" --out "$scratch/$case.jsonl" --session-id s1
  spill=0
  [ -d "$scratch/$case.hook-output" ] && spill=$(du -sb "$scratch/$case.hook-output" | cut -f1)
  echo "  log $(stat -c %s "$scratch/$case.jsonl") bytes, spill files $spill bytes"
done
