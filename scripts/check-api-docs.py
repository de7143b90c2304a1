#!/usr/bin/env python3
"""Fails on a public declaration of vkcnn's installed headers that has no doc comment (ctest
api_docs, docs/CMakeLists.txt).

Public: every declaration at namespace or extern "C" scope outside namespace `detail`, and every
public member of a class, struct or union, enumerators included. Documented: a comment on the
line just above, a comment on one of the declaration's own lines (`int x;  // what x is`), or,
for a run of declarations with no blank line between them, a documented first one (a group: the
comment above `uint64_t uploadBytes; uint64_t uploadSubmissions;` covers both). Not counted:
forward declarations, friends, `= delete` and `= default` members, destructors, copy and move
constructors and assignments, `using namespace`, static_assert, the preprocessor, and what is
inside function bodies and initializers.

    check-api-docs.py HEADER...   (exit 1, listing FILE:LINE: declaration for each one missing)
    check-api-docs.py --self-test  (the checker on small headers with known answers)
    check-api-docs.py --doxygen-filter HEADER
                                  (doxygen's INPUT_FILTER: the header with its // comments as
                                   doxygen's: /// above a declaration, ///< after one)
"""
import re
import sys

SKIPPED = [
    re.compile(r"^(class|struct|union|enum(\s+class)?)\s+\w+\s*$"),  # a forward declaration
    re.compile(r"^friend\b"),
    re.compile(r"=\s*(delete|default)$"),
    re.compile(r"^using\s+namespace\b"),
    re.compile(r"^static_assert\b"),
]


def lines_of(path):
    """[(code without comments, whether the line holds a comment)], preprocessor lines blank."""
    return lines_of_text(open(path, encoding="utf-8").read())


def lines_of_text(text):
    result, in_block, continued = [], False, False
    for raw in text.split("\n"):
        code, comment, i = "", in_block, 0
        while i < len(raw):
            if in_block:
                end = raw.find("*/", i)
                if end < 0:
                    i = len(raw)
                    continue
                i, in_block = end + 2, False
            elif raw.startswith("//", i):
                comment = True
                break
            elif raw.startswith("/*", i):
                in_block, comment, i = True, True, i + 2
            elif raw[i] in "\"'":
                end = i + 1
                while end < len(raw) and raw[end] != raw[i]:
                    end += 2 if raw[end] == "\\" else 1
                code += raw[i:end + 1]
                i = end + 1
            else:
                code += raw[i]
                i += 1
        if continued or code.strip().startswith("#"):
            continued = code.rstrip().endswith("\\")
            code = ""
        result.append((code, comment))
    return result


class Scope:
    def __init__(self, kind, name="", public=True):
        self.kind, self.name, self.public = kind, name, public


def normalized(text):
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\bVKCNN_API\b\s*", "", text)
    return re.sub(r"^template ?<[^;{]*?> ?", "", text)


def special_member(text, class_name):
    """A destructor, or a copy or move constructor or assignment of `class_name`."""
    if re.match(r"^(virtual )?~", text):
        return True
    if not class_name:
        return False
    c = re.escape(class_name)
    parameter = rf"\( ?(const )?{c} ?&&? ?\w* ?\)"
    return bool(re.match(rf"^(explicit )?{c} ?{parameter}", text) or
                re.match(rf"^{c} ?& ?operator= ?{parameter}", text))


def check(path, text=None):
    lines = lines_of(path) if text is None else lines_of_text(text)
    missing = []
    scopes = [Scope("namespace")]
    documented_end = {}  # line -> how the declaration that ended on it was documented
    statement, start = "", 0
    skip_depth = 0       # inside a function body or an initializer's braces
    skip_is_body = False
    swallow = False      # after a class's closing brace: up to its `;`

    def documented(first, last):
        """"own" (a comment on its lines), "above" (one just above, or heading its group), or
        "" (none). Only "above" carries to the next declaration of a group."""
        above = first - 1
        if above >= 1 and lines[above - 1][1] and not lines[above - 1][0].strip():
            return "above"
        if documented_end.get(above) == "above":
            return "above"
        return "own" if any(lines[n - 1][1] for n in range(first, last + 1)) else ""

    def public_here():
        return all(s.public and s.name != "detail" for s in scopes)

    def finish(text, first, last, what=None, opens=False):
        text = normalized(text)
        ok = documented(first, last)
        if not opens:  # a class's comment does not cover its first member
            documented_end[last] = ok
        if not text or not public_here():
            return
        if not opens and (any(p.search(text) for p in SKIPPED) or
                          special_member(text, scopes[-1].name)):
            return
        if not ok:
            missing.append((first, what or text[:100]))

    for number, (code, _) in enumerate(lines, 1):
        for ch in code:
            if skip_depth:
                skip_depth += {"{": 1, "}": -1}.get(ch, 0)
                if skip_depth == 0 and skip_is_body:
                    finish(statement, start, number)
                    statement = ""
                elif not skip_is_body:
                    statement += ch
                continue
            if not statement.strip():
                start = number
            scope = scopes[-1]
            if swallow:
                if ch == ";":
                    swallow, statement = False, ""
                continue
            if scope.kind == "enum" and ch in ",}":
                name = statement.split("=")[0].strip()
                if name:
                    finish(statement, start, number, f"enumerator {name} of {scope.name}")
                statement = ""
                if ch == "}":
                    scopes.pop()
                    swallow = True
                continue
            if ch == ";":
                finish(statement, start, number)
                statement = ""
            elif ch == ":" and re.fullmatch(r"\s*(public|private|protected)\s*", statement):
                scope.public = statement.strip() == "public"
                statement = ""
            elif ch == "{":
                head = normalized(statement)
                namespace = re.match(r'^(namespace(?: (\w+))?|extern "C")$', head)
                kind = re.match(r"^(?:typedef )?(class|struct|union|enum(?: class)?)\b ?(\w*)", head)
                if namespace:
                    scopes.append(Scope("namespace", namespace.group(2) or ""))
                    statement = ""
                elif kind and "(" not in head:
                    finish(statement, start, number, f"{kind.group(1)} {kind.group(2)}".strip(),
                           opens=True)
                    is_enum = kind.group(1).startswith("enum")
                    scopes.append(Scope("enum" if is_enum else "class",
                                        kind.group(2) or "(anonymous)",
                                        kind.group(1) != "class"))
                    statement = ""
                elif re.search(r"\)[\w\s&>:<,-]*$", head) and not head.endswith("="):
                    skip_depth, skip_is_body = 1, True  # a function body
                else:
                    skip_depth, skip_is_body = 1, False  # an initializer
                    statement += ch
            elif ch == "}":
                popped = scopes.pop()
                statement = ""
                swallow = popped.kind == "class"
            else:
                statement += ch
        statement += " "
    return missing


