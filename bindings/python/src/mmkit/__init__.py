# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""mmkit: Linux memory-management features from Python (libmmkit).

- ``Secret(size)``: secret memory (memfd_secret) as a writable buffer.
- ``RefPage(pattern).map(size)``: memory that reads as a pattern until written.
- ``name(buffer, name)``, ``name_range(address, length, name)``: named
  memory, also where the kernel lacks ``CONFIG_ANON_VMA_NAME``;
  ``name_valid(name)``: whether the kernel would take a name, and why not;
  ``regions(pid)``: the mappings of a process with those names, in the
  shape of psutil's ``memory_maps(grouped=False)``.
- ``probe()``: what works on this kernel and how.
- ``lock``, ``unlock``, ``lockall``, ``unlockall``, ``memlock_check``,
  ``memlock_check_all``: lock-on-fault within RLIMIT_MEMLOCK.
- ``pac_get_enabled_keys``, ``pac_set_enabled_keys``: arm64 pointer
  authentication keys of the calling thread.

Every failure of the library is an ``OSError`` (``PermissionError``,
``ProcessLookupError``, ... by its errno) whose ``strerror`` is the
library's own text (``mmkit_last_error()``): ``"mmkit_OP: reason"``.

>>> with Secret(32) as key:
...     memoryview(key)[:4] = b"abcd"
...     bytes(memoryview(key)[:5])
b'abcd\\x00'
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple, overload

from . import _mmkit
from ._mmkit import (
    LOCK_CURRENT,
    LOCK_FUTURE,
    LOCK_ONFAULT,
    NAME_MAX,
    PAC_ALL_KEYS,
    PAC_APDAKEY,
    PAC_APDBKEY,
    PAC_APIAKEY,
    PAC_APIBKEY,
    SECRET_NOACCESS,
    SECRET_POOL_MAX,
    SECRET_READONLY,
    SECRET_READWRITE,
    RefMap,
    RefPage,
    Secret,
    refpage_backend_available,
)

if TYPE_CHECKING:
    from ._mmkit import _Buffer

__all__ = [
    "LOCK_CURRENT",
    "LOCK_FUTURE",
    "LOCK_ONFAULT",
    "NAME_MAX",
    "PAC_ALL_KEYS",
    "PAC_APDAKEY",
    "PAC_APDBKEY",
    "PAC_APIAKEY",
    "PAC_APIBKEY",
    "SECRET_NOACCESS",
    "SECRET_POOL_MAX",
    "SECRET_READONLY",
    "SECRET_READWRITE",
    "Feature",
    "Memlock",
    "RefMap",
    "RefPage",
    "Region",
    "RegionGroup",
    "Secret",
    "SecretStats",
    "lock",
    "lockall",
    "memlock_check",
    "memlock_check_all",
    "name",
    "name_range",
    "name_valid",
    "pac_get_enabled_keys",
    "pac_set_enabled_keys",
    "probe",
    "refpage_backend_available",
    "regions",
    "secret_stats",
    "unlock",
    "unlockall",
]


class Region(NamedTuple):
    """One mapping of a process, or the part of one that a registry name covers.

    The first thirteen fields are psutil's ``memory_maps(grouped=False)``
    ones (``pmmap_ext``), in its order: code that reads psutil's tuples by
    index or by name reads these, and code that unpacks them unpacks
    ``r[:13]`` (a Region has more fields than psutil's thirteen, so
    unpacking ``r`` itself into thirteen names raises ValueError):
    ``addr`` ("start-end" in hex as /proc/PID/maps
    writes it, at least 8 digits, no 0x), ``perms`` ("rw-p"), ``path``
    ("[anon]" for anonymous memory without a name, as psutil says;
    ``[anon:NAME]`` for named memory, registry names too), then smaps'
    figures in bytes.  ``pss`` and ``swap`` are None where the kernel does
    not give them (psutil: 0).  mmkit's own fields follow: ``locked``,
    ``start``, ``end``, ``kind`` ("anon", "anon_named", "registry", "file",
    "heap", "stack" or "special") and ``name`` by kind: the bare name as
    given to ``name()`` for "anon_named" and "registry", the path for
    "file", the kernel's bracketed word ("[heap]", "[vdso]") for "heap",
    "stack" and "special", "" for "anon".

    >>> addr, perms, path, rss, size, pss, sc, sd, pc, pd, ref, anon, swap = regions()[0][:13]
    >>> len(regions()[0])
    18
    """

    addr: str
    perms: str
    path: str
    rss: int
    size: int
    pss: int | None
    shared_clean: int
    shared_dirty: int
    private_clean: int
    private_dirty: int
    referenced: int
    anonymous: int
    swap: int | None
    locked: int
    start: int
    end: int
    kind: str
    name: str


