# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""A strict reader of the Prometheus text format 0.0.4 and OpenMetrics 1.0,
for the exporter's tests: every line must be a comment of the formats or a
sample 'name{label="value",...} number', label values escaped as the formats
say (\\\\, \\", \\n and nothing else), each family's samples together after its
HELP and TYPE.  The tests call it as

    python3 tests/metrics.py FILE [om]      checks FILE, prints the samples as JSON
"""
import json
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE = re.compile(r"(%s)(\{.*\})? (\S+)$" % NAME)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|\})')


def unescape(v):
    return re.sub(r"\\([\\\"n])", lambda m: "\n" if m.group(1) == "n" else m.group(1), v)


def labels(text, line):
    out, pos = {}, 1
    if text == "{}":
        return out
    while pos < len(text):
        m = LABEL.match(text, pos)
        if not m:
            raise ValueError("bad labels in: %r" % line)
        if m.group(1) in out:
            raise ValueError("label %s twice in: %r" % (m.group(1), line))
        out[m.group(1)] = unescape(m.group(2))
        pos = m.end()
    if not text.endswith("}"):
        raise ValueError("bad labels in: %r" % line)
    return out


def parse(text, om=False):
    """[(family, name, labels, value)], after checking the whole text."""
    lines = text.split("\n")
    if lines[-1] != "":
        raise ValueError("no newline at the end")
    lines = lines[:-1]
    if om:
        if not lines or lines[-1] != "# EOF":
            raise ValueError("OpenMetrics without # EOF at the end")
        lines = lines[:-1]
    elif "# EOF" in lines:
        raise ValueError("# EOF in the text format")
    samples, family, types, seen = [], None, {}, set()
    for line in lines:
        if line.startswith("#"):
            m = re.match(r"# (HELP|TYPE|UNIT) (%s)( .*)?$" % NAME, line)
            if not m:
                raise ValueError("bad comment: %r" % line)
            if m.group(1) == "HELP":
                if m.group(2) in seen:
                    raise ValueError("family %s twice" % m.group(2))
                family = m.group(2)
                seen.add(family)
            elif m.group(2) != family:
                raise ValueError("%s of %s after HELP of %s" % (m.group(1), m.group(2), family))
            if m.group(1) == "TYPE":
                types[family] = m.group(3).strip()
            if m.group(1) == "UNIT" and not family.endswith("_" + m.group(3).strip()):
                raise ValueError("unit %s of %s" % (m.group(3), family))
            continue
        m = SAMPLE.match(line)
        if not m:
            raise ValueError("bad sample: %r" % line)
        name = m.group(1)
        want = [family + "_total" if om and types.get(family) == "counter" else family]
        if types.get(family) in ("summary", "histogram"):
            want += [family + x for x in ("_sum", "_count", "_bucket")]
        if name not in want:
            raise ValueError("sample %s in family %s" % (name, family))
        float(m.group(3))
        samples.append((family, name, labels(m.group(2) or "{}", line), float(m.group(3))))
    return samples


if __name__ == "__main__":
    om = len(sys.argv) > 2 and sys.argv[2] == "om"
    try:
        with open(sys.argv[1], "rb") as f:
            text = f.read().decode("utf-8")
        out = parse(text, om)
    except (ValueError, UnicodeDecodeError) as e:
        sys.exit("metrics.py: %s: %s" % (sys.argv[1], e))
    json.dump([[n, l, v] for _, n, l, v in out], sys.stdout)
