#!/usr/bin/env python3
"""Checks that every source file includes only the layers its own layer links.

The layers and what each links are the muster_layer(NAME DEPS ...) calls of
CMakeLists.txt; a file under src/NAME/ may include "L/..." only for L = NAME or a
layer NAME reaches through those DEPS. An include the linker would accept only
because the binary happens to link both layers (kube/ reading a server/ header,
say) is a layering break the build does not see. Prints each one and fails.

Usage: scripts/check-layers.py [REPO_ROOT]
"""
import os
import re
import sys


def layer_deps(cmake_text):
    deps = {}
    for m in re.finditer(r"muster_layer\((\w+)\s+DEPS([^)]*)\)", cmake_text):
        deps[m.group(1)] = re.findall(r"\bmuster_(\w+)", m.group(2))
    return deps


def reachable(deps, layer):
    seen, todo = set(), [layer]
    while todo:
        cur = todo.pop()
        if cur in seen:
            continue
        seen.add(cur)
        todo.extend(deps.get(cur, []))
    return seen


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    with open(os.path.join(root, "CMakeLists.txt")) as f:
        deps = layer_deps(f.read())
    if not deps:
        print("check-layers: no muster_layer(...) calls found in CMakeLists.txt")
        return 1
    include = re.compile(r'^\s*#\s*include\s+"(\w+)/')
    bad = []
    for layer in sorted(deps):
        allowed = reachable(deps, layer)
        base = os.path.join(root, "src", layer)
        for dirpath, _, files in os.walk(base):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = include.match(line)
                        if m and m.group(1) in deps and m.group(1) not in allowed:
                            rel = os.path.relpath(path, root)
                            bad.append(f"{rel}:{lineno}: {layer}/ includes {m.group(1)}/, "
                                       f"which it does not link (it may include: "
                                       f"{', '.join(sorted(allowed))})")
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f"layers: {len(deps)} layers include only what they link")
    return 0


if __name__ == "__main__":
    sys.exit(main())
