#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SPDX-License-Identifier lines in the repository's source files.

    scripts/spdx.py --check   list every source file whose first lines carry no
                              "SPDX-License-Identifier: MIT"; exit 1 if there is one
    scripts/spdx.py --fix     add the line to each of them, in the file's comment syntax, as
                              its first line or right after a shebang; files that have it are
                              left alone, so a second --fix changes nothing

The files: those git knows (tracked, and untracked ones it does not ignore, so that a new file is
checked before its first commit), or, outside a git checkout, every file but those under build/,
results/, .venv/ (what .gitignore names), .git/ and __pycache__/. Of those, the C++ sources and
headers, Python, shell, CMake, TOML, Makefiles and pkg-config files (SOURCE_SUFFIXES,
SOURCE_NAMES), their .in templates, and files without a suffix that start with a shebang
(.ci/run). A file that names another licence in its first lines is reported, never changed.
"""
import argparse
import os
import subprocess
import sys

LICENSE = "MIT"
TAG = "SPDX-License-Identifier:"
# How far down the tag may be: after a shebang, and a line or two of a header that predates it.
HEAD_LINES = 5

SOURCE_SUFFIXES = {".hpp": "//", ".cpp": "//", ".h": "//", ".py": "#", ".sh": "#", ".cmake": "#",
                   ".toml": "#", ".pc": "#"}
SOURCE_NAMES = {"CMakeLists.txt": "#", "Makefile": "#"}
# Outside a git checkout: the top directories that .gitignore names, and git's own.
SKIPPED_DIRS = {"build", "results", ".venv", ".git"}


def comment_of(path):
    """The line-comment opener of a source file, or None for a file that is not checked."""
    name = os.path.basename(path)
    if name in SOURCE_NAMES:
        return SOURCE_NAMES[name]
    stem, suffix = os.path.splitext(name)
    if suffix == ".in":  # a template: the syntax of what it generates (scheme.cpp.in)
        suffix = os.path.splitext(stem)[1]
    if suffix in SOURCE_SUFFIXES:
        return SOURCE_SUFFIXES[suffix]
    if not suffix and first_line(path).startswith("#!"):
        return "#"
    return None


def first_line(path):
    try:
        with open(path, "rb") as f:
            return f.readline().decode("utf-8", "replace")
    except OSError:
        return ""


def candidate_files(root):
    """Paths relative to root: git's view of the tree, or a walk where there is no git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True, check=True).stdout
        return sorted({p for p in out.decode().split("\0") if p})
    except (OSError, subprocess.CalledProcessError):  # no git, or not a checkout
        pass
    found = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs
                   if not (directory == root and d in SKIPPED_DIRS) and d != "__pycache__"]
        found += [os.path.relpath(os.path.join(directory, f), root) for f in files]
    return sorted(found)


def source_files(root):
    """(relative path, comment opener) of every file to check; deleted tracked files skipped."""
    result = []
    for path in candidate_files(root):
        full = os.path.join(root, path)
        if os.path.isfile(full) and not os.path.islink(full):
            comment = comment_of(full)
            if comment:
                result.append((path, comment))
    return result


def head_tag(lines):
    """The licence named in the first lines ("" for a tag that names none), or None."""
    for line in lines[:HEAD_LINES]:
        if TAG in line:
            return line.partition(TAG)[2].strip()
    return None


def fix(full, comment):
    with open(full, encoding="utf-8") as f:
        lines = f.readlines()
    at = 1 if lines and lines[0].startswith("#!") else 0
    lines.insert(at, f"{comment} {TAG} {LICENSE}\n")
    with open(full, "w", encoding="utf-8") as f:
        f.writelines(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="list the files without the line")
    mode.add_argument("--fix", action="store_true", help="add the line where it is missing")
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.dirname(here),
                        help="the tree (default: the repository of this script)")
    args = parser.parse_args(argv)

    missing, other = [], []
    files = source_files(args.root)
    for path, comment in files:
        full = os.path.join(args.root, path)
        with open(full, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(HEAD_LINES)]
        licence = head_tag(head)
        if licence is None:
            missing.append(path)
            if args.fix:
                fix(full, comment)
        elif licence != LICENSE:
            other.append(f"{path}: {TAG} {licence}")

    for line in other:
        print(f"spdx: another licence than {LICENSE}: {line}", file=sys.stderr)
    if args.fix:
        for path in missing:
            print(f"spdx: added to {path}")
        return 1 if other else 0
    for path in missing:
        print(f"spdx: no '{TAG} {LICENSE}' in the first {HEAD_LINES} lines of {path}")
    print(f"spdx: {len(files)} source files, {len(missing)} without the line, "
          f"{len(other)} with another licence")
    return 1 if missing or other else 0


if __name__ == "__main__":
    sys.exit(main())
