#!/usr/bin/env bash
# Plays each product's Apps/<Folder>/sample-session.txt on a fresh database with the virtual clock
# and prints what it shows (the sample sessions on the product pages come from here; see
# scripts/regen-product). Products as scripts/products.py finds them; name some to play those only.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 scripts/products.py | while read -r folder executable _page; do
  if [ $# -gt 0 ]; then
    wanted=no
    for name in "$@"; do [ "$name" = "$executable" ] || [ "$name" = "$folder" ] && wanted=yes; done
    [ "$wanted" = yes ] || continue
  fi
  echo "=== $executable play Apps/$folder/sample-session.txt"
  ONBOARDING_DB="$dir/$executable.sqlite" ONBOARDING_CLOCK=virtual ".build/debug/$executable" play "Apps/$folder/sample-session.txt"
done
