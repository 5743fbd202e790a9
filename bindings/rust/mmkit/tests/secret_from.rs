// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Secrets made from ordinary memory (wiped), from random bytes, from a
//! closure, compared in constant time; SecretString; serde.
//!
//! This binary's allocator looks at every block freed for a marker: a
//! secret's source that reaches the allocator unwiped (its bytes or its
//! spare capacity) is seen there, without reading freed memory.  Each
//! thread counts the marked blocks it frees: the tests run in parallel, and
//! one test's count must not see another's blocks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::os::raw::c_void;

use mmkit::{SecretBox, SecretSlice, SecretString};

const MARKER: &[u8] = b"mmkit-test-secret-bytes!";

struct MarkerWatch;

thread_local! {
    // const: no lazy initialisation, so no allocation from inside dealloc.
    static FREED_WITH_MARKER: Cell<usize> = const { Cell::new(0) };
}

/// The marked blocks this thread has freed so far.
fn freed_with_marker() -> usize {
    FREED_WITH_MARKER.with(Cell::get)
}

extern "C" {
    fn memmem(hay: *const c_void, hay_len: usize, needle: *const c_void, len: usize)
        -> *mut c_void;
}

// SAFETY: every call is System's; dealloc only reads the block it frees.
unsafe impl GlobalAlloc for MarkerWatch {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as the caller vouches for System.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // A block may hold bytes never written (spare capacity, padding):
        // Rust may not read those as u8, C's memmem reads them as unsigned
        // char, which has no invalid value.
        // SAFETY: the block is live and layout.size() bytes long.
        let found = unsafe {
            memmem(
                ptr as *const c_void,
                layout.size(),
                MARKER.as_ptr() as *const c_void,
                MARKER.len(),
            )
        };
        if !found.is_null() {
            // try_with: a thread's last frees may come after its slot is gone.
            let _ = FREED_WITH_MARKER.try_with(|n| n.set(n.get() + 1));
        }
        // SAFETY: as the caller vouches for System.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static WATCH: MarkerWatch = MarkerWatch;

/// A vector holding the marker in its spare capacity only (past len).
fn marked_vec() -> Vec<u8> {
    let mut v = Vec::with_capacity(64);
    v.extend_from_slice(b"x");
    v.extend_from_slice(MARKER);
    v.truncate(1);
    v
}

#[test]
fn sources_are_wiped_spare_capacity_too() {
    let before = freed_with_marker();
    let s = SecretSlice::from(marked_vec());
    assert_eq!(s.expose_secret(), b"x");
    // Full (len == capacity), or into_boxed_slice would shrink it: a
    // realloc that frees the marked block before mmkit sees it.
    let mut v = Vec::with_capacity(1 + MARKER.len());
    v.push(b'x');
    v.extend_from_slice(MARKER);
    let s2 = SecretSlice::from(v.into_boxed_slice());
    assert_eq!(&s2.expose_secret()[1..], MARKER);
    let text = String::from_utf8(marked_vec()).unwrap();
    let s3 = SecretString::from(text);
    assert_eq!(s3.expose_secret(), "x");
    assert_eq!(freed_with_marker(), before);
    // The watch sees an unwiped block: the test can fail.
    drop(marked_vec());
    assert_eq!(freed_with_marker(), before + 1);
}

#[test]
fn the_watch_counts_this_threads_blocks_only() {
    let before = freed_with_marker();
    std::thread::spawn(|| {
        drop(marked_vec());
        assert_eq!(freed_with_marker(), 1);
    })
    .join()
    .unwrap();
    assert_eq!(freed_with_marker(), before);
}

#[test]
fn secret_string() {
    let s = SecretString::from("p\u{e4}ssword");
    assert_eq!(s.expose_secret(), "p\u{e4}ssword");
    assert_eq!(s.len(), 9);
    assert!(s.ct_eq("p\u{e4}ssword") && !s.ct_eq("passwort") && !s.ct_eq("p"));
    assert_eq!(format!("{:?}", s), "SecretString([REDACTED])");
    let mut s: SecretString = "abc".parse().unwrap();
    s.expose_secret_mut().make_ascii_uppercase();
    assert_eq!(s.expose_secret(), "ABC");
    let empty = SecretString::from(String::new());
    assert!(empty.is_empty());
    assert_eq!(empty.expose_secret(), "");
}

#[test]
fn init_with_and_try_init_with() {
    let k = SecretBox::<[u8; 4]>::init_with(|| [9, 8, 7, 6]).unwrap();
    assert_eq!(k.expose_secret(), &[9, 8, 7, 6]);
    let k = SecretBox::<u32>::try_init_with(|| Ok::<_, std::io::Error>(5)).unwrap();
    assert_eq!(*k.expose_secret(), 5);
    let e = SecretBox::<u32>::try_init_with(|| {
        Err::<u32, _>(std::io::Error::new(std::io::ErrorKind::Other, "no key"))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "no key");
}

#[test]
fn random_and_ct_eq() {
    let a = SecretSlice::random(5000).unwrap();
    let b = SecretSlice::random(5000).unwrap();
    assert_eq!(a.len(), 5000);
    assert!(!a.ct_eq(b.expose_secret()));
    assert!(a.ct_eq(a.expose_secret()));
    assert!(!a.ct_eq(&a.expose_secret()[1..]));
    // 5000 random bytes, no value seen 80 times: P(fail) ~ 1e-40.
    let mut seen = [0u32; 256];
    a.expose_secret()
        .iter()
        .for_each(|&x| seen[x as usize] += 1);
    assert!(seen.iter().all(|&n| n < 80), "{:?}", &seen[..]);
    assert!(SecretSlice::random(0).unwrap().is_empty());
    let k = SecretBox::<[u8; 32]>::random().unwrap();
    assert!(!k.ct_eq(&[0; 32]) && k.ct_eq(&k.expose_secret()[..]));
}

#[cfg(feature = "serde")]
#[test]
fn serde_into_secret_memory() {
    use serde::de::value::{
        BytesDeserializer, Error, SeqDeserializer, StrDeserializer, StringDeserializer,
    };
    use serde::Deserialize;

    let s = SecretSlice::deserialize(BytesDeserializer::<Error>::new(b"raw")).unwrap();
    assert_eq!(s.expose_secret(), b"raw");
    let seq = SeqDeserializer::<_, Error>::new((0..100u8).collect::<Vec<_>>().into_iter());
    let s = SecretSlice::deserialize(seq).unwrap();
    assert_eq!(s.expose_secret(), &(0..100u8).collect::<Vec<_>>()[..]);
    let s = SecretString::deserialize(StrDeserializer::<Error>::new("t\u{f6}xt")).unwrap();
    assert_eq!(s.expose_secret(), "t\u{f6}xt");
    let before = freed_with_marker();
    let owned = String::from_utf8(marked_vec()).unwrap();
    let s = SecretString::deserialize(StringDeserializer::<Error>::new(owned)).unwrap();
    assert_eq!(s.expose_secret(), "x");
    assert_eq!(freed_with_marker(), before);
    let k = SecretBox::<[u8; 3]>::deserialize(SeqDeserializer::<_, Error>::new(
        vec![1u8, 2, 3].into_iter(),
    ))
    .unwrap();
    assert_eq!(k.expose_secret(), &[1, 2, 3]);
    let short =
        SecretBox::<[u8; 3]>::deserialize(SeqDeserializer::<_, Error>::new(vec![1u8].into_iter()));
    assert_eq!(
        short.unwrap_err().to_string(),
        "invalid length 1, expected 3 bytes"
    );
    let long = SecretBox::<[u8; 1]>::deserialize(SeqDeserializer::<_, Error>::new(
        vec![1u8, 2].into_iter(),
    ));
    assert!(long.is_err());
    let bad = SecretString::deserialize(BytesDeserializer::<Error>::new(b"\xff"));
    assert!(bad.is_err());
}
