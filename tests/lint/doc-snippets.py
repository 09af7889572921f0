#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every C++ code block in README.md and docs/*.md quotes compiled code.

A ```cpp block must follow a line <!-- example: PATH REGION --> and hold
exactly the lines of PATH between "// docs:begin REGION" and
"// docs:end REGION" (common leading tabs removed). PATH is built: a file of
examples/ or of a test, so a documented call that does not exist fails the
build, and a doc that no longer quotes it fails this test.

    tests/lint/doc-snippets.py SRC
"""
import pathlib
import re
import sys

MARK = re.compile(r"<!--\s*example:\s*(\S+)\s+(\S+)\s*-->")


def region(path, name):
    lines = path.read_text().split("\n")
    try:
        start = lines.index(next(l for l in lines if l.strip() == f"// docs:begin {name}"))
        end = lines.index(next(l for l in lines if l.strip() == f"// docs:end {name}"))
    except StopIteration:
        return None
    body = lines[start + 1:end]
    indent = min((len(l) - len(l.lstrip("\t")) for l in body if l.strip()), default=0)
    return [l[indent:] for l in body]


def main():
    src = pathlib.Path(sys.argv[1])
    bad = checked = 0
    for doc in [src / "README.md", *sorted((src / "docs").glob("*.md"))]:
        lines = doc.read_text().split("\n")
        i = 0
        while i < len(lines):
            if not re.match(r"^```(cpp|c\+\+)\s*$", lines[i]):
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            block, where = lines[i + 1:end], f"{doc.relative_to(src)}:{i + 1}"
            mark = MARK.search(lines[i - 1]) if i > 0 else None
            checked += 1
            if not mark:
                print(f"{where}: C++ block without <!-- example: PATH REGION --> before it")
                bad += 1
            else:
                want = region(src / mark[1], mark[2])
                if want is None:
                    print(f"{where}: no region '{mark[2]}' in {mark[1]}")
                    bad += 1
                elif want != block:
                    print(f"{where}: differs from {mark[1]} region {mark[2]}; it should read:")
                    print("\n".join("    " + l for l in want))
                    bad += 1
            i = end + 1
    print(f"doc-snippets: {checked} C++ blocks checked, {bad} not quoting built code")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