class RegionGroup(NamedTuple):
    """The regions of one ``path`` summed (``regions(grouped=True)``): the
    fields of psutil's ``memory_maps()`` (``pmmap_grouped``) in its order,
    then mmkit's ``locked`` and ``regions`` (how many were summed): unpack
    ``g[:11]`` where psutil's tuple is unpacked (``g`` has thirteen
    fields).  ``pss`` and ``swap`` are None if one of the regions lacks
    them.

    >>> path, rss, size, pss, sc, sd, pc, pd, ref, anon, swap = regions(grouped=True)[0][:11]
    >>> len(regions(grouped=True)[0])
    13
    """

    path: str
    rss: int
    size: int
    pss: int | None
    shared_clean: int
    shared_dirty: int
    private_clean: int
    private_dirty: int
    referenced: int
    anonymous: int
    swap: int | None
    locked: int
    regions: int


class Feature(NamedTuple):
    """How one feature works here: ``status`` is "native", "fallback",
    "unsupported" or "not_implemented"; ``backend`` what does the work;
    ``reason`` why."""

    name: str
    status: str
    backend: str
    reason: str


class Memlock(NamedTuple):
    """What locking costs against RLIMIT_MEMLOCK, in bytes: ``limit``
    (None: unlimited), ``locked`` (already, VmLck), ``needed`` (what the
    request adds), ``exempt`` (CAP_IPC_LOCK: the limit does not apply),
    ``fits`` (the request would succeed)."""

    limit: int | None
    locked: int
    needed: int
    exempt: bool
    fits: bool


class SecretStats(NamedTuple):
    """The secret allocator of this process (mmkit_secret_stats)."""

    backend: str
    reason: str
    last_error: str
    allocs_live: int
    bytes_live: int
    pages_mapped: int
    pages_cached: int
    bytes_locked: int
    memlock_limit: int | None
    enomem: int
    memlock_exempt: bool
    fallback: bool


def _path(kind: str, perms: str, name: str) -> str:
    if kind in ("anon_named", "registry"):
        return f"[anon_shmem:{name}]" if perms.endswith("s") else f"[anon:{name}]"
    return name or "[anon]"


