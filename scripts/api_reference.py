#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates docs/api.md, the API reference, from the headers and their comments (ctest: docs.api).

The headers are parsed with libclang (Debian's python3-clang). The reference lists every public
name, with its declaration and its comment:
  - what is declared in the public namespaces (reclaim, reclaim::ds, reclaim::cxx26,
    reclaim::timeline; not detail, core or verify, which are the library's internals and the
    toolkit of docs/writing-a-scheme.md), and the macros of the top-level headers;
  - the public members of those classes, nested classes defined out of line included (a scheme's
    domain and guard);
  - the public members of the internal classes that a public class derives from (a container's
    contains() and bucket_count(), a domain's retire() and barrier()): they are part of the public
    class's interface, so they are listed once, in "Inherited members", and linked from each class
    that has them.

A declaration's comment is the block of // lines right above it, or the comment at the end of its
line; a declaration in a group (no blank line between them) shares the comment above the group.
--check fails where a public name has none (destructors, default, copy and move constructors and
assignments, and enumerators need none) and where the checked-in reference differs from what the
headers give (regenerate with --write).

  api_reference.py --write | --check   [--source-dir DIR]
"""
import argparse
import difflib
import pathlib
import re
import sys

try:
    import clang.cindex as ci
except ImportError:  # Debian installs the bindings for its own python3 only
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import clang.cindex as ci
    except ImportError:
        sys.exit("api_reference.py needs libclang's Python bindings: apt-get install python3-clang "
                 "(scripts/deps.sh test installs it)")

K = ci.CursorKind
PUBLIC_NAMESPACES = {("reclaim",), ("reclaim", "ds"), ("reclaim", "cxx26"), ("reclaim", "timeline")}
CLASSES = {K.CLASS_DECL, K.STRUCT_DECL, K.CLASS_TEMPLATE, K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION}
FUNCTIONS = {K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD, K.CONSTRUCTOR, K.DESTRUCTOR,
             K.CONVERSION_FUNCTION}
# Declarations that are not names of their own: a class's template parameters, access labels,
# friends, static_asserts, base specifiers (shown in the class's declaration).
SKIPPED = {K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER,
           K.CXX_ACCESS_SPEC_DECL, K.FRIEND_DECL, K.STATIC_ASSERT, K.CXX_BASE_SPECIFIER,
           K.NAMESPACE_REF, K.TYPE_REF, K.TEMPLATE_REF}


def kind(cursor):
    try:
        return cursor.kind
    except ValueError:  # a kind these bindings do not name (libclang newer than them)
        return None


class Headers:
    """The source text of the headers, for declarations and comments."""

    def __init__(self, include_dir):
        self.include_dir = include_dir
        self.lines = {}

    def relative(self, cursor):
        f = cursor.location.file
        if f is None:
            return None
        path = pathlib.Path(f.name).resolve()
        try:
            return path.relative_to(self.include_dir).as_posix()
        except ValueError:
            return None

    def snapshot(self):
        """Reads every header once: libclang parses these texts too, so that a header edited
        meanwhile cannot shift the lines under the parse."""
        files = []
        for p in sorted((self.include_dir / "reclaim").rglob("*.hpp")):
            content = p.read_text(encoding="utf-8")
            self.lines[p.relative_to(self.include_dir).as_posix()] = content.splitlines()
            files.append((str(p), content))
        return files

    def text(self, path):
        return self.lines[path]

    def opening(self, path):
        """The first paragraph of a header's opening comment."""
        block = []
        for line in self.text(path):
            if "SPDX-License-Identifier:" in line:
                continue
            if not is_comment(line) or not line.strip()[2:].strip():
                break
            block.append(line.strip()[2:].strip())
        return " ".join(block)

    def comment(self, cursor):
        """The comment of a declaration (see the module's docstring), or ""."""
        path = self.relative(cursor)
        lines = self.text(path)
        first = cursor.extent.start.line - 1
        # At the end of its own line (a field, an alias, an enumerator).
        own = lines[first]
        trailing = re.search(r"//\s?(.*)$", strip_strings(own))
        if trailing and own.split("//")[0].strip() and not trailing.group(1).startswith("NOLINT"):
            return trailing.group(1).strip()
        # Above it, or above the group it belongs to.
        i = first - 1
        while i >= 0 and lines[i].strip() and not is_comment(lines[i]):
            i -= 1
        block = []
        while i >= 0 and is_comment(lines[i]):
            block.insert(0, lines[i].strip()[2:])
            i -= 1
        text = " ".join(part.strip() for part in block if part.strip()
                        and not part.strip().startswith("NOLINT"))
        if not text and kind(cursor) in CLASSES | {K.TYPE_ALIAS_TEMPLATE_DECL, K.TYPE_ALIAS_DECL} \
                and pathlib.PurePosixPath(path).stem == cursor.spelling:
            text = self.opening(path)  # a scheme or container named as its header
        return text

    def declaration(self, cursor):
        """The declaration's text up to its body, initializer list or end, on one line."""
        path = self.relative(cursor)
        lines = self.text(path)
        start, end = cursor.extent.start, cursor.extent.end
        text = "\n".join(lines[start.line - 1:end.line])
        text = text[start.column - 1:len(text) - (len(lines[end.line - 1]) - end.column + 1)]
        text = "\n".join(re.sub(r"\s*//.*$", "", l) for l in text.splitlines())
        if kind(cursor) == K.MACRO_DEFINITION:  # its name and parameters, not its expansion
            return re.match(r"\w+(\([^)]*\))?", text).group(0)
        text = cut_body(text, kind(cursor))
        return " ".join(text.split())


def is_comment(line):
    return line.strip().startswith("//")


def strip_strings(line):
    return re.sub(r'"(\\.|[^"\\])*"', '""', line)


def cut_body(text, k):
    """A function's or class's declaration without its body (and a constructor's initializers)."""
    depth, seen_params = 0, False
    i = 0
    while i < len(text):
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                seen_params = True
        elif depth == 0 and c == "{":
            if k in CLASSES or seen_params or k == K.ENUM_DECL:
                return text[:i].rstrip()
        elif depth == 0 and c == ":" and k == K.CONSTRUCTOR and seen_params:
            if text[i - 1:i + 1] != "::" and text[i:i + 2] != "::":
                return text[:i].rstrip()
        elif c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j
        i += 1
    return text.rstrip()


def qualified(cursor):
    parts = []
    c = cursor
    while c is not None and kind(c) != K.TRANSLATION_UNIT:
        if c.spelling:
            parts.insert(0, c.spelling)
        c = c.semantic_parent
    return "::".join(parts)


def namespace_of(cursor):
    parts = []
    c = cursor.semantic_parent
    while c is not None and kind(c) != K.TRANSLATION_UNIT:
        if kind(c) == K.NAMESPACE:
            parts.insert(0, c.spelling)
        c = c.semantic_parent
    return tuple(parts)


def is_deleted(headers, cursor):
    return kind(cursor) in FUNCTIONS and re.search(r"=\s*delete\s*$",
                                                   headers.declaration(cursor) or "")


class Entry:
    def __init__(self, cursor, headers, name=None):
        self.cursor = cursor
        self.header = headers.relative(cursor)
        self.line = cursor.extent.start.line
        self.name = name or qualified(cursor)
        self.declaration = headers.declaration(cursor)
        self.comment = headers.comment(cursor)
        self.members = []
        self.bases = []  # names of the internal classes whose members this one has

    def anchor(self):
        return re.sub(r"[^a-z0-9_]+", "-", self.name.lower()).strip("-")


def public_members(cursor, headers):
    """The public member declarations of a class definition, in order."""
    out = []
    for child in cursor.get_children():
        k = kind(child)
        # libclang gives the access in effect (a struct's members are public without a label).
        if k is None or k in SKIPPED or child.access_specifier != ci.AccessSpecifier.PUBLIC:
            continue
        if headers.relative(child) is None or is_deleted(headers, child):
            continue
        if k in (K.UNEXPOSED_DECL,) and not child.spelling:
            continue
        out.append(child)
    return out


def bases_of(cursor, headers):
    """The internal (detail or core) classes a class derives from publicly."""
    out = []
    for child in cursor.get_children():
        if kind(child) != K.CXX_BASE_SPECIFIER:
            continue
        if child.access_specifier != ci.AccessSpecifier.PUBLIC:
            continue
        base = child.referenced
        if base is None:
            continue
        definition = base.get_definition() or base
        if (headers.relative(definition) is not None and kind(definition) in CLASSES
                and namespace_of(definition) not in PUBLIC_NAMESPACES):
            out.append(definition)
    return out


def collect(tu, headers):
    """The public entries, the inherited ones and the macros."""
    entries, inherited, macros = [], {}, []

    def document_class(cursor, entry):
        for member in public_members(cursor, headers):
            if kind(member) in CLASSES and member.is_definition():
                nested = Entry(member, headers)
                document_class(member, nested)
                entries.append(nested)
                continue
            if kind(member) in CLASSES and (member.get_definition() is None
                                            or member.get_definition() != member):
                continue  # a nested class defined out of line: its definition is an entry
            entry.members.append(Entry(member, headers))
        for base in bases_of(cursor, headers):
            name = qualified(base)
            entry.bases.append(name)
            if name not in inherited:
                inherited[name] = None  # reserved: a base may reach itself through others
                base_entry = Entry(base, headers)
                document_class(base, base_entry)
                inherited[name] = base_entry

    def visit(cursor):
        for child in cursor.get_children():
            k = kind(child)
            if k is None or headers.relative(child) is None:
                continue
            if k == K.NAMESPACE:
                visit(child)
                continue
            if k == K.MACRO_DEFINITION:
                path = headers.relative(child)
                if (path.count("/") == 1 and child.spelling.startswith("RECLAIM_")
                        and not child.spelling.startswith("RECLAIM_DETAIL")):
                    if all(m.name != child.spelling for m in macros):
                        macros.append(Entry(child, headers, child.spelling))
                continue
            if namespace_of(child) not in PUBLIC_NAMESPACES or k in SKIPPED:
                continue
            if k == K.USING_DIRECTIVE or (k == K.UNEXPOSED_DECL and not child.spelling):
                continue
            if k in CLASSES:
                if not child.is_definition():
                    continue
                if kind(child.semantic_parent) in CLASSES:
                    # Out of line: public where its class declared it so.
                    if child.access_specifier not in (ci.AccessSpecifier.PUBLIC,
                                                      ci.AccessSpecifier.INVALID):
                        continue
                entry = Entry(child, headers)
                document_class(child, entry)
                entries.append(entry)
            elif k in FUNCTIONS and not child.is_definition() and child.get_definition():
                continue  # a declaration whose definition follows
            else:
                entries.append(Entry(child, headers))

    visit(tu.cursor)
    # A function declared ahead of its definition (to give a template its default argument once)
    # is one name: with the bodies skipped, libclang sees two declarations and links neither to a
    # definition, so keep the last, the one with the body and the comment.
    def first_declared(e):
        where = e.cursor.canonical.location
        return where.file.name, where.offset

    last = {first_declared(e): e for e in entries if kind(e.cursor) in FUNCTIONS}
    entries = [e for e in entries
               if kind(e.cursor) not in FUNCTIONS or last[first_declared(e)] is e]
    return entries, [inherited[n] for n in sorted(inherited)], macros


def parse(source_dir):
    include_dir = (source_dir / "include").resolve()
    headers = Headers(include_dir)
    # Every header outside detail/ and verify/ (some are not in the umbrella header).
    names = sorted(p.relative_to(include_dir).as_posix()
                   for p in (include_dir / "reclaim").rglob("*.hpp")
                   if not {"detail", "verify"} & set(p.relative_to(include_dir).parts))
    unit = "\n".join(f"#include <{n}>" for n in names) + "\n"
    files = headers.snapshot()
    index = ci.Index.create()
    tu = index.parse("api_reference.cpp", unsaved_files=[("api_reference.cpp", unit)] + files,
                     args=["-x", "c++", "-std=c++20", f"-I{include_dir}"],
                     options=ci.TranslationUnit.PARSE_SKIP_FUNCTION_BODIES
                     | ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD)
    return tu, headers


def render(entries, inherited, macros):
    by_header = {}
    for e in entries + macros:
        by_header.setdefault(e.header, []).append(e)
    anchors = {e.name: e.anchor() for e in inherited}
    out = ["# API reference", "",
           "Generated by `scripts/api_reference.py` from the headers and their comments: do not "
           "edit it,", "regenerate it (`python3 scripts/api_reference.py --write`). The test "
           "`docs.api` fails where it", "is stale and where a public name has no comment "
           "(`docs/testing.md`). Every public name of", "`reclaim`, `reclaim::ds`, "
           "`reclaim::cxx26` and `reclaim::timeline` is here, by header, with the public",
           "members of its classes; the members that classes get from the library's internal "
           "bases", "(a scheme's domain, a container's lookups) are listed once, under "
           "[Inherited members](#inherited-members).", "", "## Headers", ""]
    for header in sorted(by_header):
        out.append(f"- [`{header}`](#{re.sub(r'[^a-z0-9_]+', '', header.lower())})")
    out.append("- [Inherited members](#inherited-members)")

    def entry_lines(e, level):
        lines = [f"{'#' * level} `{e.name}`", "", f"`{e.declaration}`", ""]
        if e.comment:
            lines += [e.comment, ""]
        for m in e.members:
            text = f"- `{m.declaration}`"
            lines.append(text + (f": {m.comment}" if m.comment else ""))
        if e.members:
            lines.append("")
        for b in e.bases:
            lines.append(f"Inherits the members of [`{b}`](#{anchors.get(b, '')}).")
            lines.append("")
        return lines

    for header in sorted(by_header):
        out += ["", f"## {header}", ""]
        for e in sorted(by_header[header], key=lambda e: e.line):
            out += entry_lines(e, 3)
    out += ["", "## Inherited members", "",
            "The public members of internal classes, which the classes above derive from.", ""]
    for e in inherited:
        out += [f'<a id="{e.anchor()}"></a>', ""] + entry_lines(e, 3)
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def special(entry):
    """A member whose meaning its kind says: a destructor, a default, copy or move constructor or
    assignment, an enumerator (documented by its enumeration)."""
    k = kind(entry.cursor)
    if k in (K.DESTRUCTOR, K.ENUM_CONSTANT_DECL):
        return True
    if k == K.CONSTRUCTOR and (entry.cursor.is_default_constructor()
                               or entry.cursor.is_copy_constructor()
                               or entry.cursor.is_move_constructor()):
        return True
    own = entry.cursor.semantic_parent.spelling.split("<")[0]
    return k == K.CXX_METHOD and re.search(
        rf"operator=\((const )?{re.escape(own)}(<[^()]*>)?&&?( \w+)?\)", entry.declaration) is not None


def undocumented(entries, inherited, macros):
    missing = []
    for e in entries + inherited + macros:
        if not e.comment and e in entries + macros:
            missing.append(e)
        missing += [m for m in e.members if not m.comment and not special(m)]
    return missing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source-dir", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="write docs/api.md")
    mode.add_argument("--check", action="store_true",
                      help="fail if a public name has no comment or docs/api.md is stale")
    args = parser.parse_args()

    tu, headers = parse(args.source_dir)
    errors = [d for d in tu.diagnostics if d.severity >= ci.Diagnostic.Fatal]
    if errors:
        sys.exit("\n".join(str(d) for d in errors))
    entries, inherited, macros = collect(tu, headers)
    text = render(entries, inherited, macros)
    target = args.source_dir / "docs" / "api.md"
    failed = False
    for m in undocumented(entries, inherited, macros):
        print(f"include/{m.header}:{m.line}: {m.name} has no comment: `{m.declaration}`")
        failed = True
    if args.write:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}: {len(entries)} names, {len(inherited)} internal bases, "
              f"{len(macros)} macros")
    else:
        old = target.read_text(encoding="utf-8") if target.exists() else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), "docs/api.md", "generated", n=1))
            print("docs/api.md is stale: regenerate it with python3 scripts/api_reference.py "
                  "--write")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
