// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! arm64 pointer-authentication keys: `mmkit_pac_*`, named after their C
//! calls.

use std::ops::BitOr;

use mmkit_sys as sys;

use crate::error::{check, Result};

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
