// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! SecretBox and SecretSlice: zeroed, exposed, protected, redacted, wiped.

use mmkit::{Access, SecretBox, SecretSlice};

#[test]
fn zeroed_exposed_written() {
    let mut key = SecretBox::<[u8; 32]>::zeroed().unwrap();
    assert_eq!(key.expose_secret(), &[0u8; 32]);
    key.expose_secret_mut().copy_from_slice(&[0x5a; 32]);
    assert_eq!(key.expose_secret(), &[0x5a; 32]);
    assert_eq!(key.as_ptr() as usize % 16, 0);

    let word = SecretBox::<u64>::init_with_mut(|w| *w = 0x1234_5678).unwrap();
    assert_eq!(*word.expose_secret(), 0x1234_5678);

    let mut bytes = SecretSlice::zeroed(100).unwrap();
    assert_eq!(bytes.len(), 100);
    assert!(bytes.expose_secret().iter().all(|&b| b == 0));
    bytes.expose_secret_mut()[99] = 1;
    assert_eq!(bytes.expose_secret()[99], 1);

    let empty = SecretSlice::zeroed(0).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.expose_secret(), &[] as &[u8]);
}

/// Size 0 is an empty secret in every binding: no memory, no C call, so
/// not one of the allocator's pointers; protect has nothing to refuse.
#[test]
fn empty_secrets_hold_no_memory() {
    for mut empty in [
        SecretSlice::zeroed(0).unwrap(),
        SecretSlice::zeroed_pages(0).unwrap(),
    ] {
        let mut size = 7;
        // SAFETY: mmkit_secret_size only looks the pointer up.
        let rc = unsafe { mmkit::sys::mmkit_secret_size(empty.as_ptr().cast(), &mut size) };
        assert_eq!(rc, -2, "an empty secret is an allocation of {} bytes", size);
        assert_eq!(empty.as_ptr() as usize % 16, 0);
        empty.protect(Access::NoAccess).unwrap();
        assert_eq!(empty.access(), Access::NoAccess);
        empty.protect(Access::ReadWrite).unwrap();
        assert!(empty.expose_secret_mut().is_empty());
    }
    let unit = SecretBox::<[u64; 0]>::zeroed().unwrap();
    assert_eq!(unit.expose_secret(), &[] as &[u64]);
}

/// A size no memory can hold says why, not only strerror's words.
#[test]
fn huge_secret_says_why() {
    for size in [usize::MAX, 1 << 62] {
        let e = SecretSlice::zeroed(size).unwrap_err();
        assert_eq!(e.errno(), 12);
        assert_ne!(e.message(), "mmkit_secret_alloc: Cannot allocate memory");
    }
}

#[test]
fn debug_prints_no_contents() {
    let mut key = SecretBox::<[u8; 4]>::zeroed().unwrap();
    key.expose_secret_mut().copy_from_slice(b"\x11\x22\x33\x44");
    let shown = format!("{:?}", key);
    assert_eq!(shown, "SecretBox<[u8; 4]>([REDACTED])");
    let slice = SecretSlice::zeroed(3).unwrap();
    assert_eq!(format!("{:?}", slice), "SecretSlice<[u8; 3]>([REDACTED])");
}

/// What drop leaves in the freed slot: read through a second secret of the
/// same chunk kept alive, so the memory stays mapped.
#[test]
fn drop_wipes() {
    let keep = SecretBox::<[u8; 32]>::zeroed().unwrap();
    let mut key = SecretBox::<[u8; 32]>::zeroed().unwrap();
    key.expose_secret_mut().copy_from_slice(&[0xa5; 32]);
    let addr = key.as_ptr() as *const u8;
    let page = |p: usize| p & !4095;
    assert_eq!(
        page(addr as usize),
        page(keep.as_ptr() as usize),
        "same pool page"
    );
    drop(key);
    for i in 0..32 {
        // SAFETY: the slot is freed but its page stays mapped and readable
        // (keep lives in it); a volatile read of a byte is all this does.
        let byte = unsafe { std::ptr::read_volatile(addr.add(i)) };
        assert_eq!(byte, 0, "byte {} of a dropped secret", i);
    }
    drop(keep);
}

#[test]
fn pages_protect() {
    let mut key = SecretBox::<[u8; 32]>::zeroed_pages().unwrap();
    key.expose_secret_mut()[0] = 9;
    key.protect(Access::ReadOnly).unwrap();
    assert_eq!(key.access(), Access::ReadOnly);
    assert_eq!(key.expose_secret()[0], 9);
    key.protect(Access::NoAccess).unwrap();
    key.protect(Access::ReadWrite).unwrap();
    key.expose_secret_mut()[1] = 8;
    key.protect(Access::NoAccess).unwrap();
    // Dropped while inaccessible: the C side frees it all the same.
    drop(key);

    let mut big = SecretSlice::zeroed_pages(5000).unwrap();
    big.protect(Access::ReadOnly).unwrap();
    assert!(big.expose_secret().iter().all(|&b| b == 0));
}

