#!/usr/bin/env python3
"""Replaces the code's citations of the old benchmark diary (bench/NOTES.md, by date and session)
with citations of bench/DECISIONS.md entries, from a mapping file.

usage: scripts/bench/apply_citations.py TSV [--root DIR] [--dry-run]

The mapping (tab-separated, '#' lines are comments) has one row a citation:
  file  line  citation  anchor  action  before
`citation` is the text to replace, its words separated by single spaces (in the file a line break
and its comment leader may stand between two words); `anchor` is an entry of bench/DECISIONS.md,
cited as `bench/DECISIONS.md#anchor`, or, where it holds a '/', the literal replacement; `action`
is `replace`, or `append` to add " (bench/DECISIONS.md#anchor)" after the text (or
"; bench/DECISIONS.md#anchor" where the text leaves a parenthesis open); `before` is a few
words that precede the citation, used only where the citation text occurs more than once.

Files move (graph.cpp and convolution.cpp are being split): where the row's file is gone or does
not hold the text, the text is looked for in every file of the tree, and `before` and the line
decide between several places. Every row must resolve to exactly one place, or nothing is written.
A comment whose line grows past 100 columns, or whose citation spanned lines, is refilled from that
line to the end of its paragraph. Prints what it did, row by row; exit status 1 if a row failed.
"""
import argparse
import os
import re
import subprocess
import sys

COLUMNS = 100
# Between two words of a citation: spaces, or a line break and the next line's comment leader.
GAP = r"(?:[ \t]*\n[ \t]*(?://+|#)?[ \t]*|[ \t]+)"
SEARCHED = ("engine", "glsl", "tests", "python", "samples", "scripts", "docs", "bench")
COMMENT = re.compile(r"^([ \t]*(?://+|#)[ \t]*)(\S.*)?$")
BULLET = re.compile(r"(?:[-*]|\d+\.) ")


def words_pattern(text):
    return GAP.join(re.escape(w) for w in text.split())


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def tree_files(root):
    out = subprocess.run(["git", "ls-files", *SEARCHED, "README.md", "CHANGELOG.md"], cwd=root,
                         capture_output=True, text=True).stdout.split()
    # History (the diary, the results' records, the diffs of variants not kept) is not code.
    return [f for f in out if not f.startswith(("bench/log/", "bench/results/")) and
            f != "bench/DECISIONS.md" and not f.endswith(".diff")]


