// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Lock-on-fault (`mmkit_lock` and friends) and pointer-authentication keys
//! (`mmkit_pac_*`), named after their C calls.

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

/// A set of arm64 pointer-authentication keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct PacKeys(sys::c_ulong);

impl PacKeys {
    /// Instruction key A (return addresses, with `-mbranch-protection`).
    pub const APIA: PacKeys = PacKeys(sys::MMKIT_PAC_APIAKEY);
    /// Instruction key B.
    pub const APIB: PacKeys = PacKeys(sys::MMKIT_PAC_APIBKEY);
    /// Data key A.
    pub const APDA: PacKeys = PacKeys(sys::MMKIT_PAC_APDAKEY);
    /// Data key B.
    pub const APDB: PacKeys = PacKeys(sys::MMKIT_PAC_APDBKEY);
    /// All four.
    pub const ALL: PacKeys = PacKeys(sys::MMKIT_PAC_ALL_KEYS);

    /// No key.
    pub const fn empty() -> PacKeys {
        PacKeys(0)
    }

    /// Whether every key of `other` is in `self`.
    pub const fn contains(self, other: PacKeys) -> bool {
        self.0 & other.0 == other.0
    }

    /// The C value.
    pub const fn bits(self) -> sys::c_ulong {
        self.0
    }
}

impl BitOr for PacKeys {
    type Output = PacKeys;

    fn bitor(self, other: PacKeys) -> PacKeys {
        PacKeys(self.0 | other.0)
    }
}

/// The calling thread's enabled keys (`mmkit_pac_get_enabled_keys`);
/// `EOPNOTSUPP` except on arm64 with address authentication.
pub fn pac_get_enabled_keys() -> Result<PacKeys> {
    let mut keys: sys::c_ulong = 0;
    // SAFETY: keys is a valid out value.
    check(unsafe { sys::mmkit_pac_get_enabled_keys(&mut keys) })?;
    Ok(PacKeys(keys))
}

/// Enables the keys of `mask` that are in `enabled` and disables the
/// others, for the calling thread (`mmkit_pac_set_enabled_keys`); threads
/// made later inherit them.
///
/// # Safety
///
/// Code compiled with return-address signing (`-mbranch-protection`)
/// signs and checks return addresses with the instruction keys: switching
/// one while frames signed (or not signed) with it are on this thread's
/// stack makes their returns fault.  Change instruction keys only where no
/// such frame will return (early in a thread, around code built for it).
pub unsafe fn pac_set_enabled_keys(mask: PacKeys, enabled: PacKeys) -> Result<()> {
    // SAFETY: the caller answers for the frames on the stack; the C call
    // checks the masks.
    check(unsafe { sys::mmkit_pac_set_enabled_keys(mask.0, enabled.0) })?;
    Ok(())
}
