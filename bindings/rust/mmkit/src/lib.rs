// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#![doc = include_str!("../README.md")]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod error;
mod lock;
mod names;
mod pac;
mod probe;
mod refpage;
mod secret;
mod secret_from;
#[cfg(feature = "serde")]
mod serde_impl;
mod wipe;

pub use error::{Error, Result};
pub use lock::{
    lock, lockall, memlock_check, memlock_check_all, unlock, unlockall, LockFlags, Memlock,
};
pub use names::{is_valid_name, name, name_raw, regions, validate_name, Region, RegionKind};
pub use pac::{pac_get_enabled_keys, pac_set_enabled_keys, PacKeys};
pub use probe::{probe, Feature, FeatureId, Probe, Status};
pub use refpage::{Backend, RefMap, RefPage};
pub use secret::{
    secret_reserve, secret_stats, Access, SecretBox, SecretSlice, SecretStats, Zeroable,
};
pub use secret_from::SecretString;

/// The raw C API this crate wraps.
pub use mmkit_sys as sys;

/// A NUL-terminated C string field as text (lossy: /proc names are
/// anyone's bytes).
fn c_text(field: &[sys::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// An `RLIMIT_MEMLOCK` figure: `None` for unlimited.
fn limit(value: u64) -> Option<u64> {
    if value == sys::MMKIT_MEMLOCK_UNLIMITED {
        None
    } else {
        Some(value)
    }
}
