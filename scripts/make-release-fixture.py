#!/usr/bin/env python3
"""Freezes the databases a release writes, as a test fixture every later build must read.

    swift build && python3 scripts/make-release-fixture.py 0.5.0

writes Tests/CLITests/Releases/<VERSION>/{midflow,finished,skipped}.sqlite (each holding all five
products, users `ana` and `ben`, with their journals) and manifest.json: for each file, product and
user, every flow's status and step as stored, and the card after a `launch` on a copy (what the
release itself resumes). `ReleaseFixtureTests` checks later builds against it. Never regenerate
the fixture of a release that has shipped: add the new release's beside it.
"""
import json, os, shutil, sqlite3, subprocess, sys, tempfile

VERSION = sys.argv[1]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Tests", "CLITests", "Releases", VERSION)
BIN = os.path.join(ROOT, ".build", "debug")

# Per product: the script that leaves each user mid-flow, finished and skipped.
SCRIPTS = {
    "finite": {
        "midflow": "setBirthDate date=1990-05-01\nlaunch\nwait 2\nnext\ntapCurrentWeek\n",
        "finished": "setBirthDate date=1990-05-01\nlaunch\nwait 2\nnext\ntapCurrentWeek\nswipeToChapters\nnext\n"
        "dismissPhase\nlongPressWeek week=100\nsaveMark note=fixture\nwait 3\n",
        "skipped": "launch\nwait 2\nskip\n",
    },
    "lockedin": {
        "midflow": "launch\nnext\nchooseApps apps=Instagram,TikTok\nnext\n",
        "finished": "launch\nnext\nchooseApps apps=Instagram\nnext\nselectDifficulty difficulty=hard\nnext\n"
        "grantScreenTime\ngrantHealth\nnext\nletsGo\n",
        "skipped": "launch\nnext\n",
    },
    "carrierwave": {
        "midflow": "launch\nnext\nnext\n",
        "finished": "launch\nnext\nnext\nconnect username=W1AW password=fixture-secret\nnext\nnext\nvisit potaActivations\nnext\n",
        "skipped": "launch\nskip\n",
    },
    "growth": {
        "midflow": "completeOnboarding\nvisit dashboard\nnext\n",
        "finished": "completeOnboarding\nvisit dashboard\nnext\nnext\nnext\nnext\nnext\n",
        "skipped": "completeOnboarding\nvisit dashboard\nskip\n",
    },
    "moodtracker": {
        "midflow": "launch\nwait 0.5\nswipeUp\nnext\n",
        "finished": "launch\nwait 0.5\nnext\nnext\nnext\n",
        "skipped": "launch\nwait 0.5\nskip\n",
    },
}
USERS = ["ana", "ben"]


def run(product, db, args, stdin=None, folder=None):
    env = dict(os.environ, ONBOARDING_DB=db, ONBOARDING_CLOCK="virtual")
    result = subprocess.run([os.path.join(BIN, product)] + args, input=stdin, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{product} {args}: {result.stderr}")
    return result.stdout


def flows(product, db, user, folder):
    status = json.loads(run(product, db, ["status", "--json", "--user", user], folder=folder))
    return {flow["id"]: {"status": flow["status"], "step": flow["step"]} for flow in status["flows"]}


def main():
    if os.path.exists(OUT):
        sys.exit(f"{OUT} exists: the fixture of a release is never regenerated")
    os.makedirs(OUT)
    manifest = {"release": VERSION, "files": {}}
    for state in ["midflow", "finished", "skipped"]:
        folder = tempfile.mkdtemp()
        db = os.path.join(folder, f"{state}.sqlite")
        entry = {}
        for product, scripts in SCRIPTS.items():
            entry[product] = {}
            # Four products keep their flows per install: one user plays, the other shares the
            # install. Growth's tour is per account: both play.
            for user in USERS if product == "growth" else USERS[:1]:
                run(product, db, ["play", "--user", user], stdin=scripts[state], folder=folder)
            for user in USERS:
                # What this release does on the next launch, on a copy.
                probe = os.path.join(folder, "probe.sqlite")
                shutil.copy(db, probe)
                for suffix in ["-wal", "-shm"]:
                    if os.path.exists(db + suffix):
                        shutil.copy(db + suffix, probe + suffix)
                launched = json.loads(run(product, probe, ["launch", "--json", "--user", user], folder=folder))
                card = launched.get("card")
                entry[product][user] = {
                    "stored": flows(product, db, user, folder),
                    "afterLaunch": {"flow": card["flow"], "step": card["step"]} if card else None,
                }
                for suffix in ["", "-wal", "-shm"]:
                    if os.path.exists(probe + suffix):
                        os.remove(probe + suffix)
            rows = json.loads(run(product, db, ["report", "--json"], folder=folder))
            entry[product]["journalRows"] = rows["journalRows"]
        connection = sqlite3.connect(db)
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.execute("PRAGMA journal_mode=DELETE")
        connection.execute("VACUUM")
        connection.close()
        shutil.copy(db, os.path.join(OUT, f"{state}.sqlite"))
        manifest["files"][f"{state}.sqlite"] = entry
    with open(os.path.join(OUT, "manifest.json"), "w") as file:
        json.dump(manifest, file, indent=1, sort_keys=True)
        file.write("\n")
    print(f"wrote {OUT}")


main()
