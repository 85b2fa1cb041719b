#!/usr/bin/env python3
"""Lists the functions in src/ longer than the project's limit (60 lines, from the line
that names the function to its closing brace), with the file and line, and exits 1 if
there is one. Tables of data (an initializer, `= {`) are not functions and are not
counted; bindings (PYBIND11_MODULE) are left out.

A function that is itself a table of data or bindings (a schema listing, one call per
flag) may be exempted by a marker on the line just before its first line, with the reason:

    // function-length: table (the tools' JSON schemas, one entry per tool)

Exempted functions are listed and counted on every run, so the exemptions stay visible;
a marker without a reason in parentheses is refused (the run fails).

A reader's tool, not a compiler: comments, strings and raw strings are blanked, then
braces are matched; a body opens a function when what precedes it at namespace or class
level has a parameter list and no `=`.

usage: check_function_length.py [--report] [--limit N] [SRC_DIR]
  --report  print the list and the count, and exit 0 either way
"""
import pathlib
import re
import sys

LIMIT = 60
EXEMPT_NAMES = ("PYBIND11_MODULE",)
TABLE_MARKER = re.compile(r"^\s*//\s*function-length:\s*table\b(.*)$")
TABLE_REASON = re.compile(r"^\s*\(\S.*\)\s*$")
CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum|extern\s+\"C\")\b")
RAW_STRING = re.compile(r'R"([^(\s]{0,16})\((.*?)\)\1"', re.S)


def blank(text):
    """The text with comments, string and character literals replaced by spaces (newlines kept)."""
    text = RAW_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j, n - 1) - i + 1))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(name, first line, line count) of each function body at namespace or class level."""
    text = blank(path.read_text(errors="replace"))
    stack = []  # one of "container", "function", "other" per open brace
    statement_start, statement = None, []
    line = 1
    opened = None  # (name, line) of the function being measured
    for c in text:
        if c == "\n":
            line += 1
        top = stack[-1] if stack else "container"
        if top == "container":
            if c in ";}":
                statement, statement_start = [], None
            elif c != "{" and not c.isspace():
                if statement_start is None:
                    statement_start = line
                statement.append(c)
            elif c.isspace() and statement:
                statement.append(" ")
        if c == "{":
            head = "".join(statement)
            if top != "container":
                stack.append("other")
            elif head.startswith("#") or CONTAINER.search(head.split("(")[0]):
                stack.append("container")
            elif "(" in head and "=" not in head.split("(")[0]:
                stack.append("function")
                name = re.findall(r"([A-Za-z_~][\w:~<>]*)\s*\(", head)
                opened = (name[0] if name else head[:40], statement_start or line)
            else:
                stack.append("other")
            statement, statement_start = [], None
        elif c == "}" and stack:
            kind = stack.pop()
            if kind == "function" and opened:
                yield opened[0], opened[1], line - opened[1] + 1
                opened = None


def table_marker(lines, first):
    """The text after `function-length: table` on the line before line `first`, or None."""
    if first < 2:
        return None
    match = TABLE_MARKER.match(lines[first - 2])
    return match.group(1) if match else None


def long_functions(src, limit):
    """(problems, exempted): functions over the limit, and tables exempted by a marker."""
    problems, exempted = [], []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        lines = path.read_text(errors="replace").split("\n")
        for name, first, count in functions(path):
            if count <= limit or name.startswith(EXEMPT_NAMES):
                continue
            where = f"{path}:{first}: {name} is {count} lines"
            reason = table_marker(lines, first)
            if reason is None:
                problems.append(f"{where} (limit {limit})")
            elif not TABLE_REASON.match(reason):
                problems.append(f"{where}: its function-length marker needs a reason: "
                                "// function-length: table (why)")
            else:
                exempted.append(f"{where}, exempted as a table {reason.strip()}")
    return problems, exempted


def main(argv):
    report = "--report" in argv
    argv = [a for a in argv if a != "--report"]
    limit = LIMIT
    if "--limit" in argv:
        at = argv.index("--limit")
        limit = int(argv[at + 1])
        del argv[at:at + 2]
    src = pathlib.Path(argv[0] if argv else pathlib.Path(__file__).parents[2] / "src")
    found, exempted = long_functions(src, limit)
    for f in found + exempted:
        print(f)
    print(f"function length: {len(found)} function(s) over {limit} lines in {src}; "
          f"{len(exempted)} exempted as tables")
    return 0 if report or not found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
