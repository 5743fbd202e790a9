// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Names seen by regions; name_raw clears; bad names; the region shape.

use mmkit::RegionKind;

#[test]
fn names_seen_by_regions() {
    let arena = vec![0u8; 1 << 20];
    mmkit::name(&arena, "mmkit-rust-arena").unwrap();
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
    // The whole pages inside the vector are named: all but at most two.
    let covered: usize = named.iter().map(|r| r.end - r.start).sum();
    assert!(
        covered + 2 * 4096 >= arena.len(),
        "{} of {} bytes named",
        covered,
        arena.len()
    );

    let first = named.iter().map(|r| r.start).min().unwrap();
    // SAFETY: these pages belong to the vector above, which lives on.
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
}

#[test]
fn bad_names_and_ranges() {
    let e = mmkit::name_valid("no$dollar").unwrap_err();
    assert_eq!(e.errno(), 22);
    assert!(e.message().contains("0x24"), "{}", e);
    assert_eq!(
        mmkit::name_valid("fine name").map_err(|e| e.errno()),
        Ok(())
    );
    let e = mmkit::name_valid("nul\0").unwrap_err();
    assert!(e.message().contains("NUL"), "{}", e);
    let small = [0u8; 16];
    let e = mmkit::name(&small, "x").unwrap_err();
    assert!(e.message().contains("no whole page"), "{}", e);
    // SAFETY: an unaligned address: refused before anything is named.
    let e = unsafe { mmkit::name_raw(1 as *const u8, 4096, Some("x")) }.unwrap_err();
    assert!(e.message().contains("not page aligned"), "{}", e);
    let e = mmkit::regions(999_999_999).unwrap_err();
    assert_eq!(e.errno(), 3);
    assert!(e.message().starts_with("mmkit_regions: "), "{}", e);
    assert_eq!(mmkit::regions(u32::MAX).unwrap_err().errno(), 22);
}
