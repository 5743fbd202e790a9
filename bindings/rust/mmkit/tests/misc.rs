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
    assert_eq!(e.message(), "mmkit_lock: length 0: the range holds no byte");
    // An empty slice costs nothing: the current state, as in Go and Python.
    let empty = mmkit::memlock_check(Some(&buf[..0])).unwrap();
    assert_eq!(empty.needed, 0);
    assert!(empty.fits);
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
    let e = mmkit::validate_name("[x").unwrap_err();
    assert_eq!(format!("{}", e), format!("{} (os error 22)", e.message()));
    let io: std::io::Error = e.clone().into();
    assert_eq!(io.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(io.raw_os_error(), Some(22));
    let shown = e.clone().into_io_error_with_message();
    assert_eq!(shown.kind(), std::io::ErrorKind::InvalidInput);
    assert_eq!(shown.to_string(), e.to_string());
    let inner = shown.get_ref().unwrap().downcast_ref::<mmkit::Error>();
    assert_eq!(inner.map(mmkit::Error::errno), Some(22));
    let dbg = format!("{:?}", e);
    assert!(dbg.contains("errno: 22") && dbg.contains("mmkit_name_valid"));
}

#[test]
fn messages_stay_with_their_thread() {
    let other = std::thread::spawn(|| mmkit::validate_name("$").unwrap_err())
        .join()
        .unwrap();
    let here = mmkit::lock(&[][..], LockFlags::empty()).unwrap_err();
    assert!(other.message().starts_with("mmkit_name_valid: "));
    assert!(here.message().starts_with("mmkit_lock: "));
}
