#!/usr/bin/env python3
"""Writes the golden-transcript scenarios (Tests/CrossAppRegressionTests/Transcripts/<app>/*.play)
from each product's happy path: skip, back and a kill at each step, returning users, replay and
reset, and each product's own cases. Hand-written scenarios beside them are kept. After changing a
flow, run this, then `RECORD_TRANSCRIPTS=1 swift test --filter TranscriptTests`, and review the diff."""
import os

ROOT = os.path.join(os.path.dirname(__file__), "..", "Tests", "CrossAppRegressionTests", "Transcripts")

# For each product: lines before the first card, then each step with the lines that complete it,
# whether it can be skipped and gone back from.
PRODUCTS = {
    "finite": dict(
        setup=["do setBirthDate date=1990-05-01", "launch", "wait 1.5"],
        steps=[("gridIntro", ["next"], True, False),
               ("currentWeek", ["tapCurrentWeek"], True, False),
               ("viewModesIntro", ["swipeToChapters"], True, False),
               ("chaptersExplanation", ["next"], True, False),
               ("addPhase", ['savePhase name="High school" startYear=2004'], True, False),
               ("markWeek", ["longPressWeek week=1200", 'saveMark note="first job"'], True, False),
               ("complete", ["wait 2.5"], False, False)]),
    "lockedin": dict(
        setup=["launch"],
        steps=[("welcome", ["next"], False, False),
               ("appSelection", ["chooseApps apps=Instagram,TikTok", "next"], False, True),
               ("difficulty", ["selectDifficulty difficulty=hard", "next"], False, True),
               ("permissions", ["grantScreenTime", "grantHealth", "next"], False, True),
               ("activation", ["letsGo"], False, False)]),
    "carrierwave": dict(
        setup=["launch"],
        steps=[("welcome", ["next"], True, False),
               ("howSyncWorks", ["next"], True, False),
               ("connectQRZ", ["connect username=W1AW password=example-password"], True, False),
               ("moreServices", ["next"], True, False),
               ("feedback", ["next"], True, False)]),
    "growth": dict(
        setup=["visit dashboard", "do completeOnboarding", "visit dashboard"],
        steps=[("dashboard", ["next"], True, False),
               ("logSession", ["next"], True, True),
               ("progress", ["next"], True, True),
               ("routines", ["next"], True, True),
               ("profile", ["next"], True, True)]),
    "moodtracker": dict(
        setup=["launch", "wait 0.5"],
        steps=[("swipeToSelect", ["next"], True, False),
               ("viewHistory", ["next"], True, False),
               ("allSet", ["next"], False, False)]),
}

