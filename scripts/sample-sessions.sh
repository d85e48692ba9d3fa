#!/usr/bin/env bash
# Plays each product's Apps/<Folder>/sample-session.txt on a fresh database with the virtual clock
# and prints what it shows (the sample sessions on the product pages come from here; see
# scripts/regen-product). Products as scripts/products.py finds them; name some to play those only.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build >/dev/null
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Unknown names are refused by products.py, with the names there are.
python3 - "$@" <<'PY' > "$dir/products"
import sys
sys.path.insert(0, "scripts")
from products import products
for p in products(sys.argv[1:]):
    print(p.folder, p.executable)
PY
while read -r folder executable; do
  echo "=== $executable play Apps/$folder/sample-session.txt"
  ONBOARDING_DB="$dir/$executable.sqlite" ONBOARDING_CLOCK=virtual ".build/debug/$executable" play "Apps/$folder/sample-session.txt"
done < "$dir/products"
