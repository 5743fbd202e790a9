# SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
"""100,000 live 32-byte Secrets as an unprivileged user (uid 65534, no
CAP_IPC_LOCK) under an 8 MiB RLIMIT_MEMLOCK; and below what they need, a
clean OSError ENOMEM that names the limit."""

import os
import resource
import stat
import subprocess
import sys

import pytest

import mmkit

MIB = 1024 * 1024

CHILD = """
import errno, os, sys, mmkit
count = int(sys.argv[1])
assert os.getuid() == 65534
secrets = []
try:
    for i in range(count):
        s = mmkit.Secret(32)
        memoryview(s)[:8] = i.to_bytes(8, "little")
        secrets.append(s)
except OSError as e:
    print(f"stopped at {len(secrets)}: errno {e.errno}: {e.strerror}")
    sys.exit(3 if e.errno == errno.ENOMEM else 4)
st = mmkit.secret_stats()
assert not st.memlock_exempt and st.allocs_live == count, st
assert st.bytes_locked <= 8 * 1024 * 1024, st
for i, s in enumerate(secrets):
    with memoryview(s) as v:
        assert int.from_bytes(v[:8], "little") == i and bytes(v[8:]) == bytes(24)
for s in secrets:
    s.close()
assert mmkit.secret_stats().allocs_live == 0
print("ok", st.backend, st.bytes_locked)
"""


def readable_by_all(path: str) -> bool:
    """Whether others may reach path: every directory above it searchable."""
    path = os.path.dirname(os.path.realpath(path))
    while path != "/":
        if not os.stat(path).st_mode & stat.S_IXOTH:
            return False
        path = os.path.dirname(path)
    return True


def run_as_nobody(count: int, memlock: int) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0:
        pytest.skip("needs root to become uid 65534 (an unprivileged user without CAP_IPC_LOCK)")
    for path in (mmkit.__file__, sys.executable):
        if not readable_by_all(path):
            pytest.skip(f"uid 65534 cannot reach {path}")

    def become_nobody() -> None:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (memlock, memlock))
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    # The package is imported from the test's environment, readable by all.
    return subprocess.run([sys.executable, "-c", CHILD, str(count)], capture_output=True,
                          text=True, preexec_fn=become_nobody, cwd="/", timeout=120)


def test_100000_secrets_fit_8_mib_unprivileged() -> None:
    out = run_as_nobody(100000, 8 * MIB)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ok ")


def test_below_the_limit_enomem_names_it() -> None:
    out = run_as_nobody(100000, 256 * 1024)
    assert out.returncode == 3, out.stdout + out.stderr
    assert "RLIMIT_MEMLOCK" in out.stdout, out.stdout
