#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# bench/perturb-xz.sh [BUILD_DIR] [RUNS]: xz -9 -T1 compressing a 13 KB
# file without MALLOC_PERTURB_, with glibc's MALLOC_PERTURB_=85 and with
# libmmkit-perturb.so and MALLOC_PERTURB_=85, the three in turn in each
# round (RUNS rounds, 11 by default).  Prints, per row, the medians of the
# elapsed time, max RSS and minor page faults (from wait4), and their
# ratios to the unperturbed row.  Goal: the shim within 1.5x the RSS and
# 2x the time of xz without perturb.  xz runs under /usr/bin/time (package
# time), a small process: a child forked from this script's Python would
# carry Python's RSS into its max RSS.  The elapsed time is measured around
# it, the same overhead on every row.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
runs=${2:-11}
shim="$build/libmmkit-perturb.so"
[ -f "$shim" ] || { echo "no $shim: run make first" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time (tools/install-deps: time)" >&2; exit 1; }
command -v xz >/dev/null 2>&1 || { echo "no xz (xz-utils)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The same input as tests/test-perturb-xz.sh.
awk 'BEGIN { s = 1; for (i = 0; i < 1300; i++) {
	s = (s * 1103515245 + 12345) % 2147483648; printf "line %05d %08x mmkit\n", i, s } }' |
	head -c 13000 >"$tmp/in"

python3 - "$tmp/in" "$shim" "$runs" <<'PY'
import os, statistics, subprocess, sys, time

path, shim, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
base = {k: v for k, v in os.environ.items() if k not in ("MALLOC_PERTURB_", "LD_PRELOAD")}
rows = [
    ("no perturb", base),
    ("glibc MALLOC_PERTURB_=85", dict(base, MALLOC_PERTURB_="85")),
    ("shim MALLOC_PERTURB_=85", dict(base, MALLOC_PERTURB_="85", LD_PRELOAD=shim)),
]
samples = {name: [] for name, _ in rows}
outputs = {}
for _ in range(runs):
    for name, env in rows:
        out, usage = path + ".xz", path + ".usage"
        with open(out, "wb") as f:
            t0 = time.perf_counter()
            subprocess.run(["/usr/bin/time", "-f", "%M %R", "-o", usage,
                            "xz", "-9", "-T1", "-c", path], env=env, stdout=f, check=True)
            elapsed = time.perf_counter() - t0
        with open(usage) as f:
            maxrss, minflt = map(int, f.read().split()[-2:])
        samples[name].append((elapsed * 1e3, maxrss, minflt))
        with open(out, "rb") as f:
            outputs.setdefault(name, set()).add(f.read())
if len(set.union(*outputs.values())) != 1:
    sys.exit("the three runs' outputs differ")

med = {n: [statistics.median(s[i] for s in samples[n]) for i in range(3)] for n in samples}
ref = med["no perturb"]
print(f"xz -9 -T1, 13,000-byte file, {runs} rounds, medians (ratios to no perturb)")
print(f"{'row':<26} {'time ms':>9} {'ratio':>6} {'max RSS KiB':>12} {'ratio':>6} "
      f"{'minflt':>8} {'ratio':>6}")
for name, _ in rows:
    t, r, f = med[name]
    print(f"{name:<26} {t:>9.1f} {t / ref[0]:>6.2f} {r:>12.0f} {r / ref[1]:>6.2f} "
          f"{f:>8.0f} {f / ref[2]:>6.2f}")
t, r, _ = med["shim MALLOC_PERTURB_=85"]
print(f"goal: shim RSS <= 1.5x: {'met' if r <= 1.5 * ref[1] else 'missed'} "
      f"({r / ref[1]:.2f}x); time <= 2x: {'met' if t <= 2 * ref[0] else 'missed'} "
      f"({t / ref[0]:.2f}x); outputs identical")
PY
