# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""mmkit.Secret: the buffer, its life (close, views), protection, threads."""

import copy
import ctypes
import errno
import hashlib
import hmac
import pickle
import subprocess
import sys
import threading

import pytest

import mmkit


@pytest.mark.parametrize("size", [1, 32, mmkit.SECRET_POOL_MAX, mmkit.SECRET_POOL_MAX + 1, 100000])
def test_a_zeroed_writable_buffer_of_its_size(size: int) -> None:
    with mmkit.Secret(size) as s:
        assert len(s) == size
        with memoryview(s) as v:
            assert not v.readonly and v.nbytes == size and v.format == "B"
            assert bytes(v) == bytes(size)
            v[0] = 0xA5
            v[size - 1] ^= 0x5A
            assert v[0] == (0xA5 ^ 0x5A if size == 1 else 0xA5)


def test_bad_sizes_are_oserror_with_the_library_text() -> None:
    with pytest.raises(OSError) as e:
        mmkit.Secret(-1)
    assert e.value.errno == errno.EINVAL
    assert e.value.strerror == "mmkit_secret_alloc: size -1 is negative"
    for size in (sys.maxsize, 1 << 62):
        with pytest.raises(OSError) as e:
            mmkit.Secret(size)
        assert e.value.errno == errno.ENOMEM
        assert str(e.value.strerror).startswith("mmkit_secret_alloc: ")
        assert e.value.strerror != "mmkit_secret_alloc: Cannot allocate memory"


@pytest.mark.parametrize("pages", [False, True])
def test_size_0_is_an_empty_secret(pages: bool) -> None:
    """As in Rust and Go: no memory, no C call, nothing to protect."""
    before = mmkit.secret_stats()
    with mmkit.Secret(0, pages=pages) as s:
        after = mmkit.secret_stats()
        assert (after.allocs_live, after.bytes_live) == (before.allocs_live, before.bytes_live)
        assert len(s) == 0
        with memoryview(s) as v:
            assert v.nbytes == 0 and bytes(v) == b""
        s.protect("noaccess")
        assert s.access == "noaccess"
        s.protect("readwrite")
    assert s.closed


def test_repr_shows_no_contents() -> None:
    with mmkit.Secret(64) as s:
        memoryview(s)[:12] = b"hunter2hunte"
        text = repr(s) + str(s)
        assert "hunter" in bytes(memoryview(s)).decode()
        assert "hunter" not in text and "68756e" not in text
        assert text.startswith("<mmkit.Secret size=64")


def test_close_is_refused_while_a_view_lives() -> None:
    s = mmkit.Secret(32)
    v = memoryview(s)
    v[:4] = b"keep"
    with pytest.raises(BufferError):
        s.close()
    # Refused means nothing happened: the view still reads what was written.
    assert bytes(v[:4]) == b"keep" and not s.closed
    sub = v[1:3]
    v.release()
    with pytest.raises(BufferError):
        s.close()
    sub.release()
    s.close()
    assert s.closed
    s.close()  # closing again does nothing


def test_context_exit_with_a_live_view_raises() -> None:
    with pytest.raises(BufferError):
        with mmkit.Secret(8) as s:
            v = memoryview(s)
    v.release()
    s.close()


def test_use_after_close_raises_valueerror() -> None:
    s = mmkit.Secret(16)
    s.close()
    for use in (lambda: memoryview(s), lambda: len(s), lambda: s.protect("readonly"),
                lambda: s.__enter__(), lambda: s.access):
        with pytest.raises(ValueError):
            use()
    assert repr(s) == "<mmkit.Secret closed>"


# The wipe is seen through the address a ctypes view gave before close:
# in a child, so that a wrong address would fail the test, not end pytest.
# A neighbour keeps the pool chunk mapped after the close.
WIPE_CHILD = """
import ctypes, mmkit
neighbour = mmkit.Secret(32)
s = mmkit.Secret(32)
view = (ctypes.c_char * 32).from_buffer(s)
view.value = b"0123456789abcdef"
address = ctypes.addressof(view)
del view
s.close()
print(ctypes.string_at(address, 32).hex())
"""


