# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""Builds mmkit._mmkit: the binding (ext/) and libmmkit's own C files in one
extension, so no system libmmkit is needed.

The library's files are the ones lib/SOURCES lists, the list the Makefile
builds from; csrc/lib and csrc/include are symlinks into the source tree,
which an sdist stores as files (MANIFEST.in: graft csrc).  One abi3
extension for CPython 3.11 and later: the limited API of 3.11 is the first
with buffers.

Nothing is written into the source tree, so that `pip install` works from a
read-only checkout: the objects, the build tree and the egg-info go to a
temporary directory removed when setup.py exits (the sdist's release tree
too), or to MMKIT_PY_BUILD_DIR
where the caller wants them kept (tests/test-python.sh, to compile again
only what changed).  pip writes the wheel where it asks for it.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.sdist import sdist

LIMITED_API = 0x030B0000
SOURCES = Path("csrc/lib/SOURCES").read_text().split()

BUILD_DIR = os.environ.get("MMKIT_PY_BUILD_DIR")
if not BUILD_DIR:
    BUILD_DIR = tempfile.mkdtemp(prefix="mmkit-python-build-")
    atexit.register(shutil.rmtree, BUILD_DIR, ignore_errors=True)



class SdistOutOfTree(sdist):
    """sdist, its release tree made in BUILD_DIR: distutils makes it in the
    current directory, the source tree, which may be read-only."""

    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        # distutils hard-links each file; a link of a symbolic link is the
        # link (csrc/kmod/refpage/refpage.h), which would dangle in the
        # sdist: store the file it leads to.
        for name in files:
            if os.path.islink(name):
                dest = os.path.join(base_dir, name)
                os.unlink(dest)
                shutil.copyfile(name, dest)

    def make_distribution(self) -> None:
        base_dir = self.distribution.get_fullname()
        tree = os.path.join(BUILD_DIR, "sdist")
        self.make_release_tree(os.path.join(tree, base_dir), self.filelist.files)
        self.archive_files = []
        for fmt in self.formats:
            archive = self.make_archive(
                os.path.join(os.path.abspath(self.dist_dir), base_dir),
                fmt,
                root_dir=tree,
                base_dir=base_dir,
                owner=self.owner,
                group=self.group,
            )
            self.archive_files.append(archive)
            self.distribution.dist_files.append(("sdist", "", archive))
        shutil.rmtree(tree, ignore_errors=True)


setup(
    cmdclass={"sdist": SdistOutOfTree},
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
    options={
        "bdist_wheel": {"py_limited_api": "cp311"},
        "build": {"build_base": os.path.join(BUILD_DIR, "build")},
        "egg_info": {"egg_base": BUILD_DIR},
    },
)
