# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""mmkit.regions() beside psutil's Process.memory_maps(grouped=False), in one run.

Makes named, secret and reference-page memory, prints what each call
reports for them, then makes the process hold about 10,000 mappings and
times both calls on it.  Prints a Markdown report (bindings/python/README.md
quotes one).  Needs psutil: python3-psutil, or pip install psutil.

    python bench/compare_psutil.py [--mappings N] [--runs N]
"""

from __future__ import annotations

import argparse
import ctypes
import mmap
import os
import platform
import statistics
import time
from collections.abc import Callable

import psutil

import mmkit


def address_of(m: mmap.mmap) -> int:
    view = ctypes.c_char.from_buffer(m)
    try:
        return ctypes.addressof(view)
    finally:
        del view


def secret_address(s: mmkit.Secret) -> int:
    view = (ctypes.c_char * len(s)).from_buffer(s)
    try:
        return ctypes.addressof(view)
    finally:
        del view


def per_call(fn: Callable[[], object], runs: int) -> float:
    """Median seconds per call over runs calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def describe(address: int) -> tuple[str, str]:
    """What each call reports for the mapping holding address."""
    ours = next((r for r in mmkit.regions() if r.start <= address < r.end), None)
    theirs = next((m for m in psutil.Process().memory_maps(grouped=False)
                   if int(m.addr.split("-")[0], 16) <= address < int(m.addr.split("-")[1], 16)),
                  None)
    mk = (f"`{ours.path or '(empty)'}` {ours.perms} kind={ours.kind} rss={ours.rss // 1024} KiB"
          if ours else "(not listed)")
    ps = (f"`{theirs.path or '(empty)'}` {theirs.perms} rss={theirs.rss // 1024} KiB"
          if theirs else "(not listed)")
    return mk, ps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mappings", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    page = mmap.PAGESIZE
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS

    named = mmap.mmap(-1, 4 * page, flags=flags)
    mmkit.name(named, "session keys")
    named[0] = 1
    small = mmkit.Secret(32)
    paged = mmkit.Secret(3 * page, pages=True)
    memoryview(paged)[0] = 1
    rp = mmkit.RefPage(b"\x5a" * 64)
    ref = rp.map(16 * page)
    memoryview(ref)[0] = 1
    rows = [
        ("named (mmkit.name, 4 pages, 1 written)", address_of(named)),
        ("Secret(32), pooled", secret_address(small)),
        ("Secret(3 pages, pages=True, 1 written)", secret_address(paged)),
        (f"RefPage map, {rp.backend} backend (16 pages, 1 written)", ref.address),
    ]
    maps = [ref]
    if rp.backend != "uffd" and mmkit.refpage_backend_available("uffd")[0]:
        uffd = mmkit.RefPage(b"\x5a" * 64, backend="uffd").map(16 * page)
        memoryview(uffd)[0] = 1
        rows.append(("RefPage map, uffd backend (16 pages, 1 written)", uffd.address))
        maps.append(uffd)
    features = mmkit.probe()
    print(f"Linux {platform.release()}, Python {platform.python_version()}, "
          f"psutil {psutil.__version__}; names: {features['names'].backend}, "
          f"secret: {features['secret'].backend}, refpage: {rp.backend}\n")
    print("| memory | mmkit.regions() | psutil memory_maps(grouped=False) |")
    print("|---|---|---|")
    for label, address in rows:
        mk, ps = describe(address)
        print(f"| {label} | {mk} | {ps} |")

    # Mappings that cannot merge: neighbours differ in protection.
    keep = [mmap.mmap(-1, page, flags=flags,
                      prot=mmap.PROT_READ if i % 2 else mmap.PROT_READ | mmap.PROT_WRITE)
            for i in range(args.mappings)]
    count = len(mmkit.regions())
    ours = per_call(mmkit.regions, args.runs)
    theirs = per_call(lambda: psutil.Process(os.getpid()).memory_maps(grouped=False), args.runs)
    print(f"\nTime per call on this process with {count} mappings "
          f"(median of {args.runs}):\n")
    print("| call | ms per call |")
    print("|---|---|")
    print(f"| mmkit.regions() | {ours * 1e3:.1f} |")
    print(f"| psutil Process.memory_maps(grouped=False) | {theirs * 1e3:.1f} |")
    del keep
    for m in maps:
        m.close()
    rp.close()
    small.close()
    paged.close()


if __name__ == "__main__":
    main()
