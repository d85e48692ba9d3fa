#!/usr/bin/env python3
# Regenerates the "Sample session" blocks of Docs/<Product>.md from the built executables:
# swift build && python3 scripts/regen-doc-samples.py
import subprocess, re, os, tempfile
products = [("Finite","finite"),("LockedIn","lockedin"),("CarrierWave","carrierwave"),("Growth","growth"),("MoodTracker","moodtracker")]
for folder, exe in products:
    d = tempfile.mkdtemp()
    env = dict(os.environ, ONBOARDING_DB=f"{d}/{exe}.sqlite", ONBOARDING_CLOCK="virtual")
    env.pop("XDG_DATA_HOME", None)
    out = subprocess.run([f".build/debug/{exe}", "play", f"Apps/{folder}/sample-session.txt"], env=env, capture_output=True, text=True)
    text = out.stdout.replace(d, "/tmp/example")
    page = f"Docs/{folder}.md"
    doc = open(page).read()
    m = re.search(r"(## Sample session.*?\nprints\n\n```\n)(.*?)(\n```\n)", doc, re.S)
    if not m:
        print("no sample block in", page); continue
    doc = doc[:m.start(2)] + text.rstrip("\n") + doc[m.end(2):]
    open(page, "w").write(doc)
    print(page, "updated", out.returncode, out.stderr[:200])
