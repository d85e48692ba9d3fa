#!/usr/bin/env bash
# Regenerates the Mermaid diagrams embedded in Docs/<Product>.md from `APP graph` (the flows'
# definitions). A test fails when a committed diagram differs from the generated one.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build >/dev/null
for pair in Finite:finite LockedIn:lockedin CarrierWave:carrierwave Growth:growth MoodTracker:moodtracker; do
  folder=${pair%%:*} executable=${pair##*:}
  python3 - "Docs/$folder.md" ".build/debug/$executable" <<'PY'
import re, subprocess, sys
page, exe = sys.argv[1], sys.argv[2]
text = open(page).read()
ids = re.findall(r'^    (\w+?)_start\(\[', subprocess.run([exe, "graph"], capture_output=True, text=True, check=True).stdout, re.M)
section = "## Diagrams\n\nGenerated from the flow definitions by `" + exe.split("/")[-1] + " graph` (regenerate with `scripts/diagrams.sh`; a test fails when these differ). Solid arrows complete a step, dashed ones skip, dismiss or go back.\n"
for flow in ids:
    diagram = subprocess.run([exe, "graph", "--flow", flow], capture_output=True, text=True, check=True).stdout.strip("\n")
    section += f"\n<!-- graph: {flow} -->\n```mermaid\n{diagram}\n```\n"
if "## Diagrams" in text:
    before, rest = text.split("## Diagrams", 1)
    after = rest[rest.find("\n## "):] if "\n## " in rest else ""
    text = before + section + after
else:
    text = text.rstrip("\n") + "\n\n" + section
open(page, "w").write(text)
PY
done
