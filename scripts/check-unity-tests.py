#!/usr/bin/env python3
"""Fails when two files of one test binary define a namespace-scope function, constant,
type or alias of the same name.

CI compiles each test binary in unity batches (MUSTER_UNITY_TESTS): the files of a
batch are one translation unit, so a file's unqualified call can bind to another
file's overload of the same name and the test silently runs with other inputs (stop
31: runtime_test's Cpu(key, cpu, order) calls went to queueing_test's
Cpu(key, cpu, priority)). Overloads compile silently; constants, types and aliases of
one name fail to compile, but only when a batch holds both files, and which files a
batch holds shifts as files are added. Give the name to one file or share it through a
fixture header.

A definition is a line at column 0 (clang-format puts namespace members there) that
declares a function by an unqualified name. Headers under tests/ count as the files
of every target that includes them. A test helper may not take the name of a function
that a header of src/ declares either: in a batch it hides that function from the other
files.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SRC = ROOT / "src"
# The non-test sources CMakeLists.txt adds to a test binary.
EXTRA_SOURCES = {
    "kube": ["fake_api_server.cc", "fake_job_controller.cc", "fake_kubelet.cc",
             "store_change_worker.cc", "kube_load.cc"],
}
SPECIFIERS = r"(?:(?:static|inline|constexpr|consteval|\[\[\w+\]\])\s+)*"
NOT_A_TYPE = re.compile(
    r"^(return|TEST|TYPED_TEST|INSTANTIATE|MATCHER|ACTION|using|typedef|namespace|"
    r"class|struct|enum|union|template|friend|if|for|while|switch|case|default|delete|"
    r"new|throw|co_return|else|do|goto|operator)\b")
# Return type (words, ::, <...>, *, &, spaces), then the unqualified name and "(".
DEFINITION = re.compile(r"^" + SPECIFIERS + r"([A-Za-z_][\w:<>,\*&\s]*?[\s\*&])(\w+)\s*\(")
# Constants, types and aliases of the same name fail to compile in a batch: found here,
# they fail before the build, whichever files a batch happens to hold.
CONSTANT = re.compile(r"^(?:(?:inline|static)\s+)*(?:constexpr|const)\b[^=(]*?\b(\w+)\s*(?:=|\{|\[)")
TYPE = re.compile(r"^(?:struct|class|union|enum(?:\s+class)?)\s+(\w+)\b[^;]*$")
# An alias, or a using-declaration (which brings a name of another namespace in):
# the same one may appear in several files.
ALIAS = re.compile(r"^using\s+(\w+)\s*=\s*(.*?);")
USING = re.compile(r"^using\s+((?:[\w:]*::)?(\w+))\s*;")
USING_DECLARATION = "using-declaration"
INCLUDE = re.compile(r'^#include\s+"([^"]+)"')


def defined_names(path, functions_only=False):
    names = {}
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if not line or line[0] in " \t#/}{)":
            continue
        alias = None if functions_only else ALIAS.match(line)
        if alias:  # one alias may be declared again for the same type
            names.setdefault(alias.group(1), (number, alias.group(2)))
            continue
        using = None if functions_only else USING.match(line)
        if using:
            names.setdefault(using.group(2), (number, USING_DECLARATION))
            continue
        other = None if functions_only else (CONSTANT.match(line) or TYPE.match(line))
        if other:
            names.setdefault(other.group(1), (number, None))
            continue
        match = DEFINITION.match(line)
        if not match or NOT_A_TYPE.match(line):
            continue
        return_type, name = match.group(1), match.group(2)
        if return_type.rstrip().endswith("::") or name.startswith("operator"):
            continue
        # A macro call such as MUSTER_REQUIRE(x); gtest's PrintTo, overloaded by type.
        if name.isupper() or name == "PrintTo":
            continue
        names.setdefault(name, (number, None))
    return names


def headers_of(path, seen):
    """The headers of tests/ and src/ that path includes, transitively."""
    for line in path.read_text(errors="replace").splitlines():
        match = INCLUDE.match(line)
        if not match:
            continue
        for base in (path.parent, TESTS, SRC):
            header = (base / match.group(1)).resolve()
            if header.is_file() and header not in seen:
                seen.add(header)
                headers_of(header, seen)
                break
    return seen


def main():
    problems = []
    for layer_dir in sorted(p for p in TESTS.iterdir() if p.is_dir()):
        sources = sorted(layer_dir.glob("*_test.cc"))
        sources += [layer_dir / name for name in EXTRA_SOURCES.get(layer_dir.name, [])]
        if not sources:
            continue
        files = set(sources)
        for source in sources:
            files |= headers_of(source, set())
        library = {path for path in files if SRC in path.parents}
        files -= library
        # A test helper named as a function a src/ header of the batch declares hides
        # that function from the other files (admission_webhook_test's DecodeBase64 took
        # the calls of core::DecodeBase64).
        declared = {}
        for header in sorted(library):
            for name, (line, _) in defined_names(header, functions_only=True).items():
                declared.setdefault(name, f"{header.relative_to(ROOT)}:{line}")
        for path in sorted(files):
            for name, (line, _) in defined_names(path, functions_only=True).items():
                if name in declared:
                    problems.append(f"{layer_dir.name}_test: {name} is defined in "
                                    f"{path.relative_to(ROOT)}:{line} and declared in "
                                    f"{declared[name]}")
        where = {}
        for path in sorted(files):
            for name, (line, alias_of) in defined_names(path).items():
                where.setdefault(name, []).append((path.relative_to(ROOT), line, alias_of))
        for name, places in sorted(where.items()):
            targets = {alias_of for _, _, alias_of in places if alias_of != USING_DECLARATION}
            if len(targets) == 1 and None not in targets:
                continue
            # Using-declarations of a name a shared header defines (or that no file of
            # the binary defines) all bring in the one function.
            defining = [p for p, _, alias_of in places if alias_of != USING_DECLARATION]
            if len(defining) <= 1 and all(p.suffix == ".h" for p in defining):
                continue
            # A header and the source file of the same stem are one unit (a declaration
            # and its definition).
            if len({p.with_suffix("") for p, _, _ in places}) > 1:
                listed = ", ".join(f"{p}:{n}" for p, n, _ in places)
                problems.append(f"{layer_dir.name}_test: {name} is defined in {listed}")
    if problems:
        print("Names defined in two files of one test binary (in a unity batch a call can "
              "bind to the other file's overload, and constants or types collide); rename "
              "one or share it through a header:")
        print("\n".join("  " + p for p in problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
