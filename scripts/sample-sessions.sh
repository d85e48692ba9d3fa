#!/usr/bin/env bash
# Plays each product's Apps/<Product>/sample-session.txt on a fresh database with the virtual clock
# and prints what it shows: the sample sessions in Docs/<Product>.md come from here.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for pair in Finite:finite LockedIn:lockedin CarrierWave:carrierwave Growth:growth MoodTracker:moodtracker; do
  folder=${pair%%:*} executable=${pair##*:}
  [ $# -gt 0 ] && [ "$1" != "$executable" ] && continue
  echo "=== $executable play Apps/$folder/sample-session.txt"
  ONBOARDING_DB="$dir/$executable.sqlite" ONBOARDING_CLOCK=virtual ".build/debug/$executable" play "Apps/$folder/sample-session.txt"
done