# Each product's own cases, as the issue lists them.
SPECIAL = {
    "lockedin": {
        "two-users-one-install": ["#! args: --user alice", "launch", "next", "chooseApps apps=Instagram,Instagram",
                                  "next", "next", "grantScreenTime", "next", "letsGo", "#! restart",
                                  "#! args: --user bob", "launch", "status"],
        **{f"permission-{p}-{outcome}": [f"#! args: --answer {p}=denied"] if outcome == "denied" else
           ([f"#! args: --permission {p}=granted"] if outcome == "already-granted" else [])
           for p in ["screenTime", "health"] for outcome in ["granted", "denied", "already-granted"]},
    },
    "carrierwave": {
        "fresh-install": ["launch --app-version 2.5", "status", "#! restart", "launch --app-version 2.5", "status"],
        "update-prompt": ["launch --app-version 2.0", "skip", "#! restart", "launch --app-version 2.5", "takeTour",
                          "next", "next", "status"],
        "update-prompt-dismissed": ["launch --app-version 2.0", "skip", "#! restart", "launch --app-version 2.5",
                                    "dismiss", "#! restart", "launch --app-version 2.5", "status"],
        "upgrade-from-before-the-tour": ["launch --app-version 1.9", "status", "#! restart",
                                         "launch --app-version 2.5", "status"],
        "offline-then-online": ["#! args: --offline", "launch", "next", "next",
                                "connect username=W1AW password=example-password", "next", "#! restart",
                                "#! args:", "launch", "status"],
        # A visit while another mini-tour shows is ignored; the next real visit shows its own.
        "mini-tours-stacked": ["launch", "skip", "visit potaActivations", "visit challenges", "next", "next",
                               "visit challenges", "next", "status"],
        "mini-tour-before-the-intro": ["visit challenges", "launch", "visit challenges", "skip",
                                       "visit challenges", "status"],
        "qrz-later-online": ["launch", "next", "next", "next", "next", "next", "status"],
        "qrz-refused-then-retried": ["#! args: --answer connection=denied", "launch", "next", "next",
                                     "connect username=W1AW password=wrong-password", "status", "#! restart",
                                     "#! args:", "connect username=W1AW password=example-password", "status"],
        "show-app-tour-with-an-account": ["launch", "next", "next",
                                          "connect username=W1AW password=example-password", "skip", "replay",
                                          "next", "next", "next", "next", "status"],
        "update-prompts-by-version": ["launch --app-version 1.9", "skip", "#! restart", "launch --app-version 2.0",
                                      "takeTour", "next", "visit statBox", "#! restart",
                                      "launch --app-version 2.5.1", "skip", "#! restart",
                                      "launch --app-version 2.6", "#! restart", "launch --app-version 2.0",
                                      "status"],
        "update-skipped-major": ["launch --app-version 1.9", "skip", "#! restart", "launch --app-version 2.5",
                                 "takeTour", "next", "next", "next", "status"],
        "mini-tour-kill": ["launch", "skip", "visit potaSettings", "next", "#! kill", "launch", "next", "next",
                           "status"],
    },
    "growth": {
        "offline-then-online": ["#! args: --offline", "visit dashboard", "do completeOnboarding", "visit dashboard",
                                "skip", "status", "#! restart", "#! args:", "launch", "status"],
        "before-onboarding": ["visit dashboard", "status"],
        "previous-is-back": ["do completeOnboarding", "visit dashboard", "next", "previous", "show"],
    },
    "moodtracker": {
        "swipes-during-tutorial": ["launch", "wait 0.5", "swipeLeft", "swipeUp", "swipeRight", "next", "swipeLeft"],
        "swipes-after-tutorial": ["launch", "wait 0.5", "next", "next", "next", "swipeUp", "status"],
        "timer-before-the-tutorial": ["launch", "show", "wait 0.3", "show", "wait 0.2", "show"],
    },
    "finite": {
        "timers": ["do setBirthDate date=1990-05-01", "launch", "wait 1", "show", "wait 0.5", "next",
                   "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase", "longPressWeek week=1200",
                   "saveMark", "wait 2", "show", "wait 0.5", "status"],
        "no-birth-date": ["launch", "wait 1.5", "next", "show"],
        "kill-with-the-week-sheet-open": ["do setBirthDate date=1990-05-01", "launch", "wait 1.5", "next",
                                          "tapCurrentWeek", "swipeToChapters", "next", "dismissPhase",
                                          "longPressWeek week=1200", "#! kill", "launch", "saveMark", "#! restart",
                                          "longPressWeek week=1200", "saveMark", "status"],
    },
}


def write(app, name, lines, title):
    folder = os.path.join(ROOT, app)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".play"), "w") as f:
        f.write(f"# {title}\n" + "\n".join(lines) + "\n")


for app, spec in PRODUCTS.items():
    setup, steps = spec["setup"], spec["steps"]
    done = [line for _, lines, _, _ in steps for line in lines]
    write(app, "happy-path", setup + done + ["status"], "The whole flow, start to finish")
    for index, (step, lines, can_skip, can_back) in enumerate(steps):
        prefix = setup + [l for _, ls, _, _ in steps[:index] for l in ls]
        number = f"{index + 1:02d}-{step}"
        if can_skip:
            write(app, f"skip-at-{number}", prefix + ["skip", "status"], f"Skip at {step}")
        if can_back:
            write(app, f"back-at-{number}", prefix + ["back", "show"] + steps[index - 1][1] + ["show"],
                  f"Back at {step}, then forward again")
        write(app, f"kill-at-{number}", prefix + ["#! kill", "launch", "status"],
              f"Killed at {step}, then relaunched: the flow is where its interruption policy says")
    write(app, "returning-after-completion", setup + done + ["#! restart", "launch", "status"],
          "A returning user after completing the flow")
    skippable = [s for s in steps if s[2]]
    if skippable:
        write(app, "returning-after-skip", setup + ["skip", "#! restart", "launch", "status"],
              "A returning user after skipping the flow")
    write(app, "replay-after-completion", setup + done + ["replay", "status"],
          "Replay after completion (refused where the flow is not replayable)")
    write(app, "reset-after-completion", setup + done + ["reset", "launch", "status"],
          "Debug reset after completion, then a launch")
    for name, lines in SPECIAL.get(app, {}).items():
        if app == "lockedin" and name.startswith("permission-"):
            lines = lines + setup + [l for _, ls, _, _ in steps[:3] for l in ls] + [
                "grantScreenTime", "grantHealth", "next", "status"]
        write(app, name, lines, name.replace("-", " ").capitalize())
