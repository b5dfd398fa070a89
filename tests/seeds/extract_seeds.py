#!/usr/bin/python3
"""Writes every Kubernetes manifest of the seed documents (../shared/seeds) to a folder.

  extract_seeds.py SEEDS_DIR OUT_DIR

A manifest is a block that starts with a line `apiVersion: ...` and runs while the lines
look like YAML (indented, a list item, a top-level key, `---` or blank); it ends at the
seed's prose (a bullet, a sentence). Each block is written as it stands in the seed, to
OUT_DIR/<seed number>-<first line>.yaml. Seeds 001 and 002 print some manifests with
their line breaks or indentation lost; those are in restored/ beside this script (line
breaks and indentation put back, nothing else changed) and are copied as they are.
Prints one line per manifest: file, seed line range, kinds and names.
"""

import glob
import os
import re
import shutil
import sys

import yaml

KEY = re.compile(r"^[A-Za-z][\w.-]*:( |$)")


def blocks(lines):
    i = 0
    while i < len(lines):
        if not (lines[i].startswith("apiVersion:") and "kind:" not in lines[i]):
            i += 1
            continue
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if line.strip() == "" or line == "---":
                j += 1
            elif line.lstrip().startswith("•"):
                break
            elif line[0] in " -" or KEY.match(line):
                j += 1
            else:
                break
        yield i, j
        i = j


def describe(text):
    try:
        docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    except yaml.YAMLError as e:
        return "not YAML: " + str(e).split("\n")[0]
    return ", ".join(f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}" for d in docs)


def main():
    seeds, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    restored = os.path.join(os.path.dirname(os.path.abspath(__file__)), "restored")
    restored_seeds = {name[:3] for name in os.listdir(restored)}
    for path in sorted(glob.glob(os.path.join(seeds, "*.txt"))):
        seed = os.path.basename(path)[:3]
        if seed in restored_seeds:
            continue
        lines = open(path, encoding="utf-8").read().split("\n")
        for start, end in blocks(lines):
            text = "\n".join(lines[start:end]).rstrip() + "\n"
            name = f"{seed}-{start + 1:04d}.yaml"
            with open(os.path.join(out, name), "w", encoding="utf-8") as f:
                f.write(text)
            print(f"{name} lines {start + 1}-{end}: {describe(text)}")
    for name in sorted(os.listdir(restored)):
        shutil.copy(os.path.join(restored, name), os.path.join(out, name))
        with open(os.path.join(restored, name), encoding="utf-8") as f:
            print(f"{name} restored: {describe(f.read())}")


if __name__ == "__main__":
    main()
