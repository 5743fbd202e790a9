# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""Builds mmkit._mmkit: the binding (ext/) and libmmkit's own C files in one
extension, so no system libmmkit is needed.

The library's files are the ones lib/SOURCES lists, the list the Makefile
builds from; csrc/lib and csrc/include are symlinks into the source tree,
which an sdist stores as files (MANIFEST.in: graft csrc).  Paths stay inside
this directory, so the objects land under build/.  One abi3 extension for
CPython 3.11 and later: the limited API of 3.11 is the first with buffers.
"""

from pathlib import Path

from setuptools import Extension, setup

LIMITED_API = 0x030B0000
SOURCES = Path("csrc/lib/SOURCES").read_text().split()

setup(
    ext_modules=[
        Extension(
            "mmkit._mmkit",
            sources=sorted(str(p) for p in Path("ext").glob("*.c"))
            + [f"csrc/lib/{name}" for name in SOURCES],
            depends=sorted(str(p) for p in Path("ext").glob("*.h"))
            + sorted(str(p) for p in Path("csrc/lib").glob("*.h"))
            + ["csrc/include/mmkit.h", "csrc/kmod/refpage/refpage.h", "csrc/lib/SOURCES"]
            + ["ext/_mmkit.map"],
            include_dirs=["csrc/include", "csrc/lib"],
            define_macros=[("_GNU_SOURCE", None), ("Py_LIMITED_API", hex(LIMITED_API))],
            # The library's exported calls are visible by attribute; the
            # version script keeps everything but PyInit__mmkit inside.
            extra_compile_args=["-std=gnu11", "-pthread", "-fvisibility=hidden"],
            extra_link_args=["-pthread", "-Wl,--version-script=ext/_mmkit.map"],
            py_limited_api=True,
        )
    ],
    options={"bdist_wheel": {"py_limited_api": "cp311"}},
)
