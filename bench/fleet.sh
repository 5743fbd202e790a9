#!/bin/sh
# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#
# bench/fleet.sh [BUILD_DIR] [ROUNDS]: the machine-wide view's cost.
#
# 1. mmkit top against smem -m (Debian's smem, which reads every
#    /proc/PID/smaps in Python) with FLEET_PROCS (500) extra processes of
#    FLEET_MAPPINGS (100) mappings each besides the interpreter's own, half
#    of them named through the mmkit registry: both read the whole machine,
#    the same processes, in turn in each of ROUNDS (5) rounds; the medians
#    and their ratios, of the elapsed times and of the CPU times (user +
#    system: on a loaded machine the elapsed time adds the wait for a core;
#    goal: smem at least 10x slower).
# 2. One scrape of mmkit export (the text it would serve, to /dev/null)
#    with FLEET_SCRAPE_PROCS (2,000) extra processes: the median of ROUNDS,
#    and its cost per process read (goal: within Prometheus's default
#    scrape timeout, 10 s).
#
# The extra processes are forks of one Python process that mapped the
# mappings (alternately read-only and writable, so that none merge; the
# writable ones touched): their pages are shared copy-on-write, their page
# tables and smaps their own.  They are killed at the end.  Run as root to
# read every process (as another user smem and mmkit skip the same ones).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
mmkit="$build/mmkit"
lib="$build/libmmkit.so"
[ -x "$mmkit" ] && [ -f "$lib" ] || { echo "no $mmkit or $lib: run make first" >&2; exit 1; }
command -v smem >/dev/null 2>&1 || { echo "no smem (tools/install-deps)" >&2; exit 1; }

python3 - "$mmkit" "$lib" "$rounds" "${FLEET_PROCS:-500}" "${FLEET_MAPPINGS:-100}" \
	"${FLEET_SCRAPE_PROCS:-2000}" <<'PY'
import ctypes, os, resource, signal, statistics, subprocess, sys, time

mmkit, lib, rounds, procs, mappings, scrape_procs = sys.argv[1:7]
rounds, procs, mappings, scrape_procs = int(rounds), int(procs), int(mappings), int(scrape_procs)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
mm = ctypes.CDLL(lib)
mm.mmkit_name.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
PAGE = os.sysconf("SC_PAGE_SIZE")
for i in range(mappings):
    writable = i % 2 == 0
    addr = libc.mmap(None, 2 * PAGE, 1 | (2 if writable else 0), 0x22, -1, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        sys.exit("mmap: %s" % os.strerror(ctypes.get_errno()))
    if writable:
        ctypes.memset(addr, 1, PAGE)
        mm.mmkit_name(addr, 2 * PAGE, b"bench-fleet-%d" % (i % 10))

children = []

def spawn(n):
    while len(children) < n:
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            while True:
                signal.pause()
        children.append(pid)

def stop():
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    for pid in children:
        os.waitpid(pid, 0)
    children.clear()

def timed(argv):
    """(elapsed, CPU) seconds of @argv: on a loaded machine the CPU time
    (user + system, from wait4) is the cost, the elapsed time adds the wait
    for a core."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t = time.monotonic() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)

def show(what, samples):
    el, cpu = [x[0] for x in samples], [x[1] for x in samples]
    print("  %-26s elapsed median %7.3f s (min %.3f, max %.3f), CPU median %7.3f s"
          % (what, statistics.median(el), min(el), max(el), statistics.median(cpu)))
    return statistics.median(el), statistics.median(cpu)

def read_count():
    out = subprocess.run([mmkit, "top", "--json"], capture_output=True, text=True, check=True).stdout
    return int(out.rsplit('"read": ', 1)[1].split(",")[0])

def maps_of(pid):
    with open("/proc/%d/maps" % pid) as f:
        return sum(1 for _ in f)

try:
    spawn(procs)
    seen = read_count()
    print("%d extra processes of %d mappings each (%d with the interpreter's), %d processes read"
          % (procs, mappings, maps_of(children[0]), seen))
    top, smem = [], []
    for r in range(rounds):
        top.append(timed([mmkit, "top"]))
        smem.append(timed(["smem", "-m"]))
    t = show("mmkit top", top)
    s = show("smem -m", smem)
    print("  smem -m / mmkit top: %.1fx elapsed, %.1fx CPU (goal: at least 10x)"
          % (s[0] / t[0], s[1] / t[1]))
    spawn(scrape_procs)
    seen = read_count()
    scrape = [timed([mmkit, "export", "--top-processes", "10"]) for _ in range(rounds)]
    print("%d extra processes, %d processes read" % (scrape_procs, seen))
    e = show("mmkit export (one scrape)", scrape)
    print("  per process read: %.0f us elapsed, %.0f us CPU (goal: the scrape within 10 s)"
          % (e[0] / seen * 1e6, e[1] / seen * 1e6))
finally:
    stop()
PY
