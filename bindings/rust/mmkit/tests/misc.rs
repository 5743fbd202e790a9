// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! probe, lock-on-fault, PAC and Error.

use mmkit::{FeatureId, LockFlags, PacKeys, Status};

#[test]
fn probe_answers_every_feature() {
    let probe = mmkit::probe().unwrap();
    let names: Vec<_> = probe.features().iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "refpage",
            "names",
            "pac",
            "secret",
            "lock_onfault",
            "userfaultfd"
        ]
    );
    let secret = probe.feature(FeatureId::Secret);
    assert!(matches!(
        secret.status,
        Status::Native | Status::Fallback | Status::Unsupported
    ));
    assert!(!secret.reason.is_empty());
}

#[test]
fn lock_and_check() {
    let buf = vec![1u8; 1 << 16];
    let now = mmkit::memlock_check(None).unwrap();
    assert_eq!(now.needed, 0);
    let cost = mmkit::memlock_check(Some(&buf)).unwrap();
    assert!(cost.needed >= buf.len() as u64);
    if cost.fits {
        mmkit::lock(&buf, LockFlags::ONFAULT).unwrap();
        mmkit::unlock(&buf).unwrap();
    }
    let e = mmkit::lock(&buf[..0], LockFlags::empty()).unwrap_err();
    assert_eq!(e.errno(), 22);
    assert_eq!(e.message(), "mmkit_lock: Invalid argument");
    assert_eq!(
        mmkit::memlock_check_all(LockFlags::empty())
            .unwrap_err()
            .errno(),
        22
    );
    assert!(mmkit::memlock_check_all(LockFlags::FUTURE | LockFlags::ONFAULT).is_ok());
}

#[test]
fn pac_keys_or_eopnotsupp() {
    match mmkit::pac_get_enabled_keys() {
        Ok(keys) => assert!(PacKeys::ALL.contains(keys)),
        Err(e) => {
            assert_eq!(e.errno(), 95);
            assert!(
                e.message().starts_with("mmkit_pac_get_enabled_keys: "),
                "{}",
                e
            );
        }
    }
    // SAFETY: an invalid mask is refused before any key changes.
    let e = unsafe { mmkit::pac_set_enabled_keys(PacKeys::empty(), PacKeys::APIA) }.unwrap_err();
    assert_eq!(e.errno(), 22);
}

#[test]
fn error_carries_errno_and_message() {
    let e = mmkit::name_valid("[x").unwrap_err();
    assert_eq!(format!("{}", e), format!("{} (os error 22)", e.message()));
    let io: std::io::Error = e.clone().into();
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(io.to_string(), e.to_string());
    let dbg = format!("{:?}", e);
    assert!(dbg.contains("errno: 22") && dbg.contains("mmkit_name_valid"));
}

#[test]
fn messages_stay_with_their_thread() {
    let other = std::thread::spawn(|| mmkit::name_valid("$").unwrap_err())
        .join()
        .unwrap();
    let here = mmkit::lock(&[][..], LockFlags::empty()).unwrap_err();
    assert!(other.message().starts_with("mmkit_name_valid: "));
    assert!(here.message().starts_with("mmkit_lock: "));
}
