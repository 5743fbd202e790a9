// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Lock-on-fault: `mmkit_lock` and friends, named after their C calls.

use std::ops::BitOr;
use std::os::raw::c_void;

use mmkit_sys as sys;

use crate::error::{check, Result};

/// Flags of [`lock`] and [`lockall`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct LockFlags(u32);

impl LockFlags {
    /// Lock pages as they are first touched (`MLOCK_ONFAULT`/`MCL_ONFAULT`).
    pub const ONFAULT: LockFlags = LockFlags(sys::MMKIT_LOCK_ONFAULT);
    /// [`lockall`]: what is mapped now.
    pub const CURRENT: LockFlags = LockFlags(sys::MMKIT_LOCK_CURRENT);
    /// [`lockall`]: what is mapped later.
    pub const FUTURE: LockFlags = LockFlags(sys::MMKIT_LOCK_FUTURE);

    /// No flag: [`lock`] populates and locks every page now.
    pub const fn empty() -> LockFlags {
        LockFlags(0)
    }

    /// The C value.
    pub const fn bits(self) -> u32 {
        self.0
    }
}

impl BitOr for LockFlags {
    type Output = LockFlags;

    fn bitor(self, other: LockFlags) -> LockFlags {
        LockFlags(self.0 | other.0)
    }
}

/// What a lock costs against `RLIMIT_MEMLOCK` (`struct mmkit_memlock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memlock {
    /// The soft limit in bytes, `None` when unlimited.
    pub limit: Option<u64>,
    /// Bytes this process has locked already (VmLck).
    pub locked: u64,
    /// Bytes the request adds to the charge.
    pub needed: u64,
    /// `CAP_IPC_LOCK` in the initial user namespace: the limit does not apply.
    pub exempt: bool,
    /// Whether the request fits.
    pub fits: bool,
}

fn memlock(rc: sys::c_int, m: &sys::mmkit_memlock) -> Result<Memlock> {
    const ENOMEM: sys::c_int = 12;
    if rc != -ENOMEM {
        check(rc)?;
    }
    Ok(Memlock {
        limit: crate::limit(m.limit),
        locked: m.locked,
        needed: m.needed,
        exempt: m.exempt != 0,
        fits: rc == 0,
    })
}

/// The `RLIMIT_MEMLOCK` arithmetic of [`lock`] for `range`, or the
/// current state for `None` (`mmkit_memlock_check`).
pub fn memlock_check(range: Option<&[u8]>) -> Result<Memlock> {
    let (addr, len) = range.map_or((std::ptr::null(), 0), |r| (r.as_ptr(), r.len()));
    let mut m = sys::mmkit_memlock::default();
    // SAFETY: m is a valid out struct; the range is only looked up.
    let rc = unsafe { sys::mmkit_memlock_check(addr.cast(), len, &mut m) };
    memlock(rc, &m)
}

/// The `RLIMIT_MEMLOCK` arithmetic of [`lockall`] with `flags`
/// (`mmkit_memlock_check_all`).
pub fn memlock_check_all(flags: LockFlags) -> Result<Memlock> {
    let mut m = sys::mmkit_memlock::default();
    // SAFETY: m is a valid out struct.
    let rc = unsafe { sys::mmkit_memlock_check_all(flags.0, &mut m) };
    memlock(rc, &m)
}

/// Locks the pages of `range` in memory (`mmkit_lock`, `mlock2`), on fault
/// with [`LockFlags::ONFAULT`]; `ENOMEM` with the figures in the message,
/// without calling the kernel, when the limit would be exceeded.
pub fn lock(range: &[u8], flags: LockFlags) -> Result<()> {
    // SAFETY: locking changes no byte of memory the caller can read; the C
    // call takes a mutable pointer only because mlock2(2) does.
    check(unsafe { sys::mmkit_lock(range.as_ptr() as *mut c_void, range.len(), flags.0) })?;
    Ok(())
}

/// Unlocks the pages of `range` (`mmkit_unlock`).
pub fn unlock(range: &[u8]) -> Result<()> {
    // SAFETY: as for lock.
    check(unsafe { sys::mmkit_unlock(range.as_ptr() as *mut c_void, range.len()) })?;
    Ok(())
}

/// Locks the address space (`mmkit_lockall`): [`LockFlags::CURRENT`],
/// [`LockFlags::FUTURE`] or both, optionally [`LockFlags::ONFAULT`].
pub fn lockall(flags: LockFlags) -> Result<()> {
    // SAFETY: takes flags only.
    check(unsafe { sys::mmkit_lockall(flags.0) })?;
    Ok(())
}

/// Undoes [`lockall`] and every [`lock`] (`mmkit_unlockall`).
pub fn unlockall() -> Result<()> {
    // SAFETY: takes nothing.
    check(unsafe { sys::mmkit_unlockall() })?;
    Ok(())
}
