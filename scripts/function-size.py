#!/usr/bin/env python3
"""Lists the functions in src/ whose body is longer than 80 lines and checks them against the
allowlist in docs/ARCHITECTURE.md ("Functions over 80 lines").

How a function is counted: the lines of its body, from the line holding the opening brace to the
line holding the closing brace, both included (the signature is not counted). A function is any
function or method defined at namespace or class scope; a lambda, a local class or a nested block is
part of the function that holds it and is not counted on its own. A brace initializer at namespace
or class scope (a table, `= {...}`) is not a function.

The scan is a brace match over the text with comments, string literals (raw strings included),
character literals and preprocessor lines blanked out; it is a heuristic for this code base, not a
C++ parser, and `--self-test` shows what it gets right.

Usage:
  scripts/function-size.py            check src/ against the allowlist (exit 1 on a difference)
  scripts/function-size.py --list     print every function over the limit, longest first
  scripts/function-size.py --self-test
"""

import bisect
import re
import sys
from pathlib import Path

LIMIT = 80
ROOT = Path(__file__).resolve().parent.parent
ALLOWLIST_DOC = ROOT / "docs" / "ARCHITECTURE.md"
ALLOWLIST_HEADING = "## Functions over 80 lines"
# Entries of rooms other work is splitting now; they do not count towards the goal of at most
# MAX_JUSTIFIED entries.
TO_SPLIT_MARK = "to split:"
MAX_JUSTIFIED = 8


RAW_STRING = re.compile(r'R"([^()\\\s]{0,16})\(')


RAW_PREFIX = re.compile(r"(?:^|\W)(?:u8|u|U|L)?$")


