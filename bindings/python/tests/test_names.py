# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""mmkit.name, name_range and regions: names seen by regions, in psutil's shape."""

import ctypes
import errno
import mmap
import os
import sys

import psutil
import pytest

import mmkit


def address_of(m: mmap.mmap) -> int:
    view = ctypes.c_char.from_buffer(m)
    try:
        return ctypes.addressof(view)
    finally:
        del view


def region_at(address: int) -> mmkit.Region:
    return next(r for r in mmkit.regions() if r.start <= address < r.end)


def test_a_named_buffer_is_seen_by_regions() -> None:
    m = mmap.mmap(-1, 4 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    start = address_of(m)
    mmkit.name(m, "py test-names")
    r = region_at(start)
    assert (r.start, r.end) == (start, start + 4 * mmap.PAGESIZE)
    assert r.name == "py test-names" and r.path == "[anon:py test-names]"
    assert r.kind in ("anon_named", "registry")
    assert r.addr == f"{r.start:08x}-{r.end:08x}" and r.perms == "rw-p" and r.size == 4 * mmap.PAGESIZE
    mmkit.name(m, None)
    r = region_at(start)
    assert r.name == "" and r.kind == "anon" and r.path == "[anon]"
    m.close()


def unmergeable(pages: int) -> mmap.mmap:
    """Anonymous memory whose mapping the kernel never merges with a
    neighbour (shared: an object of its own), so that it is one region in
    psutil's view too, also where its name is only mmkit's registry's."""
    return mmap.mmap(-1, pages * mmap.PAGESIZE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)


def test_regions_unpack_as_psutil_memory_maps() -> None:
    m = unmergeable(8)
    m[0] = m[3 * mmap.PAGESIZE] = 1
    mmkit.name(m, "py-psutil-side-by-side")
    ours = region_at(address_of(m))
    theirs = next(t for t in psutil.Process().memory_maps(grouped=False) if t.addr == ours.addr)
    assert mmkit.Region._fields[: len(theirs._fields)] == theirs._fields
    addr, perms, path, rss, size, pss, *figures, swap = ours[: len(theirs)]
    assert (addr, perms, rss, size, pss, swap) == (
        theirs.addr, theirs.perms, theirs.rss, theirs.size, theirs.pss, theirs.swap)
    assert figures == list(theirs[6:12]) and rss == 2 * mmap.PAGESIZE
    # The kernel shows a registry name nowhere: psutil sees "[anon]" there.
    assert path == (theirs.path if ours.kind == "anon_named" else "[anon_shmem:py-psutil-side-by-side]")
    mmkit.name(m, None)  # a registry name outlives the mapping: cleared first
    m.close()


def test_regions_grouped_sum_by_path_as_psutil() -> None:
    maps = [unmergeable(2) for _ in range(2)]
    for i, m in enumerate(maps):
        m[0] = 1
        m[mmap.PAGESIZE] = i  # a write of 0 too: a page of its own, not the zero page
        mmkit.name(m, "py-grouped")
    groups = mmkit.regions(grouped=True)
    assert len({g.path for g in groups}) == len(groups)
    g = next(g for g in groups if g.path == "[anon_shmem:py-grouped]")
    assert (g.regions, g.size, g.rss, g.private_dirty) == (2, 4 * mmap.PAGESIZE, 4 * mmap.PAGESIZE, 4 * mmap.PAGESIZE)
    theirs = psutil.Process().memory_maps(grouped=True)
    assert mmkit.RegionGroup._fields[: len(theirs[0]._fields)] == theirs[0]._fields
    # Every file once, in the order psutil gives them (first seen); psutil
    # drops the kernel's " (deleted)" where the path is gone, mmkit keeps
    # it; shared anonymous memory is "/dev/zero (deleted)" to the kernel
    # unless named, also where only mmkit's registry has the name.
    def files(paths: list[str]) -> list[str]:
        return [p.removesuffix(" (deleted)") for p in paths
                if p.startswith("/") and not p.startswith("/dev/zero")]
    assert files([g.path for g in groups]) == files([t.path for t in theirs])
    assert all(isinstance(g, mmkit.RegionGroup) for g in mmkit.regions(os.getpid(), True))
    flag = len(maps) > 1  # a bool known only at run time: the union of both
    assert isinstance(mmkit.regions(0, flag)[0], mmkit.RegionGroup)
    for m in maps:
        mmkit.name(m, None)
        m.close()


def test_name_range_names_part_of_a_mapping() -> None:
    m = mmap.mmap(-1, 4 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    start = address_of(m)
    mmkit.name_range(start + mmap.PAGESIZE, mmap.PAGESIZE + 1, "two pages")
    r = region_at(start + mmap.PAGESIZE)
    assert (r.start, r.end, r.name) == (start + mmap.PAGESIZE, start + 3 * mmap.PAGESIZE, "two pages")
    assert region_at(start).name == ""
    m.close()


def test_a_buffer_not_covering_whole_pages_is_einval() -> None:
    m = mmap.mmap(-1, 2 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    with memoryview(m) as v:
        for part in (v[1:mmap.PAGESIZE + 1], v[:mmap.PAGESIZE + 1], v[:10]):
            with pytest.raises(OSError) as e:
                mmkit.name(part, "x")
            assert e.value.errno == errno.EINVAL
            assert str(e.value.strerror).startswith("mmkit_name_pages: ")
            assert "does not cover whole pages" in str(e.value.strerror)
            assert "name_range" in str(e.value.strerror)
            part.release()
        # An empty buffer names nothing, as in Rust and Go.
        with v[:0] as empty:
            mmkit.name(empty, "x")
    with pytest.raises(OSError) as e:
        mmkit.name_range(address_of(m) + 1, 10, "x")
    assert e.value.errno == errno.EINVAL and str(e.value.strerror).startswith("mmkit_name")
    m.close()


@pytest.mark.parametrize("bad", ["a$b", "back`tick", "[x]", "é", "x" * mmkit.NAME_MAX, "tab\t"])
def test_bad_names_are_einval_with_the_library_text(bad: str) -> None:
    m = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    with pytest.raises(OSError) as e:
        mmkit.name(m, bad)
    assert e.value.errno == errno.EINVAL and str(e.value.strerror).startswith("mmkit_name_pages: ")
    mmkit.name(m, "x" * (mmkit.NAME_MAX - 1))
    with pytest.raises(ValueError):
        mmkit.name(m, "nul\0inside")
    with pytest.raises(TypeError):
        mmkit.name(m, b"bytes")  # type: ignore[arg-type]
    m.close()


def test_a_uffd_refmap_can_be_named() -> None:
    ok, why = mmkit.refpage_backend_available("uffd")
    if not ok:
        pytest.skip(f"uffd: {why}")
    with mmkit.RefPage(b"r", backend="uffd") as rp, rp.map(2 * mmap.PAGESIZE) as m:
        mmkit.name(m, "refpage")
        r = region_at(m.address)
        assert r.name == "refpage" and r.size == 2 * mmap.PAGESIZE


def test_regions_errors() -> None:
    with pytest.raises(OSError) as e:
        mmkit.regions(-1)
    assert e.value.errno == errno.EINVAL
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    with pytest.raises(ProcessLookupError) as e2:
        mmkit.regions(pid)
    assert str(pid) in str(e2.value.strerror)


def test_regions_of_this_process_in_order() -> None:
    rs = mmkit.regions(os.getpid())
    assert rs and all(a.end <= b.start for a, b in zip(rs, rs[1:]))
    assert any(r.kind == "stack" and r.path == "[stack]" for r in rs)
    assert all(r.size == r.end - r.start and len(r.perms) == 4 for r in rs)


def test_naming_a_hole_or_a_file_says_why() -> None:
    with pytest.raises(OSError) as e:
        mmkit.name_range(0, mmap.PAGESIZE, "x")
    assert e.value.errno == errno.ENOMEM and "is not mapped" in str(e.value.strerror)
    with open(sys.executable, "rb") as f:
        m = mmap.mmap(f.fileno(), mmap.PAGESIZE, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
    with pytest.raises(OSError) as e:
        mmkit.name(m, "x")
    assert e.value.errno == errno.EBADF and "is a file mapping" in str(e.value.strerror)
    m.close()
    if mmkit.secret_stats().backend == "memfd_secret":
        with mmkit.Secret(mmap.PAGESIZE, pages=True) as s:
            with pytest.raises(OSError) as e:
                mmkit.name(s, "x")
            assert e.value.errno == errno.EBADF and "is a file mapping" in str(e.value.strerror)
    with pytest.raises(OSError) as e:
        mmkit.name_valid("no$dollar")
    assert e.value.errno == errno.EINVAL and "0x24" in str(e.value.strerror)
    mmkit.name_valid("fine name")
    mmkit.name_valid(None)
    with pytest.raises(OSError) as e:
        mmkit.name_range(0, -1, "x")
    assert e.value.strerror == "mmkit_name: length -1 is negative"
