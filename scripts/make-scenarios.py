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


GENERATED = ("happy-path", "skip-at-", "back-at-", "kill-at-", "returning-after-", "replay-after-", "reset-after-")


def scenarios(spec):
    """The scenarios the spec makes: name -> (title, lines)."""
    made = {}
    setup = spec["setup"]
    steps = [(s["step"], s["lines"], s.get("canSkip", False), s.get("canGoBack", False)) for s in spec["steps"]]
    done = [line for _, lines, _, _ in steps for line in lines]
    made["happy-path"] = ("The whole flow, start to finish", setup + done + ["status"])
    for index, (step, lines, can_skip, can_back) in enumerate(steps):
        prefix = setup + [l for _, ls, _, _ in steps[:index] for l in ls]
        number = f"{index + 1:02d}-{step}"
        if can_skip:
            made[f"skip-at-{number}"] = (f"Skip at {step}", prefix + ["skip", "status"])
        if can_back and index > 0:
            made[f"back-at-{number}"] = (f"Back at {step}, then forward again",
                                         prefix + ["back", "show"] + steps[index - 1][1] + ["show"])
        made[f"kill-at-{number}"] = (
            f"Killed at {step}, then relaunched: the flow is where its interruption policy says",
            prefix + ["#! kill", "launch", "status"])
    made["returning-after-completion"] = ("A returning user after completing the flow",
                                          setup + done + ["#! restart", "launch", "status"])
    skippable = [index for index, step in enumerate(steps) if step[2]]
    if skippable:
        before = [l for _, ls, _, _ in steps[:skippable[0]] for l in ls]
        made["returning-after-skip"] = ("A returning user after skipping the flow",
                                        setup + before + ["skip", "#! restart", "launch", "status"])
    made["replay-after-completion"] = ("Replay after completion (refused where the flow is not replayable)",
                                       setup + done + ["replay", "status"])
    made["reset-after-completion"] = ("Debug reset after completion, then a launch",
                                      setup + done + ["reset", "launch", "status"])
    for name, lines in spec.get("special", {}).items():
        made[name] = (name.replace("-", " ").capitalize(), lines)
    return made


def make(product):
    spec_path = os.path.join(product.transcripts, "scenarios.json")
    if not os.path.exists(spec_path):
        print(f"{product}: no {os.path.relpath(spec_path)}; scripts/new-product writes one to start from", file=sys.stderr)
        return False
    made = scenarios(json.load(open(spec_path)))
    folder = product.transcripts
    # A generated scenario the spec no longer makes (a step renamed or removed) goes, with its
    # recordings; scenarios written by hand (other names) stay.
    for file in os.listdir(folder):
        stem, extension = os.path.splitext(file)
        if extension in (".play", ".txt", ".jsonl") and stem.startswith(GENERATED) and stem not in made:
            os.remove(os.path.join(folder, file))
    for name, (title, lines) in made.items():
        with open(os.path.join(folder, name + ".play"), "w") as f:
            f.write(f"# {title}\n" + "\n".join(lines) + "\n")
    return True


if __name__ == "__main__":
    ok = all([make(p) for p in products(sys.argv[1:])])
    sys.exit(0 if ok else 1)
