#!/usr/bin/env bash
# Hook dispatch overhead, measured end to end in one run.
#
# In a scratch project, `dsh replay` runs a fixture with 50 bash calls
# (`true`), each guarded by two Claude Code PreToolUse hooks that run `true`:
# 100 hook runs. The same replay without hooks is the baseline, so
#   dispatch overhead = replay with hooks - replay without hooks
# is what the 100 hook runs cost dsh, everything included (payload building,
# records in the session log, spawn, capture, reap). It is set side by side
# with 100 raw `SHELL -c true` spawns from a shell loop (SHELL being the
# shell the dialect runs hooks in: /bin/sh for Claude Code, /bin/bash for
# Codex and Gemini CLI, as the real tools do), in the same shape as
# dsh runs them (the two hooks of a call run in parallel: 50 parallel pairs),
# and, for reference, one after another; target ratio <= 1.3 against pairs.
# Rounds are interleaved so machine noise hits every variant alike; medians
# are reported.
#
#   ./scripts/dispatch-overhead.sh [ROUNDS]     (default 7; builds dsh --release)
#
# DIALECT=claude|codex|gemini (default claude) picks whose two hooks guard
# each call (Claude Code PreToolUse, Codex PreToolUse, Gemini CLI
# BeforeTool); DSH=/path/to/dsh uses that binary instead of building one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-7}
dialect=${DIALECT:-claude}
case $dialect in
  claude) hook_shell=/bin/sh ;;
  *) hook_shell=/bin/bash ;;
esac
if [ -n "${DSH:-}" ]; then
  dsh=$DSH
else
  cargo build --quiet --release --bin dsh --manifest-path "$repo/Cargo.toml"
  dsh="${CARGO_TARGET_DIR:-$repo/target}/release/dsh"
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
hooked="$scratch/hooked"
plain="$scratch/plain"
mkdir -p "$plain"
# Two distinct handlers (identical commands would be deduplicated).
case $dialect in
  claude)
    mkdir -p "$hooked/.claude"
    cat > "$hooked/.claude/settings.json" <<'JSON'
{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [
  { "type": "command", "command": "true # first" },
  { "type": "command", "command": "true # second" } ] } ] } }
JSON
    ;;
  codex)
    mkdir -p "$hooked/.codex"
    cat > "$hooked/.codex/hooks.json" <<'JSON'
{ "hooks": { "PreToolUse": [ { "matcher": "Bash", "hooks": [
  { "type": "command", "command": "true # first" },
  { "type": "command", "command": "true # second" } ] } ] } }
JSON
    ;;
  gemini)
    mkdir -p "$hooked/.gemini" "$scratch/.gemini"
    cat > "$hooked/.gemini/settings.json" <<'JSON'
{ "hooks": { "BeforeTool": [ { "matcher": "run_shell_command", "hooks": [
  { "type": "command", "command": "true # first" },
  { "type": "command", "command": "true # second" } ] } ] } }
JSON
    printf '{ "%s": "TRUST_FOLDER" }\n' "$hooked" > "$scratch/.gemini/trustedFolders.json"
    ;;
  *) echo "DIALECT must be claude, codex or gemini" >&2; exit 2 ;;
esac
fixture="$scratch/fixture.json"
{
  printf '{ "description": "50 bash calls", "prompts": ["go"], "model": ['
  for i in $(seq 1 50); do
    printf '{ "tool_calls": [ { "name": "bash", "arguments": { "command": "true" } } ] },'
  done
  printf '{ "text": "done" } ] }\n'
} > "$fixture"

now_ns() { date +%s%N; }

replay_ns() {
  local dir=$1 start end
  start=$(now_ns)
  (cd "$dir" && HOME="$scratch" "$dsh" replay "$fixture" --max-steps 100 --out "$scratch/session.jsonl")
  end=$(now_ns)
  echo $((end - start))
}

raw_ns() {
  local start end
  start=$(now_ns)
  for _ in $(seq 1 100); do "$hook_shell" -c true; done
  end=$(now_ns)
  echo $((end - start))
}

raw_pairs_ns() {
  local start end
  start=$(now_ns)
  for _ in $(seq 1 50); do "$hook_shell" -c true & "$hook_shell" -c true & wait; done
  end=$(now_ns)
  echo $((end - start))
}

# Sanity: the hooked replay really runs 100 hooks, the plain one none.
replay_ns "$hooked" > /dev/null
hook_runs=$(grep -c '"type":"hook/result"' "$scratch/session.jsonl" || true)
bash_runs=$(grep -c '"type":"tool/result"' "$scratch/session.jsonl" || true)
if [ "$hook_runs" != 100 ] || [ "$bash_runs" != 50 ]; then
  echo "expected 100 hook runs and 50 bash calls, got $hook_runs and $bash_runs" >&2
  exit 1
fi
replay_ns "$plain" > /dev/null
raw_ns > /dev/null

with=(); without=(); raw=(); pairs=()
for _ in $(seq 1 "$rounds"); do
  with+=("$(replay_ns "$hooked")")
  without+=("$(replay_ns "$plain")")
  pairs+=("$(raw_pairs_ns)")
  raw+=("$(raw_ns)")
done

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ms() { awk -v ns="$1" 'BEGIN { printf "%.1f ms", ns / 1e6 }'; }

m_with=$(median "${with[@]}")
m_without=$(median "${without[@]}")
m_raw=$(median "${raw[@]}")
m_pairs=$(median "${pairs[@]}")
overhead=$((m_with - m_without))
echo "## hook dispatch overhead ($dialect hooks), $rounds interleaved rounds (medians)"
echo "| variant | time |"
echo "|---|---|"
echo "| dsh replay, 50 bash calls, 2 $dialect pre-tool hooks each (100 hook runs) | $(ms "$m_with") |"
echo "| dsh replay, same fixture, no hooks | $(ms "$m_without") |"
echo "| dispatch overhead of the 100 hook runs (difference) | $(ms "$overhead") |"
echo "| 100 raw \`$hook_shell -c true\` spawns, 50 parallel pairs (shell loop) | $(ms "$m_pairs") |"
echo "| 100 raw \`$hook_shell -c true\` spawns, one after another (shell loop) | $(ms "$m_raw") |"
awk -v o="$overhead" -v r="$m_pairs" 'BEGIN { printf "ratio dispatch overhead / raw spawns in pairs: %.2fx (target <= 1.3x)\n", o / r }'
awk -v o="$overhead" -v r="$m_raw" 'BEGIN { printf "ratio dispatch overhead / raw spawns one by one: %.2fx\n", o / r }'