def _optional_sum(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a + b


def _group(regions: list[Region]) -> list[RegionGroup]:
    # psutil's memory_maps(): summed by path, in the order paths first appear.
    groups: dict[str, RegionGroup] = {}
    for r in regions:
        g = groups.get(r.path)
        if g is None:
            g = RegionGroup(r.path, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        groups[r.path] = RegionGroup(
            r.path,
            g.rss + r.rss,
            g.size + r.size,
            _optional_sum(g.pss, r.pss),
            g.shared_clean + r.shared_clean,
            g.shared_dirty + r.shared_dirty,
            g.private_clean + r.private_clean,
            g.private_dirty + r.private_dirty,
            g.referenced + r.referenced,
            g.anonymous + r.anonymous,
            _optional_sum(g.swap, r.swap),
            g.locked + r.locked,
            g.regions + 1,
        )
    return list(groups.values())


@overload
def regions(pid: int = 0, grouped: Literal[False] = False) -> list[Region]: ...
@overload
def regions(pid: int, grouped: Literal[True]) -> list[RegionGroup]: ...
@overload
def regions(*, grouped: Literal[True]) -> list[RegionGroup]: ...
@overload
def regions(pid: int = 0, grouped: bool = False) -> list[Region] | list[RegionGroup]: ...
def regions(pid: int = 0, grouped: bool = False) -> list[Region] | list[RegionGroup]:
    """The mappings of process ``pid`` (0: this one) in address order, with
    the names given by ``name()`` whether the kernel or mmkit's registry
    keeps them (mmkit_regions).  ``grouped=True`` sums them by ``path`` as
    psutil's ``memory_maps()`` does by default (its default is grouped,
    this one's is not: mmkit's regions are about addresses).
    ``ProcessLookupError`` if there is no such process, ``PermissionError``
    if its memory may not be read."""
    ungrouped = [
        Region(
            f"{start:08x}-{end:08x}",
            perms,
            _path(kind, perms, name),
            rss,
            size,
            pss,
            shared_clean,
            shared_dirty,
            private_clean,
            private_dirty,
            referenced,
            anonymous,
            swap,
            locked,
            start,
            end,
            kind,
            name,
        )
        for (
            start,
            end,
            kind,
            perms,
            name,
            size,
            rss,
            pss,
            shared_clean,
            shared_dirty,
            private_clean,
            private_dirty,
            referenced,
            anonymous,
            swap,
            locked,
        ) in _mmkit.regions(pid)
    ]
    return _group(ungrouped) if grouped else ungrouped


def name(buffer: _Buffer, name: str | None) -> None:
    """Name the pages of ``buffer`` (an mmap, a RefMap of whole pages, ...)
    ``name``; None clears (mmkit_name_pages).  The buffer must start and
    end on page boundaries, or OSError EINVAL saying so: the kernel names
    whole pages, and the last page of a shorter buffer is not all its own
    (``name_range`` names a range and its last page whole).  An empty
    buffer names nothing.  A bad name (more than NAME_MAX - 1 characters,
    not printable ASCII, or one of \\ ` $ [ ]) is OSError EINVAL too; a
    file mapping (a file, a memfd_secret Secret) is OSError EBADF."""
    _mmkit.name(buffer, name)


def name_range(address: int, length: int, name: str | None) -> None:
    """Name [address, address + length) as the C call does (mmkit_name):
    address page aligned, the last page named whole; for reservations
    and memory that no Python object exports."""
    _mmkit.name_range(address, length, name)


def name_valid(name: str | None) -> None:
    """None if the kernel would take ``name`` (None, which clears, too),
    else OSError EINVAL saying which character or how long
    (mmkit_name_valid), as Rust's ``name_valid``."""
    _mmkit.name_valid(name)


def probe() -> dict[str, Feature]:
    """What each feature does on this kernel and CPU, by feature name
    ("refpage", "names", "pac", "secret", "lock_onfault", "userfaultfd")."""
    return {f[0]: Feature(*f) for f in _mmkit.probe()}


def lock(buffer: _Buffer, flags: int = 0) -> None:
    """Lock the pages of ``buffer`` in memory (mmkit_lock); ``LOCK_ONFAULT``
    locks them as they are faulted in.  OSError ENOMEM, before asking the
    kernel, if RLIMIT_MEMLOCK would be exceeded (``memlock_check`` says by
    how much)."""
    _mmkit.lock(buffer, flags)


def unlock(buffer: _Buffer) -> None:
    """Unlock the pages of ``buffer`` (mmkit_unlock)."""
    _mmkit.unlock(buffer)


def lockall(flags: int) -> None:
    """Lock the process's memory (mmkit_lockall): ``LOCK_CURRENT``,
    ``LOCK_FUTURE``, ``LOCK_ONFAULT`` or'ed; the limit is checked first."""
    _mmkit.lockall(flags)


def unlockall() -> None:
    """Unlock all of the process's memory (mmkit_unlockall)."""
    _mmkit.unlockall()


def memlock_check(buffer: _Buffer | None = None) -> Memlock:
    """What locking ``buffer`` would cost against RLIMIT_MEMLOCK, and
    whether it fits (mmkit_memlock_check); None: the current state."""
    return Memlock(*_mmkit.memlock_check(buffer))


def memlock_check_all(flags: int) -> Memlock:
    """Like ``memlock_check`` for ``lockall(flags)`` (mmkit_memlock_check_all)."""
    return Memlock(*_mmkit.memlock_check_all(flags))


def pac_get_enabled_keys() -> int:
    """The calling thread's enabled pointer-authentication keys, a mask of
    PAC_* (mmkit_pac_get_enabled_keys); OSError EOPNOTSUPP unless arm64
    with address authentication."""
    return _mmkit.pac_get_enabled_keys()


def pac_set_enabled_keys(mask: int, enabled: int) -> None:
    """Enable the keys of ``mask`` set in ``enabled`` and disable the others,
    for the calling thread only (mmkit_pac_set_enabled_keys)."""
    _mmkit.pac_set_enabled_keys(mask, enabled)


def secret_stats() -> SecretStats:
    """The secret allocator's backend, live allocations and RLIMIT_MEMLOCK
    charge (mmkit_secret_stats)."""
    return SecretStats(*_mmkit.secret_stats())