def comment_start(raw):
    """(where the line's first comment starts outside strings or -1, "//" or "/*")."""
    i = 0
    while i < len(raw):
        if raw[i] in "\"'":
            end = i + 1
            while end < len(raw) and raw[end] != raw[i]:
                end += 2 if raw[end] == "\\" else 1
            i = end + 1
        elif raw.startswith("//", i) or raw.startswith("/*", i):
            return i, raw[i:i + 2]
        else:
            i += 1
    return -1, ""


def doxygen_filter(path):
    """The comments as doxygen reads them; the file's opening comment is its \\file text."""
    first, in_block = True, False
    for raw in open(path, encoding="utf-8").read().split("\n"):
        at, kind = (-1, "") if in_block else comment_start(raw)
        line = raw
        if at >= 0 and not (raw.startswith(kind + kind[1], at) or raw.startswith("/*!", at)):
            marker = kind + kind[1] + ("<" if raw[:at].strip() else "")
            line = raw[:at] + marker + raw[at + 2:]
            if first and at == 0:  # the file's contract comment
                print(kind + kind[1] + " \\file" + (" */" if kind == "/*" else ""))
        first = False
        if kind == "/*":
            in_block = "*/" not in raw[at + 2:]
        elif in_block:
            in_block = "*/" not in raw
        print(line)


# (header text, the lines check() must report): each rule above, both ways.
SELF_TESTS = [
    ("int f();", [1]),
    ("// f's doc\nint f();", []),
    ("int f();  // f's doc", []),
    ("// f's doc\n\nint f();", [3]),                       # a blank line between
    ("// a group\nint f();\nint g();\n\nint h();", [5]),   # f documents g, not h
    ("namespace detail {\nint f();\n}", []),
    ("namespace vkcnn {\nint f();\n}", [2]),
    ("// A\nclass A {\n public:\n  int f();\n private:\n  int g();\n};", [4]),
    ("// A\nstruct A {\n  int x;\n  int y;  // y\n};", [3]),
    ("// A\nclass A {\n  int hidden;\n};", []),
    ("// A\nclass A {\n public:\n  A(const A&) = default;\n  ~A();\n  A(A&&) noexcept;\n};", []),
    ("// f\nint f() {\n  int undocumented = 1;\n  return undocumented;\n}", []),
    ("// E\nenum class E {\n  a,  // a\n  b,\n};", [4]),
    ("enum class E { a, b };", [1, 1, 1]),
    ("class Forward;\nstruct Declared;", []),
    ('/* C */\ntypedef struct s {\n  int x; /* x */\n  int y;\n} s;', [4]),
    ('extern "C" {\nvoid c_function(void);\n}', [2]),
    ("// f\nint f(int a,\n      int b);\nint g();", []),
    ("// T\ntemplate <typename T>\nT f();\n\ntemplate <typename T>\nT g();", [5]),
]


def self_test():
    failed = 0
    for text, expected in SELF_TESTS:
        found = [line for line, _ in check("<self-test>", text)]
        if found != expected:
            failed += 1
            print(f"self-test: {text!r}: reported lines {found}, expected {expected}")
    print(f"check-api-docs: self-test {len(SELF_TESTS) - failed}/{len(SELF_TESTS)} cases right")
    return 1 if failed else 0


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return self_test()
    if len(sys.argv) == 3 and sys.argv[1] == "--doxygen-filter":
        doxygen_filter(sys.argv[2])
        return 0
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    total = 0
    for path in sys.argv[1:]:
        for line, what in check(path):
            print(f"{path}:{line}: undocumented: {what}")
            total += 1
    if total:
        print(f"check-api-docs: {total} public declarations have no doc comment (a comment just "
              "above, or on the declaration's line)")
        return 1
    print(f"check-api-docs: every public declaration of {len(sys.argv) - 1} headers is documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
