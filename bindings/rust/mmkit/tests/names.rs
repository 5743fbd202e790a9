// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Names seen by regions; name_raw clears; bad names; the region shape.

use mmkit::RegionKind;

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn munmap(addr: *mut u8, len: usize) -> i32;
    fn open(path: *const u8, flags: i32) -> i32;
    fn close(fd: i32) -> i32;
}

const PROT_READ: i32 = 1;
const PROT_RW: i32 = 3;
const MAP_PRIVATE: i32 = 0x02;
const MAP_PRIVATE_ANON: i32 = 0x02 | 0x20;

/// `len` bytes of fresh private anonymous memory, unmapped on drop.
struct Mapping(&'static mut [u8]);

impl Mapping {
    fn new(len: usize) -> Mapping {
        // SAFETY: a fresh private anonymous mapping, owned by the Mapping.
        let p = unsafe { mmap(std::ptr::null_mut(), len, PROT_RW, MAP_PRIVATE_ANON, -1, 0) };
        assert_ne!(p as isize, -1);
        // SAFETY: p is len bytes mapped read-write, unmapped only on drop.
        Mapping(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in new, no longer borrowed.
        unsafe { munmap(self.0.as_mut_ptr(), self.0.len()) };
    }
}

#[test]
fn names_seen_by_regions() {
    let mapping = Mapping::new(1 << 20);
    let arena = &*mapping.0;
    mmkit::name(arena, "mmkit-rust-arena").unwrap();
    let start = arena.as_ptr() as usize;
    let regions = mmkit::regions(0).unwrap();
    let named: Vec<_> = regions
        .iter()
        .filter(|r| r.name.as_deref() == Some("mmkit-rust-arena"))
        .collect();
    assert!(!named.is_empty(), "no region named mmkit-rust-arena");
    for r in &named {
        assert!(matches!(
            r.kind,
            RegionKind::AnonNamed | RegionKind::Registry
        ));
        assert!(r.start >= start && r.end <= start + arena.len());
        assert_eq!(r.size, (r.end - r.start) as u64);
        assert!(r.pss.is_some() && r.swap.is_some());
        assert_eq!(r.perms.len(), 4);
    }
    let covered: usize = named.iter().map(|r| r.end - r.start).sum();
    assert_eq!(covered, arena.len());

    let first = named.iter().map(|r| r.start).min().unwrap();
    // SAFETY: these pages belong to the mapping above, which lives on.
    unsafe { mmkit::name_raw(first as *const u8, covered, None) }.unwrap();
    let after = mmkit::regions(0).unwrap();
    assert!(!after
        .iter()
        .any(|r| r.name.as_deref() == Some("mmkit-rust-arena")));
}

#[test]
fn regions_of_this_process_have_the_shape() {
    let regions = mmkit::regions(0).unwrap();
    assert!(regions.windows(2).all(|w| w[0].end <= w[1].start));
    assert!(regions.iter().any(|r| r.kind == RegionKind::Stack));
    let here = regions_of_this_process_have_the_shape as fn() as usize;
    let code = regions
        .iter()
        .find(|r| r.start <= here && here < r.end)
        .unwrap();
    assert_eq!(code.kind, RegionKind::File);
    assert!(code.name.as_deref().unwrap().contains("names-"));
    assert!(regions
        .iter()
        .filter(|r| r.kind == RegionKind::Anon)
        .all(|r| r.name.is_none()));
    // smaps' Rss is its Shared_/Private_ figures, mapping by mapping.
    let rss: u64 = regions.iter().map(|r| r.rss).sum();
    let parts: u64 = regions
        .iter()
        .map(|r| r.shared_clean + r.shared_dirty + r.private_clean + r.private_dirty)
        .sum();
    assert!(rss > 0);
    assert_eq!(parts, rss);
    assert!(code.referenced <= code.rss && code.anonymous <= code.rss);
}

#[test]
fn bad_names_and_ranges() {
    let e = mmkit::validate_name("no$dollar").unwrap_err();
    assert_eq!(e.errno(), 22);
    assert!(e.message().contains("0x24"), "{}", e);
    assert_eq!(
        mmkit::validate_name("fine name").map_err(|e| e.errno()),
        Ok(())
    );
    let e = mmkit::validate_name("nul\0").unwrap_err();
    assert!(e.message().contains("NUL"), "{}", e);
    let verdicts: [bool; 3] = [
        mmkit::is_valid_name("fine name"),
        mmkit::is_valid_name("no$dollar"),
        mmkit::is_valid_name("nul\0"),
    ];
    assert_eq!(verdicts, [true, false, false]);
    let small = [0u8; 16];
    let e = mmkit::name(&small, "x").unwrap_err();
    assert!(e.message().contains("does not cover whole pages"), "{}", e);
    // SAFETY: an unaligned address: refused before anything is named.
    let e = unsafe { mmkit::name_raw(1 as *const u8, 4096, Some("x")) }.unwrap_err();
    assert!(e.message().contains("not page aligned"), "{}", e);
    let e = mmkit::regions(999_999_999).unwrap_err();
    assert_eq!(e.errno(), 3);
    assert!(e.message().starts_with("mmkit_regions: "), "{}", e);
    assert_eq!(mmkit::regions(u32::MAX).unwrap_err().errno(), 22);
}

/// Part of a page is refused (Go named the whole page), an empty slice
/// names nothing, and the library says why naming fails.
#[test]
fn name_whole_pages_only_with_reasons() {
    let mapping = Mapping::new(2 * 4096);
    let pages = &*mapping.0;
    let e = mmkit::name(&pages[..10], "part").unwrap_err();
    assert_eq!(e.errno(), 22);
    assert!(e.message().starts_with("mmkit_name_pages: "), "{}", e);
    assert!(e.message().contains("does not cover whole pages"), "{}", e);
    assert!(e.message().contains("name_raw"), "{}", e);
    let e = mmkit::name(&pages[1..4097], "part").unwrap_err();
    assert!(e.message().contains("does not cover whole pages"), "{}", e);
    mmkit::name(&pages[..0], "nothing").unwrap();
    mmkit::name(&pages[5..5], "nothing").unwrap();
    mmkit::name(pages, "mmkit-rust-whole").unwrap();

    // SAFETY: address 0 is never mapped; the call only looks.
    let e = unsafe { mmkit::name_raw(std::ptr::null(), 4096, Some("x")) }.unwrap_err();
    assert_eq!(e.errno(), 12);
    assert!(e.message().contains("is not mapped"), "{}", e);

    // SAFETY: a read-only private mapping of this test's own binary.
    let file = unsafe {
        let fd = open(b"/proc/self/exe\0".as_ptr(), 0);
        assert!(fd >= 0);
        let p = mmap(std::ptr::null_mut(), 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        assert_ne!(p as isize, -1);
        std::slice::from_raw_parts(p, 4096)
    };
    let e = mmkit::name(file, "x").unwrap_err();
    assert_eq!(e.errno(), 9);
    assert!(e.message().contains("is a file mapping"), "{}", e);
    // SAFETY: the mapping made above, not used after.
    unsafe { munmap(file.as_ptr() as *mut u8, 4096) };
}