def blank_noncode(text):
    """Returns text of the same length and line breaks with comments, literals and preprocessor
    lines replaced by spaces (a literal keeps its quotes so `extern "C"` stays readable)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A preprocessor line, with its backslash continuations.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        raw = RAW_STRING.match(text, i) if c == "R" else None
        # R"delim( starts a raw string unless the R ends a longer name (u8R, uR, UR and LR do too).
        if raw and RAW_PREFIX.search(text[max(0, i - 3):i]):
            end = text.find(")" + raw.group(1) + '"', raw.end())
            j = n if end < 0 else end + len(raw.group(1)) + 2
            out.append('"' + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + '"')
            i = j
            continue
        if c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            # A string or character literal; a ' after a digit or letter is a digit separator.
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c)
            i = j
            continue
        # Plain code up to the next character that may start something to blank.
        j = INTERESTING.search(text, i + 1)
        j = n if j is None else j.start()
        out.append(text[i:j])
        tail = text[i:j].rstrip(" \t")
        if tail.endswith("\n"):
            at_line_start = True
        elif tail:
            at_line_start = False
        i = j
    return "".join(out)


INTERESTING = re.compile(r"[#/\"'R]")


def brace_pairs(code):
    """{offset of each '{': offset of its matching '}'} (an unclosed one runs to the end)."""
    pairs, stack = {}, []
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            pairs[stack.pop()] = m.start()
    for open_at in stack:
        pairs[open_at] = len(code) - 1
    return pairs


def top_level(header):
    """The header with the contents of (...) and <...>-free bracket groups removed."""
    out, depth = [], 0
    for ch in header:
        if ch == "(":
            if depth == 0:
                out.append("(")
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                out.append(")")
        elif depth == 0:
            out.append(ch)
    return "".join(out)


NAME_BEFORE_PAREN = re.compile(r"((?:[A-Za-z_]\w*(?:<[^<>()]*>)?\s*::\s*)*~?(?:operator\s*(?:\(\)|[^\s(]+)|[A-Za-z_]\w*))\s*$")


def function_name(header):
    """The (qualified) name before the parameter list, or None when the header is no function."""
    text = re.sub(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+", "", header)
    op = re.search(r"\boperator\s*\(\s*\)\s*\(", text)
    paren = op.end() - 1 if op else text.find("(")
    if paren < 0:
        return None
    m = NAME_BEFORE_PAREN.search(text[:paren])
    if not m:
        return None
    return re.sub(r"\s+", "", m.group(1))


def classify(header):
    """What a '{' at namespace or class scope opens: 'namespace', 'class', 'function', or 'other'
    (an initializer, a table)."""
    flat = top_level(header)
    stripped = re.sub(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+", "", flat).strip()
    if re.match(r"^(?:inline\s+)?namespace\b", stripped) or re.match(r'^extern\s*"', stripped):
        return "namespace"
    no_template = re.sub(r"^template\s*<.*?>\s*", "", stripped, flags=re.S)
    if re.match(r"^(?:class|struct|union|enum)\b", no_template) and "(" not in no_template:
        return "class"
    if "(" not in flat:
        return "other"
    before_paren = flat[:flat.find("(")]
    if "=" in before_paren and "operator" not in before_paren:
        return "other"
    if function_name(header) is None:
        return "other"
    return "function"


def class_name(header):
    m = re.search(r"\b(?:class|struct|union)\s+(?:\[\[[^\]]*\]\]\s*)?(?:alignas\([^)]*\)\s*)?([A-Za-z_]\w*)",
                  top_level(header))
    return m.group(1) if m else ""


STATEMENT_END = re.compile(r"[;{}]")


def scan(text):
    """Yields (name, body_lines, first_line) for every function body in text."""
    code = blank_noncode(text)
    closing = brace_pairs(code)
    newlines = [m.start() for m in re.finditer("\n", code)]

    def line_of(offset):
        return bisect.bisect_left(newlines, offset) + 1

    results = []

    def walk(start, end, prefix):
        header_start = start
        k = start
        while True:
            m = STATEMENT_END.search(code, k, end)
            if not m:
                break
            k = m.start()
            ch = code[k]
            if ch in ";}":
                header_start = k + 1
            elif ch == "{":
                header = code[header_start:k]
                kind = classify(header)
                close = closing[k]
                flat = top_level(header)
                first_paren = flat.find(")")
                after = flat[first_paren + 1:] if first_paren >= 0 else ""
                # A brace initializer in a constructor's member-initializer list (`: a_{x}`): part
                # of the header, not the body.
                if kind == "function" and re.search(r"(?<!:):(?!:)", after) and re.search(r"[\w>]\s*$", after):
                    k = close + 1
                    continue
                if kind == "namespace":
                    walk(k + 1, close, prefix)
                elif kind == "class":
                    name = class_name(header)
                    walk(k + 1, close, prefix + name + "::" if name else prefix)
                elif kind == "function":
                    name = function_name(header)
                    if "::" not in name:
                        name = prefix + name
                    results.append((name, line_of(close) - line_of(k) + 1, line_of(k)))
                k = close
                header_start = close + 1
            k += 1

    walk(0, len(code), "")
    return results


def source_files():
    for path in sorted((ROOT / "src").rglob("*.cpp")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.endswith("_test.cpp") or "/third_party/" in rel:
            continue
        yield rel, path


def long_functions():
    found = []
    for rel, path in source_files():
        for name, lines, first in scan(path.read_text(encoding="utf-8", errors="replace")):
            if lines > LIMIT:
                found.append((rel, name, lines, first))
    return found


ENTRY = re.compile(r"^\s*[-*]\s+`?(src/\S+?\.cpp):\s*([^`\s]+)`?\s+—\s+(.+)$")


def allowlist():
    """{(file, function): why} from the allowlist section of docs/ARCHITECTURE.md."""
    entries = {}
    in_section = False
    for line in ALLOWLIST_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            in_section = line.strip() == ALLOWLIST_HEADING
            continue
        m = ENTRY.match(line) if in_section else None
        if m:
            entries[(m.group(1), m.group(2))] = m.group(3)
    return entries


def check():
    found = long_functions()
    allowed = allowlist()
    problems = []
    over = {(rel, name) for rel, name, _, _ in found}
    for rel, name, lines, first in found:
        if (rel, name) not in allowed:
            problems.append(f"{rel}:{first}: {name} has a {lines}-line body (limit {LIMIT}); split it, "
                            f"or name and justify it in {ALLOWLIST_DOC.relative_to(ROOT)} ({ALLOWLIST_HEADING[3:]})")
    for (rel, name) in sorted(allowed):
        if (rel, name) not in over:
            problems.append(f"{ALLOWLIST_DOC.relative_to(ROOT)}: {rel}: {name} is on the allowlist but has "
                            f"no body over {LIMIT} lines (any more); remove the entry")
    justified = [key for key, why in allowed.items() if TO_SPLIT_MARK not in why]
    if len(justified) > MAX_JUSTIFIED:
        problems.append(f"{ALLOWLIST_DOC.relative_to(ROOT)}: {len(justified)} justified entries; at most "
                        f"{MAX_JUSTIFIED} (tables and single algorithms)")
    for p in problems:
        print(p, file=sys.stderr)
    to_split = len(allowed) - len(justified)
    print(f"function-size: {len(found)} functions over {LIMIT} lines in src/ ({len(justified)} justified, "
          f"{to_split} to split); {len(problems)} problem(s)")
    return 1 if problems else 0


SELF_TEST_INPUT = r'''
#include <string>  // a { in a comment
#define BRACE {
namespace cko::demo {
namespace {
/* a block comment with { braces
   over lines } } */
const char* kText = "a string with { and \" and }";
const char kBrace = '{';
const char* kRaw = R"x(raw { text )" with } braces
on two lines {{ )x";
const int kTable[] = {
    1, 2,
    3,
};
int helper(int a) {
    auto twice = [](int b) {
        return b * 2;
    };
    if (a > 0) {
        return twice(a);
    }
    return 1'000;
}
}  // namespace

class Widget : public Base<int> {
public:
    Widget(int a) : a_(a), b_{a} {
        a_ += b_;
    }
    int size() const {
        return a_;
    }
    bool operator==(const Widget& o) const { return a_ == o.a_; }
    void call();

private:
    struct Inner {
        int get() { return 1; }
    };
    int a_{0};
    int b_ = {1};
};

void Widget::call() {
    std::string s = "}";
    char c = '}';
    // }
}

auto trailing(int x) -> std::string {
    return std::to_string(x);
}
}  // namespace cko::demo
'''

SELF_TEST_EXPECTED = [
    ("helper", 9),
    ("Widget::Widget", 3),
    ("Widget::size", 3),
    ("Widget::operator==", 1),
    ("Widget::Inner::get", 1),
    ("Widget::call", 5),
    ("trailing", 3),
]


def self_test():
    got = [(name, lines) for name, lines, _ in scan(SELF_TEST_INPUT)]
    if got != SELF_TEST_EXPECTED:
        print(f"function-size self-test: expected {SELF_TEST_EXPECTED}\n  got {got}", file=sys.stderr)
        return 1
    # The same text with one body made longer than the limit is reported.
    long_body = SELF_TEST_INPUT.replace("    return 1'000;\n", "    x();\n" * 80 + "    return 1'000;\n")
    longest = max(scan(long_body), key=lambda r: r[1])
    if longest[:2] != ("helper", 89):
        print(f"function-size self-test: expected helper with 89 lines, got {longest}", file=sys.stderr)
        return 1
    print(f"function-size self-test: {len(got)} functions counted right")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:] == ["--list"]:
        for rel, name, lines, first in sorted(long_functions(), key=lambda r: -r[2]):
            print(f"{lines:4d}  {rel}:{first}  {name}")
        return 0
    if len(argv) > 1:
        print(__doc__, file=sys.stderr)
        return 2
    return check()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
