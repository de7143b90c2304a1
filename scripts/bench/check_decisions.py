#!/usr/bin/env python3
"""Checks that every citation of bench/DECISIONS.md in the tree names an entry that exists, and that
the links of bench/DECISIONS.md, bench/README.md and bench/log/README.md lead somewhere.

usage: scripts/bench/check_decisions.py [--root DIR] [--tsv FILE] [--no-diary-citations]

An entry's anchor is its heading (`### anchor`); section headings (`## Title`) give GitHub's
anchors (lower case, punctuation dropped, spaces as hyphens). --tsv also checks a citation mapping
(scripts/bench/apply_citations.py's input) names existing entries. --no-diary-citations fails on
any citation of the old diary (bench/NOTES.md) left in code, once the mapping has been applied.
Exit status 1 with one line per fault.
"""
import argparse
import os
import re
import subprocess
import sys

CITED = re.compile(r"DECISIONS\.md#([A-Za-z0-9_-]+)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = ("engine", "glsl", "tests", "python", "samples", "scripts", "docs", "bench")


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors_of(path):
    out = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"(#+)\s+(.*)", line)
        if m:
            out.add(slug(m.group(2)))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--root", default=os.path.join(here, "..", ".."))
    parser.add_argument("--tsv")
    parser.add_argument("--no-diary-citations", action="store_true")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    decisions = os.path.join(root, "bench", "DECISIONS.md")
    faults = []
    anchors = anchors_of(decisions)
    entries = [m.group(1) for m in re.finditer(r"^### (\S+)\s*$", open(decisions).read(), re.M)]
    if len(entries) != len(set(entries)):
        faults.append("bench/DECISIONS.md: an entry heading appears twice")
    for e in entries:
        if not re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", e):
            faults.append(f"bench/DECISIONS.md: entry heading '{e}' is not an anchor (a-z, 0-9, -)")

    try:
        files = subprocess.run(["git", "ls-files", *CODE, "README.md", "CHANGELOG.md"], cwd=root,
                               capture_output=True, text=True).stdout.split()
    except OSError:
        files = []
    if not files:  # not a git checkout: every file under the folders
        files = [os.path.relpath(os.path.join(d, n), root) for top in CODE
                 for d, _, names in os.walk(os.path.join(root, top)) for n in names]
        files += [f for f in ("README.md", "CHANGELOG.md") if os.path.exists(os.path.join(root, f))]
    cited = 0
    for f in files:
        try:
            text = open(os.path.join(root, f), encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        for m in CITED.finditer(text):
            if m.group(1) == "anchor":  # the placeholder of the documents' own prose
                continue
            cited += 1
            if m.group(1) not in anchors:
                line = text.count("\n", 0, m.start()) + 1
                faults.append(f"{f}:{line}: DECISIONS.md#{m.group(1)} names no entry")
        # The documents that say where the diary went, and the history, may name it.
        named = ("bench/README.md", "scripts/bench/apply_citations.py",
                 os.path.relpath(os.path.abspath(__file__), root))
        if (args.no_diary_citations and not f.startswith(("bench/log/", "bench/results/")) and
                f not in named):
            for m in re.finditer(r"NOTES\.md", text):
                line = text.count("\n", 0, m.start()) + 1
                faults.append(f"{f}:{line}: cites the old diary (bench/NOTES.md)")

    # Relative links of the bench documents, and their anchors within bench/.
    for doc in ("bench/DECISIONS.md", "bench/README.md", "bench/log/README.md"):
        path = os.path.join(root, doc)
        if not os.path.exists(path):
            faults.append(f"{doc}: missing")
            continue
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            for link in LINK.findall(line):
                if re.match(r"[a-z]+://", link):
                    continue
                target, _, anchor = link.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target \
                    else path
                if not os.path.exists(full):
                    faults.append(f"{doc}:{n}: link to {link}: no such file")
                elif anchor and full.endswith(".md") and anchor not in anchors_of(full):
                    faults.append(f"{doc}:{n}: link to {link}: no such heading")

    if args.tsv:
        for n, line in enumerate(open(args.tsv, encoding="utf-8"), 1):
            cells = line.rstrip("\n").split("\t")
            if line.startswith("#") or len(cells) < 4:
                continue
            if "/" not in cells[3] and cells[3] not in anchors:
                faults.append(f"{args.tsv}:{n}: {cells[3]} names no entry")

    for fault in faults:
        print(fault)
    print(f"{len(entries)} entries, {cited} citations checked, {len(faults)} faults")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main())
