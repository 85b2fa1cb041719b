#!/usr/bin/env python3
"""Lists the functions in src/ longer than the project's limit (60 lines, from the line
that names the function to its closing brace), with the file and line, and exits 1 if
there is one. Tables of data (an initializer, `= {`) are not functions and are not
counted; bindings (PYBIND11_MODULE) and the files named in EXEMPT are left out.

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


def long_functions(src, limit):
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc") or not path.is_file():
            continue
        for name, first, count in functions(path):
            if count > limit and not name.startswith(EXEMPT_NAMES):
                yield f"{path}:{first}: {name} is {count} lines (limit {limit})"


def main(argv):
    report = "--report" in argv
    argv = [a for a in argv if a != "--report"]
    limit = LIMIT
    if "--limit" in argv:
        at = argv.index("--limit")
        limit = int(argv[at + 1])
        del argv[at:at + 2]
    src = pathlib.Path(argv[0] if argv else pathlib.Path(__file__).parents[2] / "src")
    found = list(long_functions(src, limit))
    for f in found:
        print(f)
    print(f"function length: {len(found)} function(s) over {limit} lines in {src}")
    return 0 if report or not found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
