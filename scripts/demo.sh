#!/usr/bin/env bash
# Replays a fixture transcript offline in a scratch project: a scripted model,
# the real loop, real tools and real Claude Code hook scripts (a bash
# validator that blocks `rm -rf` with exit 2, an audit logger), and prints the
# session log followed by its human rendering.
#
# DSH=/path/to/dsh runs that binary (an installed one) instead of building.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${DSH:-}" ]; then
  dsh=$DSH
else
  cargo build --quiet --manifest-path "$repo/Cargo.toml"
  dsh="${CARGO_TARGET_DIR:-$repo/target}/debug/dsh"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/.claude"
cp "$repo/fixtures/claude/scenarios/bash_validator.settings.json" "$scratch/.claude/settings.json"
cd "$scratch"
export HOOKS="$repo/fixtures/claude/hooks"
"$dsh" replay "$repo/fixtures/claude/scenarios/bash_validator.json" --out session.jsonl
cat session.jsonl
echo
"$dsh" log session.jsonl
