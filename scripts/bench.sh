#!/usr/bin/env bash
# Benchmarks of the engine, the commit path and the journal rebuild, in a release build, plus the
# time of whole CLI invocations. Figures and the machine they ran on: Docs/Performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product onboarding-bench >/dev/null
swift build -c release --product lockedin >/dev/null
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -m), $(swift --version 2>&1 | head -1)"
.build/release/onboarding-bench

# Whole processes: 50 invocations of `lockedin show` and of an accepted action, each on its own file.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export ONBOARDING_DB="$dir/cli.sqlite" ONBOARDING_CLOCK=virtual
.build/release/lockedin launch >/dev/null
for command in "show" "do chooseApps apps=A"; do
  [ "$command" = "show" ] || .build/release/lockedin do next >/dev/null
  start=$(date +%s%N)
  for _ in $(seq 50); do .build/release/lockedin $command >/dev/null; done
  end=$(date +%s%N)
  printf '%-46s%8d runs %10.1f ms per process\n' "lockedin $command (whole process)" 50 "$(echo "($end - $start) / 50 / 1000000" | bc -l)"
done
