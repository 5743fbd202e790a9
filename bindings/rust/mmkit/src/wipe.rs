// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Wiping ordinary memory a secret came from, comparing secrets in constant
//! time and filling them with random bytes: what secrecy, zeroize and
//! memsec users do with their secrets, done on mmkit's.  These are Rust
//! memory operations on Rust buffers (the C library has nothing to add:
//! its own wipe is inside `mmkit_secret_free`, its getrandom is private).

use std::io;
use std::os::raw::{c_uint, c_void};
use std::ptr;
use std::sync::atomic::{compiler_fence, Ordering};

use crate::error::{Error, Result};

/// Zeroes `len` bytes at `p` with volatile writes, which the compiler may
/// not drop although nothing reads the bytes again (what `zeroize` does).
///
/// # Safety
///
/// `p` must be valid for writes of `len` bytes.
pub(crate) unsafe fn wipe_raw(p: *mut u8, len: usize) {
    for i in 0..len {
        // SAFETY: i < len, within what the caller vouched for.
        unsafe { ptr::write_volatile(p.add(i), 0) };
    }
    compiler_fence(Ordering::SeqCst);
}

/// Zeroes a vector's whole allocation, its spare capacity included (a
/// `Vec` or `String` that grew holds copies there), then frees it.
pub(crate) fn wipe_vec(mut v: Vec<u8>) {
    let cap = v.capacity();
    // SAFETY: the allocation holds cap bytes, all writable (the spare
    // capacity is allocated, merely not initialised); u8 has no invalid
    // values and v's length covers only bytes we leave initialised.
    unsafe { wipe_raw(v.as_mut_ptr(), cap) };
}

/// Whether `a` and `b` hold the same bytes, in a time that depends on
/// their length only (as memsec's `memeq`): every byte is read, through
/// volatile reads the compiler can neither skip nor stop early.  Slices of
/// different lengths are unequal at once (the length is no secret).
pub(crate) fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        // SAFETY: x and y are references to initialised bytes.
        diff |= unsafe { ptr::read_volatile(x) ^ ptr::read_volatile(y) };
    }
    diff == 0
}

extern "C" {
    // glibc >= 2.25 (Debian 12 has 2.36): getrandom(2).
    fn getrandom(buf: *mut c_void, buflen: usize, flags: c_uint) -> isize;
}

/// Fills `buf` from the kernel's random source (`getrandom(2)`, the
/// blocking pool, as `rand::rngs::OsRng` and Go's `crypto/rand`), straight
/// into it: no byte goes through another buffer.
pub(crate) fn fill_random(op: &str, buf: &mut [u8]) -> Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: rest is writable for rest.len() bytes.
        let n = unsafe { getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::os(op, "getrandom(2)", &e));
        }
        done += n as usize;
    }
    Ok(())
}
