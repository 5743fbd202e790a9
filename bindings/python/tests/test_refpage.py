# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""mmkit.RefPage and its maps: pattern reads on every backend that works here."""

import errno
import mmap
from typing import Any, Callable, Iterable, cast

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


def test_refmap_indexes_and_slices_as_mmap_does() -> None:
    size = 2 * mmap.PAGESIZE + 10
    pattern = bytes(range(16))
    with mmkit.RefPage(pattern) as rp, rp.map(size) as m:
        ref = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        ref[:] = (pattern * (size // 16 + 1))[:size]
        assert len(m) == len(ref) == size
        for key in (0, 5, -1, -size, size - 1):
            assert m[key] == ref[key] and isinstance(m[key], int)
        for part in (slice(None), slice(3, 40), slice(-20, None), slice(None, None, 3),
                     slice(None, None, -1), slice(100, 2, -7), slice(size + 5, size + 9),
                     slice(40, 3)):
            assert m[part] == ref[part] and isinstance(m[part], bytes)
        for bad in (size, -size - 1, 1 << 70):
            with pytest.raises(IndexError):
                m[bad]
        with pytest.raises(TypeError):
            m["0"]  # type: ignore[call-overload]
        m[0] = 0xFE
        m[-1] = 7
        ref[0], ref[-1] = 0xFE, 7
        m[mmap.PAGESIZE:mmap.PAGESIZE + 3] = b"abc"
        ref[mmap.PAGESIZE:mmap.PAGESIZE + 3] = b"abc"
        m[1:30:4] = bytes(range(8))
        ref[1:30:4] = bytes(range(8))
        m[::-1000] = bytes(len(range(size - 1, -1, -1000)))
        ref[::-1000] = bytes(len(range(size - 1, -1, -1000)))
        m[20:24] = memoryview(m)[0:4]
        ref[20:24] = ref[0:4]
        assert m[:] == ref[:]
        with pytest.raises(IndexError):
            m[size] = 1
        with pytest.raises(ValueError):
            m[0] = 256
        with pytest.raises(TypeError):
            m[0] = b"a"  # type: ignore[call-overload]
        with pytest.raises(IndexError):
            m[0:3] = b"ab"
        with pytest.raises(TypeError):
            del m[0]  # type: ignore[attr-defined]
        ref.close()
    assert m.closed
    for use in (lambda: m[0], lambda: m[0:1]):
        with pytest.raises(ValueError):
            use()
    with pytest.raises(ValueError):
        m[0] = 1


def outcome(call: Callable[[], object]) -> object:
    """What a call returned, or the type and words of what it raised."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return (type(e), str(e))


def test_refmap_reads_writes_seeks_and_finds_as_mmap_does() -> None:
    size = mmap.PAGESIZE + 40
    pattern = b"line one\nline two\n\x00\xff"
    with mmkit.RefPage(pattern[:16]) as rp, rp.map(size) as m:
        ref = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        ref[:] = (pattern[:16] * (size // 16 + 1))[:size]
        Op = Callable[["mmap.mmap | mmkit.RefMap"], object]
        script: list[Op] = [
            lambda o: o.tell(), lambda o: o.readline(), lambda o: o.tell(),
            lambda o: o.read(5), lambda o: o.read_byte(), lambda o: o.find(b"line"),
            lambda o: o.find(b"line", 0), lambda o: o.find(b"one", -100, -1),
            lambda o: o.rfind(b"ne"), lambda o: o.rfind(b"ne", 0, 20), lambda o: o.find(b""),
            lambda o: o.find(b"", size + 5), lambda o: o.rfind(b"", 3, 1), lambda o: o.find(b"zz"),
            lambda o: o.find(memoryview(b"two")),
            lambda o: o.find("two"),  # type: ignore[arg-type]
            lambda o: o.seek(-3, 2), lambda o: o.read(), lambda o: o.read_byte(),
            lambda o: o.write_byte(1), lambda o: o.write(b"x"), lambda o: o.read(),
            lambda o: o.seek(size + 1), lambda o: o.seek(-1), lambda o: o.seek(0, 3),
            lambda o: o.seek(10), lambda o: o.seek(5, 1), lambda o: o.tell(),
            lambda o: o.write(b"ABC"), lambda o: o.write(bytearray(b"D")), lambda o: o.tell(),
            lambda o: o.write_byte(0x41), lambda o: o.write_byte(256),
            lambda o: o.write_byte(-1), lambda o: o.read(None), lambda o: o.seek(0),
            lambda o: o.read(-5)[:40], lambda o: o.seek(size - 2),
            lambda o: o.read(1.5),  # type: ignore[arg-type]
            lambda o: o.write(b"xyz"), lambda o: o.write(b"xy"), lambda o: o.readline(),
            lambda o: o.move(0, 20, 10), lambda o: o.move(size - 1, 0, 2),
            lambda o: o.move(-1, 0, 1), lambda o: o.flush(), lambda o: o.flush(0, size),
            lambda o: o.flush(1), lambda o: o.flush(-1, 1), lambda o: o.flush(1, 10),
            lambda o: o.flush(mmap.PAGESIZE, 10), lambda o: o[:],
        ]
        for i, op in enumerate(script):
            assert outcome(lambda: op(m)) == outcome(lambda: op(ref)), f"step {i}"
        ref.close()
    for use in (m.tell, m.read, m.readline, lambda: m.seek(0), lambda: m.find(b"x"),
                lambda: m.write(b"x"), m.flush):
        with pytest.raises(ValueError, match="closed"):
            use()


def test_a_key_or_value_that_closes_the_map_is_refused() -> None:
    """An __index__ that closes the map runs before the map's address is used."""
    rp = mmkit.RefPage(b"\xab" * 16)
    keep: list[mmap.mmap] = []

    class Closer:
        def __init__(self, m: mmkit.RefMap, value: int = 0) -> None:
            self.m, self.value = m, value

        def __index__(self) -> int:
            self.m.close()
            # Whatever lands at the address next must not be read or written.
            other = mmap.mmap(-1, 1 << 20)
            other[:4] = b"LIVE"
            keep.append(other)
            return self.value

    uses: list[Callable[[mmkit.RefMap], object]] = [
        lambda m: m[Closer(m)],
        lambda m: m[Closer(m):10],
        lambda m: m[0:10:Closer(m, 1)],
        lambda m: m.__setitem__(Closer(m), 0x58),
        lambda m: m.__setitem__(0, Closer(m, 0x58)),  # type: ignore[call-overload]
        lambda m: m.__setitem__(slice(Closer(m), 10), b"XXXXXXXXXX"),
    ]
    for use in uses:
        m = rp.map(1 << 20)
        with pytest.raises(ValueError, match="closed"):
            use(m)
        assert m.closed
    for other in keep:
        assert other[:4] == b"LIVE"
    rp.close()


def test_refmap_iterates_as_mmap_does() -> None:
    with mmkit.RefPage(b"\xab" * 16) as rp, rp.map(4096) as m:
        ref = mmap.mmap(-1, 4096)
        ref[:] = b"\xab" * 4096
        # typeshed says mmap iterates ints: it gives bytes of length 1.
        seq = cast(Iterable[object], ref)
        assert next(iter(m)) == next(iter(seq)) == b"\xab"
        assert list(m) == list(seq)
        assert next(reversed(m)) == next(reversed(ref))
        assert (b"\xab" in m) == (b"\xab" in ref) and (0xAB in m) == (0xAB in ref)
        it = iter(m)
        ref.close()
    with pytest.raises(ValueError):
        next(it)


def test_map_lengths_say_why() -> None:
    with mmkit.RefPage(b"a") as rp:
        for size, err, text in ((0, errno.EINVAL, "length 0"), (-1, errno.EINVAL, "length -1 is negative"),
                                (1 << 62, errno.ENOMEM, "mmap(2) of ")):
            with pytest.raises(OSError) as e:
                rp.map(size)
            assert e.value.errno == err and text in str(e.value.strerror)
            assert str(e.value.strerror).startswith("mmkit_refpage_map: ")


def test_help_names_every_backend() -> None:
    for doc in (mmkit.RefPage.__doc__, mmkit.refpage_backend_available.__doc__):
        assert doc is not None and all(f'"{b}"' in doc for b in BACKENDS)


def test_refmap_cannot_be_made_directly() -> None:
    with pytest.raises(TypeError):
        mmkit.RefMap()


def test_refmap_closed_by_an_argument_is_not_touched() -> None:
    # An argument's __index__ that closes the map runs after the method has
    # checked it open: the method must check again, not touch what was there.
    with mmkit.RefPage(b"P" * 16) as rp:
        calls: list[Callable[[mmkit.RefMap, Any], object]] = [
            lambda m, c: m.find(b"PP", c), lambda m, c: m.find(b"PP", 0, c),
            lambda m, c: m.rfind(b"PP", c), lambda m, c: m.rfind(b"PP", 0, c),
            lambda m, c: m.read(c), lambda m, c: m.write_byte(c),
            lambda m, c: m.move(c, 0, 8), lambda m, c: m.move(0, c, 8), lambda m, c: m.move(0, 8, c),
            lambda m, c: m.seek(c), lambda m, c: m.flush(c), lambda m, c: m.flush(0, c),
        ]
        for i, call in enumerate(calls):
            m = rp.map(1 << 20)

            class Closer:
                def __index__(self) -> int:
                    m.close()
                    # Something else may now be mapped where the map was.
                    other.append(mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS))
                    return 8

            other: list[mmap.mmap] = []
            with pytest.raises(ValueError, match="closed"):
                call(m, Closer())
            assert m.closed and other and other[0][:16] == bytes(16), f"call {i}"
            other[0].close()
