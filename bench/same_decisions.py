#!/usr/bin/python3
"""Checks that runs without the admission shortcuts decided as the runs with them.

Usage: same_decisions.py OUT_DIR NO_SHORTCUTS_DIR   (bench/decisions_check.sh
--no-shortcuts-too calls it). For each output in NO_SHORTCUTS_DIR, the one of the same
name in OUT_DIR must hold the same decisions:
- *.json (simulate's result): byte for byte;
- *.log (simulate's --log-decisions) and *.decisions (bench --decisions): every line
  that is not a decision-log line ("t=..."), in order; each workload's log lines at
  each instant, in order; and every log line but Pending, in order. Pending decisions
  of different workloads within one instant may come in another order: a queue
  sleeping through heads never tried gives them their pending decisions when it wakes
  (src/admission/admission_sleep.cc).
Prints one SHORTCUT line per output that differs, and exits 1 if any does.
"""
import os
import sys


def parse(path):
    others, moves, by_instant = [], [], {}
    section = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("#"):
                section = line
            if not line.startswith("t="):
                others.append(line)
                continue
            fields = line.split(" ", 3)
            action = fields[1] if len(fields) > 1 else ""
            who = fields[2].rstrip(":\n") if len(fields) > 2 else ""
            by_instant.setdefault((section, fields[0], who), []).append(line)
            if action != "Pending":
                moves.append(line)
    return others, moves, by_instant


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return f"line {i + 1}: {x.strip()!r} vs {y.strip()!r}"
    return f"{len(a)} lines vs {len(b)}"


def compare(with_path, without_path):
    """None when the two decided the same, else what differs first."""
    if with_path.endswith(".json"):
        with open(with_path, "rb") as a, open(without_path, "rb") as b:
            return None if a.read() == b.read() else "results differ"
    a_others, a_moves, a_by = parse(with_path)
    b_others, b_moves, b_by = parse(without_path)
    if a_others != b_others:
        return "non-log lines differ, " + first_difference(a_others, b_others)
    if a_moves != b_moves:
        return "admissions, preemptions or evictions differ, " + first_difference(a_moves, b_moves)
    for key in sorted(set(a_by) | set(b_by), key=str):
        if a_by.get(key) != b_by.get(key):
            return f"decisions of {key[2]} at {key[1]} differ"
    return None


def main():
    out_dir, ns_dir = sys.argv[1], sys.argv[2]
    checked, failed = 0, 0
    for name in sorted(os.listdir(ns_dir)):
        if name.endswith(".err"):
            continue
        with_path = os.path.join(out_dir, name)
        if not os.path.exists(with_path):
            print(f"SHORTCUT {name}: no output with the shortcuts to compare")
            failed += 1
            continue
        what = compare(with_path, os.path.join(ns_dir, name))
        checked += 1
        if what is not None:
            print(f"SHORTCUT {name}: {what}")
            failed += 1
    print(f"no-shortcuts: {checked - failed} of {checked} outputs decided the same")
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
