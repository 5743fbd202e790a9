# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""probe, lock-on-fault and PAC."""

import ctypes
import errno
import mmap
import threading

import pytest

import mmkit


def test_probe_answers_every_feature() -> None:
    features = mmkit.probe()
    assert set(features) == {"refpage", "names", "pac", "secret", "lock_onfault", "userfaultfd"}
    for key, f in features.items():
        assert f.name == key and f.status in ("native", "fallback", "unsupported", "not_implemented")
        assert f.backend and f.reason


def test_memlock_check() -> None:
    now = mmkit.memlock_check()
    assert now.needed == 0 and now.fits
    m = mmap.mmap(-1, 3 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    c = mmkit.memlock_check(m)
    assert c.needed == 3 * mmap.PAGESIZE and c.fits == (c.exempt or c.limit is None
                                                         or c.locked + c.needed <= c.limit)
    assert mmkit.memlock_check_all(mmkit.LOCK_CURRENT).needed > 0
    # An empty buffer costs nothing: the current state, as in Rust and Go.
    assert mmkit.memlock_check(b"").needed == 0 and mmkit.memlock_check(b"").fits
    m.close()


def test_lock_on_fault_locks_what_is_touched() -> None:
    m = mmap.mmap(-1, 4 * mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    view = ctypes.c_char.from_buffer(m)
    start = ctypes.addressof(view)
    del view
    before = mmkit.memlock_check().locked
    mmkit.lock(m, mmkit.LOCK_ONFAULT)
    # MLOCK_ONFAULT charges the whole range at once (VmLck) ...
    assert mmkit.memlock_check().locked == before + 4 * mmap.PAGESIZE
    m[0] = 1
    # ... but only what was touched is in memory, locked.
    r = next(r for r in mmkit.regions() if r.start <= start < r.end)
    assert r.locked == mmap.PAGESIZE and r.rss == mmap.PAGESIZE
    mmkit.unlock(m)
    assert mmkit.memlock_check().locked == before
    m.close()


def test_lock_errors() -> None:
    m = mmap.mmap(-1, mmap.PAGESIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    with pytest.raises(OSError) as e:
        mmkit.lock(m, 0x100)
    assert e.value.errno == errno.EINVAL and str(e.value.strerror).startswith("mmkit_lock")
    with pytest.raises(OSError) as e:
        mmkit.lockall(0x100)
    assert e.value.errno == errno.EINVAL
    with pytest.raises(OSError) as e:
        mmkit.lock(b"", 0)
    assert e.value.errno == errno.EINVAL
    assert e.value.strerror == "mmkit_lock: length 0: the range holds no byte"
    m.close()


def test_pac_keys_of_the_calling_thread() -> None:
    if mmkit.probe()["pac"].status == "unsupported":
        with pytest.raises(OSError) as e:
            mmkit.pac_get_enabled_keys()
        assert e.value.errno == errno.EOPNOTSUPP
        with pytest.raises(OSError):
            mmkit.pac_set_enabled_keys(mmkit.PAC_APDAKEY, 0)
        return
    seen: list[int] = []

    def other() -> None:  # keys are per thread: change them where it does not matter
        mmkit.pac_set_enabled_keys(mmkit.PAC_APDBKEY, 0)
        seen.append(mmkit.pac_get_enabled_keys())

    before = mmkit.pac_get_enabled_keys()
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen and not seen[0] & mmkit.PAC_APDBKEY
    assert mmkit.pac_get_enabled_keys() == before
