#!/usr/bin/env python3
"""Writes each product's golden-transcript scenarios (Apps/<Folder>/Transcripts/*.play) from its
Apps/<Folder>/Transcripts/scenarios.json: the happy path, skip, back and a kill at each step,
returning users, replay and reset, and the product's own cases ("special"). Scenarios written by
hand beside them (a .play the JSON does not name) are kept.

    python3 scripts/make-scenarios.py [PRODUCT ...]     (default: every product)

scripts/regen-product runs this and then records what the scenarios print; after changing a flow,
run that and review the diff.

scenarios.json:
    setup      lines before the flow's first card
    steps      each step: {"step": id, "lines": [lines that complete it], "canSkip", "canGoBack"}
    special    name -> lines: the product's own cases"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from products import products  # noqa: E402


def write(folder, name, lines, title):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name + ".play"), "w") as f:
        f.write(f"# {title}\n" + "\n".join(lines) + "\n")


def make(product):
    spec_path = os.path.join(product.transcripts, "scenarios.json")
    if not os.path.exists(spec_path):
        print(f"{product}: no {os.path.relpath(spec_path)}; scripts/new-product writes one to start from", file=sys.stderr)
        return False
    spec = json.load(open(spec_path))
    folder = product.transcripts
    setup = spec["setup"]
    steps = [(s["step"], s["lines"], s.get("canSkip", False), s.get("canGoBack", False)) for s in spec["steps"]]
    done = [line for _, lines, _, _ in steps for line in lines]
    write(folder, "happy-path", setup + done + ["status"], "The whole flow, start to finish")
    for index, (step, lines, can_skip, can_back) in enumerate(steps):
        prefix = setup + [l for _, ls, _, _ in steps[:index] for l in ls]
        number = f"{index + 1:02d}-{step}"
        if can_skip:
            write(folder, f"skip-at-{number}", prefix + ["skip", "status"], f"Skip at {step}")
        if can_back and index > 0:
            write(folder, f"back-at-{number}", prefix + ["back", "show"] + steps[index - 1][1] + ["show"],
                  f"Back at {step}, then forward again")
        write(folder, f"kill-at-{number}", prefix + ["#! kill", "launch", "status"],
              f"Killed at {step}, then relaunched: the flow is where its interruption policy says")
    write(folder, "returning-after-completion", setup + done + ["#! restart", "launch", "status"],
          "A returning user after completing the flow")
    if any(s[2] for s in steps):
        write(folder, "returning-after-skip", setup + ["skip", "#! restart", "launch", "status"],
              "A returning user after skipping the flow")
    write(folder, "replay-after-completion", setup + done + ["replay", "status"],
          "Replay after completion (refused where the flow is not replayable)")
    write(folder, "reset-after-completion", setup + done + ["reset", "launch", "status"],
          "Debug reset after completion, then a launch")
    for name, lines in spec.get("special", {}).items():
        write(folder, name, lines, name.replace("-", " ").capitalize())
    return True


if __name__ == "__main__":
    ok = all([make(p) for p in products(sys.argv[1:])])
    sys.exit(0 if ok else 1)
