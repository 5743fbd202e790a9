// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! What this kernel offers: `mmkit_probe`.

use std::ffi::CStr;

use mmkit_sys as sys;

use crate::error::{check, Result};

/// A feature mmkit probes for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FeatureId {
    /// Reference pages.
    Refpage,
    /// Named anonymous memory.
    Names,
    /// Pointer-authentication keys (arm64).
    Pac,
    /// Secret memory.
    Secret,
    /// Lock-on-fault.
    LockOnfault,
    /// userfaultfd (a refpage backend).
    Userfaultfd,
}

const FEATURES: [(FeatureId, sys::c_uint); 6] = [
    (FeatureId::Refpage, sys::MMKIT_FEATURE_REFPAGE),
    (FeatureId::Names, sys::MMKIT_FEATURE_NAMES),
    (FeatureId::Pac, sys::MMKIT_FEATURE_PAC),
    (FeatureId::Secret, sys::MMKIT_FEATURE_SECRET),
    (FeatureId::LockOnfault, sys::MMKIT_FEATURE_LOCK_ONFAULT),
    (FeatureId::Userfaultfd, sys::MMKIT_FEATURE_USERFAULTFD),
];

/// How a feature works here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Status {
    /// The kernel feature itself is used.
    Native,
    /// Works, through a documented substitute.
    Fallback,
    /// Cannot work on this kernel or CPU.
    Unsupported,
    /// Not built into this version of mmkit.
    NotImplemented,
}

/// One feature's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feature {
    /// Which feature.
    pub id: FeatureId,
    /// Its stable key, as `mmkit probe` prints it (`"secret"`, ...).
    pub name: String,
    /// How it works here.
    pub status: Status,
    /// The backend used (`"memfd_secret"`, `"registry"`, ...).
    pub backend: String,
    /// Why this backend, or why the feature is unavailable.
    pub reason: String,
}

/// Every feature's answer for this process and kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    features: Vec<Feature>,
}

impl Probe {
    /// The answer for `id`.
    pub fn feature(&self, id: FeatureId) -> &Feature {
        self.features
            .iter()
            .find(|f| f.id == id)
            .expect("probe() answers every FeatureId")
    }

    /// Every answer, in `mmkit probe`'s order.
    pub fn features(&self) -> &[Feature] {
        &self.features
    }
}

/// Probes every feature (`mmkit_probe`, asked again at each call).
pub fn probe() -> Result<Probe> {
    // SAFETY: an all-zero mmkit_features is valid (integers and arrays).
    let mut all: sys::mmkit_features = unsafe { std::mem::zeroed() };
    // SAFETY: all is a valid, writable struct of the C layout.
    check(unsafe { sys::mmkit_probe(&mut all) })?;
    let features = FEATURES
        .iter()
        .map(|&(id, c_id)| {
            let f = &all.feature[c_id as usize];
            // SAFETY: the id is in range, so the C call returns a static
            // NUL-terminated string.
            let name = unsafe { CStr::from_ptr(sys::mmkit_feature_name(c_id)) };
            Feature {
                id,
                name: name.to_string_lossy().into_owned(),
                status: match f.status {
                    sys::MMKIT_STATUS_NATIVE => Status::Native,
                    sys::MMKIT_STATUS_FALLBACK => Status::Fallback,
                    sys::MMKIT_STATUS_UNSUPPORTED => Status::Unsupported,
                    _ => Status::NotImplemented,
                },
                backend: crate::c_text(&f.backend),
                reason: crate::c_text(&f.reason),
            }
        })
        .collect();
    Ok(Probe { features })
}