def test_close_wipes_the_memory() -> None:
    out = subprocess.run([sys.executable, "-c", WIPE_CHILD], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "00" * 32


def test_not_picklable_nor_copyable() -> None:
    with mmkit.Secret(8) as s:
        with pytest.raises(TypeError):
            pickle.dumps(s)
        with pytest.raises(TypeError):
            copy.copy(s)


def test_pages_protect() -> None:
    with mmkit.Secret(100, pages=True) as s:
        memoryview(s)[:3] = b"abc"
        s.protect("readonly")
        assert s.access == "readonly"
        with memoryview(s) as v:
            assert v.readonly and bytes(v[:3]) == b"abc"
            with pytest.raises(TypeError, match="not writable"):  # a writable export
                (ctypes.c_char * 100).from_buffer(s)
            with pytest.raises(BufferError):  # would fault the live view
                s.protect(mmkit.SECRET_NOACCESS)
        s.protect(mmkit.SECRET_NOACCESS)
        with pytest.raises(BufferError):
            memoryview(s)
        s.protect("readwrite")
        assert bytes(memoryview(s)[:3]) == b"abc"
        with pytest.raises(ValueError):
            s.protect("sometimes")  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            s.protect(7)
    # A secret protected noaccess is still freed (and wiped) by close().
    t = mmkit.Secret(10, pages=True)
    t.protect("noaccess")
    t.close()


def test_protect_needs_pages_of_its_own() -> None:
    with mmkit.Secret(32) as s:
        with pytest.raises(OSError) as e:
            s.protect("readonly")
        assert e.value.errno == errno.EINVAL and "MMKIT_SECRET_PAGES" in str(e.value.strerror)


def test_stats_count_live_secrets() -> None:
    before = mmkit.secret_stats().allocs_live
    secrets = [mmkit.Secret(24) for _ in range(10)]
    assert mmkit.secret_stats().allocs_live == before + 10
    for s in secrets:
        s.close()
    assert mmkit.secret_stats().allocs_live == before


def test_one_secret_used_from_threads() -> None:
    """Threads write and read their own slices of one Secret while others
    try to close it: every close is refused or wins cleanly (later uses
    raise ValueError), nothing else is raised, nothing is lost."""
    nthreads, rounds = 8, 500
    s = mmkit.Secret(nthreads * 16)
    unexpected: list[BaseException] = []
    start = threading.Barrier(nthreads + 1)

    def writer(i: int) -> None:
        start.wait()
        try:
            for r in range(rounds):
                with memoryview(s) as v:
                    v[i * 16:(i + 1) * 16] = bytes([r % 256]) * 16
                    if bytes(v[i * 16:(i + 1) * 16]) != bytes([r % 256]) * 16:
                        raise AssertionError(f"thread {i} lost its write in round {r}")
        except BaseException as e:  # noqa: BLE001 - collected and reported below
            unexpected.append(e)

    def closer() -> None:
        start.wait()
        refused = 0
        while refused < 200:
            try:
                s.close()
                return
            except BufferError:
                refused += 1

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(nthreads)]
    threads.append(threading.Thread(target=closer))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in unexpected:
        if not isinstance(e, ValueError):
            raise e
    if unexpected:  # the closer won: every later use was refused
        assert s.closed
    else:
        s.close()
    assert s.closed


def test_secrets_made_and_closed_from_threads() -> None:
    before = mmkit.secret_stats().allocs_live
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            for r in range(300):
                with mmkit.Secret(16 + (i * 37 + r) % 3000) as s:
                    with memoryview(s) as v:
                        v[0] = i
                        assert v[0] == i and v[-1] == 0
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert mmkit.secret_stats().allocs_live == before


def test_hashlib_and_hmac_take_a_secret_without_a_copy() -> None:
    """What the README says: the calls that take any buffer take a Secret."""
    key = bytes(range(32))
    with mmkit.Secret(32) as s:
        memoryview(s)[:] = key
        assert hashlib.sha256(s).digest() == hashlib.sha256(key).digest()
        h = hashlib.sha256()
        h.update(memoryview(s))
        assert h.digest() == hashlib.sha256(key).digest()
        assert hmac.digest(s, b"msg", "sha256") == hmac.new(key, b"msg", "sha256").digest()
        assert hmac.compare_digest(s, key) and not hmac.compare_digest(s, bytes(32))
        assert hashlib.pbkdf2_hmac("sha256", s, b"salt", 1) == hashlib.pbkdf2_hmac(
            "sha256", key, b"salt", 1)
        assert hashlib.blake2b(b"msg", key=s).digest() == hashlib.blake2b(b"msg", key=key).digest()
        # hmac.new() (and HMAC objects) take bytes or bytearray only: a copy.
        with pytest.raises(TypeError, match="expected bytes or bytearray"):
            hmac.new(memoryview(s), b"msg", "sha256")  # type: ignore[call-overload]