def read(root, path, cache):
    if path not in cache:
        try:
            cache[path] = open(os.path.join(root, path), encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            cache[path] = None
    return cache[path]


def preceded_by(text, start, before):
    """Whether the last words of `before` stand just before `start` (a few characters apart)."""
    tail = before.split()[-3:]
    if not tail:
        return True
    rx = re.compile(words_pattern(" ".join(tail)) + r"[ \t(`]*(?:" + GAP + r")?[ \t(`]*$")
    return rx.search(text, max(0, start - 200), start) is not None


def locate(row, root, cache, files):
    """(file, start, end) of the row's citation, or an error string."""
    pattern = words_pattern(row["citation"])
    if row["action"] == "replace":
        # Not the start of a longer citation ("..., 2026-11-27" inside "..., 2026-11-27, session 24").
        pattern += r"(?!,?" + GAP + r"?(?:sessions?|runs?|\d{4}-|issue|shader)\b)"
    rx = re.compile(pattern)

    def search(paths):
        found = []
        for f in paths:
            text = read(root, f, cache)
            if text is not None and row["citation"].split()[0] in text:
                found += [(f, m) for m in rx.finditer(text)]
        return found

    def by_context(places):
        """The places `before` precedes, and whether there were any."""
        if not row["before"]:
            return places, True
        near = [(f, m) for f, m in places if preceded_by(cache[f], m.start(), row["before"])]
        return (near, True) if near else (places, False)

    own = search([row["file"]])
    if own:
        places, ok = by_context(own)
        if not ok:  # the citation may have moved and another like it stayed
            moved, ok = by_context(search(files))
            places = moved if ok else own
    else:
        places, _ = by_context(search(files))
    if not places:
        return "not found"
    files_hit = {f for f, _ in places}
    if len(files_hit) > 1:
        return "found in several files: " + ", ".join(sorted(files_hit))
    # Several places in one file: the nearest to the row's line (lines move little within a file).
    f, m = min(places, key=lambda p: abs(line_of(cache[p[0]], p[1].start()) - row["line"]))
    return (f, m.start(), m.end())


def refill(lines, first):
    """Refills the comment paragraph that goes on from lines[first] to COLUMNS: the first line
    keeps its prefix (indent, leader, the indent inside the comment), the others take the next
    line's (a bullet's hanging indent). Returns the new lines."""
    def split(line):
        m = COMMENT.match(line)
        return (m.group(1), m.group(2) or "") if m else (None, None)
    first_prefix, body = split(lines[first])
    if first_prefix is None:
        return lines
    leader = first_prefix.strip()
    rest_prefix, last = first_prefix, first
    while last + 1 < len(lines):
        prefix, text = split(lines[last + 1])
        if prefix is None or prefix.strip() != leader or not text or BULLET.match(text):
            break
        # A paragraph's lines share a prefix; a bullet's second line may hang deeper. A line
        # indented otherwise (an example, a table) ends it.
        if last == first:
            if prefix != first_prefix and not (BULLET.match(body) and len(prefix) > len(first_prefix)):
                break
        elif prefix != rest_prefix:
            break
        if last == first:
            rest_prefix = prefix
        last += 1
    if last == first and BULLET.match(body):
        rest_prefix = first_prefix + "  "
    words = " ".join(split(l)[1] for l in lines[first:last + 1]).split()
    out, current = [], ""
    for word in words:
        prefix = first_prefix if not out else rest_prefix
        if current and len(prefix) + len(current) + 1 + len(word) > COLUMNS:
            out.append(prefix + current)
            current = word
        else:
            current = current + " " + word if current else word
    if current:
        out.append((first_prefix if not out else rest_prefix) + current)
    return lines[:first] + out + lines[last + 1:]


def apply_file(text, edits):
    """edits: (start, end, replacement, spans_lines). Refills the comments they touch."""
    edits = sorted(edits)
    out, at, shift, touched = [], 0, 0, []
    for start, end, new, spanned in edits:
        out.append(text[at:start])
        touched.append((start + shift, spanned))
        out.append(new)
        shift += len(new) - (end - start)
        at = end
    out.append(text[at:])
    text = "".join(out)
    lines = text.split("\n")
    # From the last so that a refill (which may change the line count) moves nothing still to do.
    for offset, spanned in sorted(touched, reverse=True):
        index = line_of(text, offset) - 1
        if spanned or len(lines[index]) > COLUMNS:
            lines = refill(lines, index)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tsv", help="the mapping")
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                       "..", ".."))
    parser.add_argument("--dry-run", action="store_true", help="resolve every row, write nothing")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    rows = []
    for n, line in enumerate(open(args.tsv, encoding="utf-8"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        cells = line.rstrip("\n").split("\t")
        cells += [""] * (6 - len(cells))
        rows.append(dict(file=cells[0], line=int(cells[1]), citation=cells[2], anchor=cells[3],
                         action=cells[4] or "replace", before=cells[5], tsv_line=n))
    cache, files = {}, tree_files(root)
    edits, failed = {}, 0
    for row in rows:
        where = locate(row, root, cache, files)
        label = f"{row['file']}:{row['line']} {row['citation']!r}"
        if isinstance(where, str):
            print(f"FAILED {label}: {where}")
            failed += 1
            continue
        f, start, end = where
        target = row["anchor"] if "/" in row["anchor"] else "bench/DECISIONS.md#" + row["anchor"]
        if row["action"] == "append":
            # Inside a parenthesis the citation joins it; otherwise it opens its own.
            found = cache[f][start:end]
            inside = found.count("(") > found.count(")")
            new = found + ("; " + target if inside else " (" + target + ")")
        else:
            new = target
        spanned = "\n" in cache[f][start:end] and not f.endswith(".md")
        for s, e, _, _ in edits.get(f, []):
            if start < e and s < end:
                print(f"FAILED {label}: overlaps another row in {f}")
                failed += 1
                break
        else:
            edits.setdefault(f, []).append((start, end, new, spanned))
            moved = "" if f == row["file"] else f" (now in {f})"
            print(f"ok     {label} -> {target}{moved}, line {line_of(cache[f], start)}")
    if failed:
        print(f"{failed} of {len(rows)} rows failed; nothing written")
        return 1
    if not args.dry_run:
        for f, e in edits.items():
            text = apply_file(cache[f], e)
            open(os.path.join(root, f), "w", encoding="utf-8").write(text)
            for n, line in enumerate(text.split("\n"), 1):
                if len(line) > COLUMNS and not f.endswith(".md") and "DECISIONS.md#" in line:
                    print(f"note   {f}:{n} is {len(line)} columns: refill it by hand")
    print(f"{len(rows)} rows {'resolved' if args.dry_run else 'applied'} in {len(edits)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
