#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# No dead relative link in the project's Markdown: every [text](target)
# and ![alt](target) of README.md, docs/ and the bindings' READMEs that is
# not a URL names a file or directory of the tree, and its #anchor, if
# any, a heading of the Markdown file it points to (GitHub's anchors:
# lower case, punctuation but - and _ dropped, spaces as -).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
command -v python3 >/dev/null || { echo "SKIP: no python3 to read the Markdown"; exit 77; }
python3 - "$top" <<'PY'
import os, re, subprocess, sys
top = sys.argv[1]
files = subprocess.run(["git", "-C", top, "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], capture_output=True,
                       text=True).stdout.split() or [
    os.path.relpath(os.path.join(d, f), top) for d, _, fs in os.walk(top) for f in fs
    if f.endswith(".md") and "/build" not in d]
link = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
fence = re.compile(r"^\s*```")

def anchors(path):
    found, inside = set(), False
    for line in open(path, encoding="utf-8"):
        if fence.match(line):
            inside = not inside
        if inside or not line.startswith("#"):
            continue
        text = line.lstrip("#").strip().lower()
        slug = re.sub(r"[^\w\- ]", "", text).replace(" ", "-")
        n = 0
        while (slug if n == 0 else f"{slug}-{n}") in found:
            n += 1
        found.add(slug if n == 0 else f"{slug}-{n}")
    return found

bad, checked = [], 0
for f in files:
    path = os.path.join(top, f)
    inside = False
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        if fence.match(line):
            inside = not inside
        if inside or line.startswith("    "):
            continue
        for target in link.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            checked += 1
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append(f"{f}:{i}: {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                bad.append(f"{f}:{i}: {target}: no heading #{anchor} in {os.path.relpath(dest, top)}")
for b in bad:
    print("FAIL: " + b)
print(f"{checked} relative links in {len(files)} Markdown files, {len(bad)} dead")
sys.exit(1 if bad else 0)
PY
