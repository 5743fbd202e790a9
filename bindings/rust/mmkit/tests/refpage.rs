// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! RefPage and RefMap: pattern reads, copy on write, remap, attach, drop.

use mmkit::{Backend, RefPage};

const PATTERN: &[u8; 16] = b"mmkit-rust-16by!";

#[test]
fn pattern_reads_and_writes() {
    let page = RefPage::new(PATTERN).unwrap();
    assert!(["kmod", "memfd", "uffd"].contains(&page.backend()));
    let mut map = page.map(3 * 4096 + 1).unwrap();
    assert_eq!(map.len(), 3 * 4096 + 1);
    for (i, &b) in map.iter().enumerate() {
        assert_eq!(b, PATTERN[i % 16], "byte {}", i);
    }
    map[4096] = b'#';
    assert_eq!(map[4096], b'#');
    assert_eq!(map[4097], PATTERN[1]);
    assert_eq!(map[0], PATTERN[0]);
    map.remap(8 * 4096).unwrap();
    assert_eq!(map[4096], b'#');
    assert_eq!(map[8 * 4096 - 1], PATTERN[15]);
    // The object goes first; the range keeps it alive.
    drop(page);
    assert_eq!(map[5 * 4096 + 3], PATTERN[3]);
}

#[test]
fn every_available_backend() {
    for backend in [
        Backend::Syscall,
        Backend::Kmod,
        Backend::Memfd,
        Backend::Uffd,
    ] {
        match backend.available() {
            Ok(()) => {
                let page = RefPage::with_backend(b"\x01\x02", backend).unwrap();
                let map = page.map(4096).unwrap();
                assert_eq!(&map[..4], b"\x01\x02\x01\x02");
            }
            Err(e) => {
                assert!(
                    e.message()
                        .starts_with("mmkit_refpage_backend_available: backend "),
                    "{}",
                    e
                );
                let err = RefPage::with_backend(b"x", backend).unwrap_err();
                assert_eq!(err.errno(), e.errno());
                assert!(
                    err.message().starts_with("mmkit_refpage_create: "),
                    "{}",
                    err
                );
            }
        }
    }
}

#[test]
fn bad_pattern_is_einval() {
    let err = RefPage::new(b"abc").unwrap_err();
    assert_eq!(err.errno(), 22);
    assert!(err.message().contains("pattern size 3"), "{}", err);
    let page = RefPage::new(b"a").unwrap();
    let err = page.map(0).unwrap_err();
    assert_eq!(err.errno(), 22);
    assert!(err.message().contains("length 0"), "{}", err);
    let err = page.map(usize::MAX).unwrap_err();
    assert_eq!(err.errno(), 22);
    assert!(
        err.message().contains("exceeds the address space"),
        "{}",
        err
    );
    let err = page.map(1 << 62).unwrap_err();
    assert_eq!(err.errno(), 12);
    assert!(err.message().contains("mmap(2) of "), "{}", err);
}

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
}

#[test]
fn attach_keeps_present_pages() {
    const PROT_RW: i32 = 3;
    const MAP_PRIVATE_ANON: i32 = 0x02 | 0x20;
    // SAFETY: a fresh private anonymous mapping, given up to attach below.
    let mem = unsafe {
        mmap(
            std::ptr::null_mut(),
            2 * 4096,
            PROT_RW,
            MAP_PRIVATE_ANON,
            -1,
            0,
        )
    };
    assert_ne!(mem as isize, -1);
    // SAFETY: the first page is ours, mapped read-write.
    unsafe { *mem = 42 };
    let page = RefPage::new(b"zz").unwrap();
    // SAFETY: mem is the private anonymous mapping made above, untouched
    // from here on except through the RefMap.
    let map = unsafe { page.attach(mem, 2 * 4096) }.unwrap();
    assert_eq!(map[0], 42);
    assert_eq!(map[1], 0);
    assert_eq!(&map[4096..4098], b"zz");
}
