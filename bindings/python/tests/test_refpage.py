# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""mmkit.RefPage and its maps: pattern reads on every backend that works here."""

import errno
import mmap

import pytest

import mmkit

BACKENDS = ["syscall", "kmod", "memfd", "uffd"]


def available(backend: str) -> None:
    ok, why = mmkit.refpage_backend_available(backend)  # type: ignore[arg-type]
    if not ok:
        pytest.skip(f"refpage backend {backend}: {why}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_reads_as_the_pattern_until_written(backend: str) -> None:
    available(backend)
    pattern = bytes(range(64))
    size = 3 * mmap.PAGESIZE + 100
    with mmkit.RefPage(pattern, backend=backend) as rp:  # type: ignore[arg-type]
        assert rp.backend == backend and rp.contract != 0
        with rp.map(size) as m:
            assert len(m) == size and m.address % mmap.PAGESIZE == 0
            with memoryview(m) as v:
                assert not v.readonly
                assert bytes(v) == (pattern * (size // 64 + 1))[:size]
                v[mmap.PAGESIZE + 5] = 0xFF
                assert v[mmap.PAGESIZE + 5] == 0xFF
                # Written pages keep the rest of the pattern; others are untouched.
                assert bytes(v[mmap.PAGESIZE:mmap.PAGESIZE + 5]) == pattern[:5]
                assert bytes(v[2 * mmap.PAGESIZE:3 * mmap.PAGESIZE]) == pattern * (mmap.PAGESIZE // 64)


def test_a_map_of_the_default_backend() -> None:
    with mmkit.RefPage(b"\xab") as rp:
        assert rp.backend in BACKENDS
        with rp.map(10) as m, memoryview(m) as v:
            assert bytes(v) == b"\xab" * 10


def test_bad_patterns_and_backends() -> None:
    with pytest.raises(OSError) as e:
        mmkit.RefPage(b"abc")
    assert e.value.errno == errno.EINVAL and str(e.value.strerror).startswith("mmkit_refpage_create")
    with pytest.raises(ValueError):
        mmkit.RefPage(b"ab", backend="floppy")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        mmkit.RefPage("ab")  # type: ignore[arg-type]


def test_close_refused_while_views_or_maps_live() -> None:
    rp = mmkit.RefPage(b"xy")
    m = rp.map(100)
    v = memoryview(m)
    with pytest.raises(BufferError):
        m.close()
    with pytest.raises(BufferError):
        rp.close()  # a map is still open
    assert bytes(v[:4]) == b"xyxy"
    v.release()
    m.close()
    assert m.closed and repr(m) == "<mmkit.RefMap closed>"
    for use in (lambda: memoryview(m), lambda: len(m), lambda: m.address):
        with pytest.raises(ValueError):
            use()
    rp.close()
    assert rp.closed
    with pytest.raises(ValueError):
        rp.map(10)
    rp.close()


def test_maps_outlive_a_dropped_refpage_reference() -> None:
    m = mmkit.RefPage(b"q").map(5000)
    with memoryview(m) as v:
        assert bytes(v[4090:4100]) == b"q" * 10
    m.close()


def test_refmap_cannot_be_made_directly() -> None:
    with pytest.raises(TypeError):
        mmkit.RefMap()