#[test]
fn pooled_protect_is_einval_with_message() {
    let mut key = SecretBox::<[u8; 32]>::zeroed().unwrap();
    let err = key.protect(Access::ReadOnly).unwrap_err();
    assert_eq!(err.errno(), 22);
    assert!(
        err.message().starts_with("mmkit_secret_protect: "),
        "{}",
        err
    );
    assert!(err.message().contains("pages of its own"), "{}", err);
    assert_eq!(key.access(), Access::ReadWrite);
}

#[test]
#[should_panic(expected = "Access::NoAccess")]
fn exposing_inaccessible_panics() {
    let mut key = SecretBox::<[u8; 32]>::zeroed_pages().unwrap();
    key.protect(Access::NoAccess).unwrap();
    let _ = key.expose_secret();
}

#[test]
#[should_panic(expected = "Access::ReadOnly")]
fn writing_read_only_panics() {
    let mut key = SecretSlice::zeroed_pages(8).unwrap();
    key.protect(Access::ReadOnly).unwrap();
    key.expose_secret_mut()[0] = 1;
}

#[test]
fn over_aligned_is_refused() {
    #[repr(align(64))]
    #[allow(dead_code)]
    struct Wide([u8; 64]);
    // SAFETY: zero bytes are a valid Wide.
    unsafe impl mmkit::Zeroable for Wide {}
    let err = SecretBox::<Wide>::zeroed().unwrap_err();
    assert_eq!(err.errno(), 22);
    assert!(err.message().contains("16-byte aligned"));
}

#[test]
fn boxes_move_between_threads() {
    let boxes: Vec<SecretBox<[u8; 32]>> = (0..1000)
        .map(|i| SecretBox::init_with_mut(|k: &mut [u8; 32]| k[0] = i as u8).unwrap())
        .collect();
    let sum = std::thread::spawn(move || {
        boxes
            .iter()
            .map(|b| b.expose_secret()[0] as u64)
            .sum::<u64>()
        // dropped (freed) in this thread
    })
    .join()
    .unwrap();
    assert_eq!(sum, (0..1000u64).map(|i| i % 256).sum());
}

#[test]
fn stats_count_live_secrets() {
    let before = mmkit::secret_stats().unwrap();
    let keys: Vec<_> = (0..10)
        .map(|_| SecretBox::<[u8; 32]>::zeroed().unwrap())
        .collect();
    let during = mmkit::secret_stats().unwrap();
    assert!(during.allocs_live >= before.allocs_live);
    assert!(!during.backend.is_empty());
    drop(keys);
    mmkit::secret_reserve(4096).unwrap();
}

#[cfg(feature = "secrecy")]
#[test]
fn secrecy_traits() {
    use secrecy::{ExposeSecret, ExposeSecretMut};
    fn first<S: ExposeSecret<[u8; 32]>>(s: &S) -> u8 {
        s.expose_secret()[0]
    }
    let mut key = SecretBox::<[u8; 32]>::zeroed().unwrap();
    ExposeSecretMut::expose_secret_mut(&mut key)[0] = 3;
    assert_eq!(first(&key), 3);
    let slice = SecretSlice::zeroed(4).unwrap();
    assert_eq!(ExposeSecret::<[u8]>::expose_secret(&slice), &[0; 4]);
}

#[cfg(feature = "zeroize")]
#[test]
fn zeroize_traits() {
    use zeroize::Zeroize;
    let mut key = SecretBox::<[u8; 32]>::init_with_mut(|k| k.fill(0xff)).unwrap();
    key.zeroize();
    assert_eq!(key.expose_secret(), &[0; 32]);
    let mut slice = SecretSlice::zeroed_pages(16).unwrap();
    slice.expose_secret_mut().fill(1);
    slice.protect(Access::NoAccess).unwrap();
    slice.zeroize();
    assert_eq!(slice.access(), Access::NoAccess);
    slice.protect(Access::ReadOnly).unwrap();
    assert_eq!(slice.expose_secret(), &[0; 16]);
}

extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn _exit(code: i32) -> !;
}

/// After fork the child's copy of a box frees nothing when dropped (the
/// parent's secrets are not the child's allocator's), and the parent's
/// secret is untouched.
#[test]
fn drop_in_forked_child() {
    let mut key = SecretBox::<[u8; 32]>::zeroed().unwrap();
    key.expose_secret_mut()[0] = 0x77;
    let slice = SecretSlice::zeroed_pages(64).unwrap();
    // SAFETY: the child calls only what libmmkit's atfork handlers made
    // safe there (its free) and _exit.
    let pid = unsafe { fork() };
    assert!(pid >= 0);
    if pid == 0 {
        drop(key);
        drop(slice);
        // SAFETY: ends the child at once, running no destructor of the
        // parent's state.
        unsafe { _exit(0) };
    }
    let mut status = -1;
    // SAFETY: pid is our child; status a valid out value.
    assert_eq!(unsafe { waitpid(pid, &mut status, 0) }, pid);
    assert_eq!(
        status, 0,
        "the child did not exit 0 (wait status {:#x})",
        status
    );
    assert_eq!(key.expose_secret()[0], 0x77);
}
