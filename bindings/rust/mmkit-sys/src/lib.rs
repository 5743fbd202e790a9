// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Raw declarations of libmmkit's C API (`include/mmkit.h`), one for one.
//!
//! Every function returns 0 (or a count) or a negative errno and never
//! touches `errno`; [`mmkit_last_error`] words the calling thread's last
//! failure.  The C sources are compiled by this crate's build script from
//! the list in `lib/SOURCES`; set `MMKIT_SYS_SYSTEM=1` (and optionally
//! `MMKIT_SYS_LIB_DIR`) to link an installed `libmmkit.so` instead.  The
//! safe API is the `mmkit` crate.
#![allow(non_camel_case_types)]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use std::fmt;

// std::os::raw rather than core::ffi: the C types reached core in Rust 1.64.
pub use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_ulonglong, c_void};
/// C `pid_t`.
pub type pid_t = i32;

/// `enum mmkit_feature_id`: `MMKIT_FEATURE_REFPAGE`.
pub const MMKIT_FEATURE_REFPAGE: c_uint = 0;
/// `MMKIT_FEATURE_NAMES`.
pub const MMKIT_FEATURE_NAMES: c_uint = 1;
/// `MMKIT_FEATURE_PAC`.
pub const MMKIT_FEATURE_PAC: c_uint = 2;
/// `MMKIT_FEATURE_SECRET`.
pub const MMKIT_FEATURE_SECRET: c_uint = 3;
/// `MMKIT_FEATURE_LOCK_ONFAULT`.
pub const MMKIT_FEATURE_LOCK_ONFAULT: c_uint = 4;
/// `MMKIT_FEATURE_USERFAULTFD`.
pub const MMKIT_FEATURE_USERFAULTFD: c_uint = 5;
/// `MMKIT_FEATURE_COUNT`: the features this version knows.
pub const MMKIT_FEATURE_COUNT: c_uint = 6;

/// `enum mmkit_status`: the kernel feature itself is used.
pub const MMKIT_STATUS_NATIVE: c_uint = 0;
/// Works, through a documented substitute.
pub const MMKIT_STATUS_FALLBACK: c_uint = 1;
/// Cannot work on this kernel or CPU.
pub const MMKIT_STATUS_UNSUPPORTED: c_uint = 2;
/// Not built into this version of mmkit.
pub const MMKIT_STATUS_NOT_IMPLEMENTED: c_uint = 3;

/// `MMKIT_REASON_MAX`: room of the reason strings, NUL included.
pub const MMKIT_REASON_MAX: usize = 256;
/// `MMKIT_FEATURE_SLOTS`: entries of `struct mmkit_features`.
pub const MMKIT_FEATURE_SLOTS: usize = 16;
/// `MMKIT_NAME_MAX`: longest name, NUL included.
pub const MMKIT_NAME_MAX: usize = 80;

/// `struct mmkit_feature`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mmkit_feature {
    /// `enum mmkit_status`.
    pub status: c_uint,
    /// NUL-terminated backend name.
    pub backend: [c_char; 16],
    /// NUL-terminated reason.
    pub reason: [c_char; MMKIT_REASON_MAX],
}

/// `struct mmkit_features`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mmkit_features {
    /// Indexed by `MMKIT_FEATURE_*`.
    pub feature: [mmkit_feature; MMKIT_FEATURE_SLOTS],
}

/// `enum mmkit_region_kind`: anonymous, no name.
pub const MMKIT_REGION_ANON: c_uint = 0;
/// Named by the kernel (`[anon:NAME]`).
pub const MMKIT_REGION_ANON_NAMED: c_uint = 1;
/// Named through the mmkit registry.
pub const MMKIT_REGION_REGISTRY: c_uint = 2;
/// File-backed: the name is the path.
pub const MMKIT_REGION_FILE: c_uint = 3;
/// `[heap]`.
pub const MMKIT_REGION_HEAP: c_uint = 4;
/// `[stack]`.
pub const MMKIT_REGION_STACK: c_uint = 5;
/// `[vdso]`, `[vvar]`, ...
pub const MMKIT_REGION_SPECIAL: c_uint = 6;

/// `MMKIT_REGION_HAVE_PSS`: the kernel gave Pss.
pub const MMKIT_REGION_HAVE_PSS: c_uint = 0x1;
/// `MMKIT_REGION_HAVE_SWAP`: the kernel gave Swap.
pub const MMKIT_REGION_HAVE_SWAP: c_uint = 0x2;

/// `struct mmkit_region`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mmkit_region {
    /// First byte.
    pub start: c_ulong,
    /// One past the last byte.
    pub end: c_ulong,
    /// `enum mmkit_region_kind`.
    pub kind: c_uint,
    /// `"rw-p"`, NUL-terminated.
    pub perms: [c_char; 5],
    /// NUL-terminated name (bare for kernel and registry names).
    pub name: [c_char; 4096],
    /// Bytes mapped.
    pub size: c_ulonglong,
    /// Resident bytes.
    pub rss: c_ulonglong,
    /// Proportional set size.
    pub pss: c_ulonglong,
    /// Private dirty bytes.
    pub private_dirty: c_ulonglong,
    /// Swapped-out bytes.
    pub swap: c_ulonglong,
    /// Locked bytes.
    pub locked: c_ulonglong,
    /// `MMKIT_REGION_HAVE_*` bits.
    pub have: c_uint,
    /// Shared clean bytes (since 0.2).
    pub shared_clean: c_ulonglong,
    /// Shared dirty bytes (since 0.2).
    pub shared_dirty: c_ulonglong,
    /// Private clean bytes (since 0.2).
    pub private_clean: c_ulonglong,
    /// Referenced bytes (since 0.2).
    pub referenced: c_ulonglong,
    /// Anonymous bytes (in a file mapping: the pages written, copied; since 0.2).
    pub anonymous: c_ulonglong,
    /// `MMKIT_REGION_REFPAGE` (since 0.2).
    pub flags: c_uint,
}

/// `mmkit_region_fn`.
pub type mmkit_region_fn =
    Option<unsafe extern "C" fn(region: *const mmkit_region, arg: *mut c_void) -> c_int>;

/// `MMKIT_LOCK_ONFAULT`: lock pages as they are faulted in.
pub const MMKIT_LOCK_ONFAULT: c_uint = 0x1;
/// `MMKIT_LOCK_CURRENT`: `mmkit_lockall` what is mapped now.
pub const MMKIT_LOCK_CURRENT: c_uint = 0x2;
/// `MMKIT_LOCK_FUTURE`: `mmkit_lockall` what is mapped later.
pub const MMKIT_LOCK_FUTURE: c_uint = 0x4;
/// `MMKIT_MEMLOCK_UNLIMITED`.
pub const MMKIT_MEMLOCK_UNLIMITED: c_ulonglong = !0;

/// `struct mmkit_memlock`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct mmkit_memlock {
    /// Soft limit, or `MMKIT_MEMLOCK_UNLIMITED`.
    pub limit: c_ulonglong,
    /// Already locked by this process.
    pub locked: c_ulonglong,
    /// What the request adds to the charge.
    pub needed: c_ulonglong,
    /// Non-zero: the limit does not apply.
    pub exempt: c_int,
}

/// `MMKIT_PAC_APIAKEY`.
pub const MMKIT_PAC_APIAKEY: c_ulong = 1 << 0;
/// `MMKIT_PAC_APIBKEY`.
pub const MMKIT_PAC_APIBKEY: c_ulong = 1 << 1;
/// `MMKIT_PAC_APDAKEY`.
pub const MMKIT_PAC_APDAKEY: c_ulong = 1 << 2;
/// `MMKIT_PAC_APDBKEY`.
pub const MMKIT_PAC_APDBKEY: c_ulong = 1 << 3;
/// `MMKIT_PAC_ALL_KEYS`.
pub const MMKIT_PAC_ALL_KEYS: c_ulong = 0xf;

/// `MMKIT_SECRET_REQUIRE_SECRETMEM`: no fallback to mlock.
pub const MMKIT_SECRET_REQUIRE_SECRETMEM: c_uint = 0x1;
/// `MMKIT_SECRET_QUIET`: no notice about the fallback on stderr.
pub const MMKIT_SECRET_QUIET: c_uint = 0x2;
/// `MMKIT_SECRET_PAGES`: own pages between guard pages.
pub const MMKIT_SECRET_PAGES: c_uint = 0x4;
/// `MMKIT_SECRET_END_AT_GUARD`: ends exactly at the upper guard page.
pub const MMKIT_SECRET_END_AT_GUARD: c_uint = 0x8;
/// `MMKIT_SECRET_POOL_MAX`: largest pooled size.
pub const MMKIT_SECRET_POOL_MAX: usize = 2040;
/// `MMKIT_SECRET_NOACCESS`.
pub const MMKIT_SECRET_NOACCESS: c_int = 0;
/// `MMKIT_SECRET_READONLY`.
pub const MMKIT_SECRET_READONLY: c_int = 1;
/// `MMKIT_SECRET_READWRITE`.
pub const MMKIT_SECRET_READWRITE: c_int = 2;

/// `struct mmkit_secret_stats`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct mmkit_secret_stats {
    /// `"memfd_secret"`, `"mlock"` or `"none"`.
    pub backend: [c_char; 16],
    /// Why this backend.
    pub reason: [c_char; MMKIT_REASON_MAX],
    /// Why the last allocation failed, or empty.
    pub last_error: [c_char; MMKIT_REASON_MAX],
    /// Allocations not yet freed.
    pub allocs_live: c_ulonglong,
    /// Bytes asked for by those.
    pub bytes_live: c_ulonglong,
    /// Secret pages mapped, live or cached.
    pub pages_mapped: c_ulonglong,
    /// Of those, held empty for reuse.
    pub pages_cached: c_ulonglong,
    /// Charged to `RLIMIT_MEMLOCK` by mmkit.
    pub bytes_locked: c_ulonglong,
    /// Soft limit, or `MMKIT_MEMLOCK_UNLIMITED`.
    pub memlock_limit: c_ulonglong,
    /// Allocations refused for `RLIMIT_MEMLOCK`.
    pub enomem: c_ulonglong,
    /// Non-zero: the limit does not apply.
    pub memlock_exempt: c_int,
    /// Non-zero: the mlock fallback is in use.
    pub fallback: c_int,
}

/// `MMKIT_REFPAGE_BACKEND_KMOD`.
pub const MMKIT_REFPAGE_BACKEND_KMOD: c_uint = 0x1;
/// `MMKIT_REFPAGE_BACKEND_MEMFD`.
pub const MMKIT_REFPAGE_BACKEND_MEMFD: c_uint = 0x2;
/// `MMKIT_REFPAGE_BACKEND_UFFD`.
pub const MMKIT_REFPAGE_BACKEND_UFFD: c_uint = 0x4;
/// `MMKIT_REFPAGE_BACKEND_SYSCALL`.
pub const MMKIT_REFPAGE_BACKEND_SYSCALL: c_uint = 0x8;
/// `MMKIT_REFPAGE_TAGGED`.
pub const MMKIT_REFPAGE_TAGGED: c_uint = 0x10;
/// `MMKIT_REFPAGE_FULL_CONTRACT`: items 1 to 10.
pub const MMKIT_REFPAGE_FULL_CONTRACT: c_uint = 0x7fe;

/// `struct mmkit_refpage_stats`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct mmkit_refpage_stats {
    /// The memfd backend's pattern files.
    pub pattern_files: c_ulonglong,
    /// The page cache they hold.
    pub cache_bytes: c_ulonglong,
}

/// `struct mmkit_refpage`, opaque.
#[repr(C)]
pub struct mmkit_refpage {
    _opaque: [u8; 0],
}

impl fmt::Debug for mmkit_refpage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("mmkit_refpage")
    }
}

extern "C" {
    /// The calling thread's last failure, `"mmkit_OP: reason"`; never NULL.
    pub fn mmkit_last_error() -> *const c_char;

    /// Fills `f` for this process and kernel.
    pub fn mmkit_probe(f: *mut mmkit_features) -> c_int;
    /// Stable key of a feature, NULL if out of range.
    pub fn mmkit_feature_name(id: c_uint) -> *const c_char;
    /// Stable word of a status, NULL if out of range.
    pub fn mmkit_status_name(status: c_uint) -> *const c_char;

    /// Names `[addr, addr + len)`; `name` NULL clears.
    pub fn mmkit_name(addr: *mut c_void, len: usize, name: *const c_char) -> c_int;
    /// `mmkit_name` of whole pages only: -EINVAL for part of a page, 0 for `len` 0.
    pub fn mmkit_name_pages(addr: *mut c_void, len: usize, name: *const c_char) -> c_int;
    /// 0 if the kernel would accept `name`.
    pub fn mmkit_name_valid(name: *const c_char) -> c_int;
    /// Calls `f` for each mapping of process `pid` (0: this one).
    pub fn mmkit_regions(pid: pid_t, f: mmkit_region_fn, arg: *mut c_void) -> c_int;
    /// The word of a region kind (`"anon"`, `"heap"` ...), NULL if out of range.
    pub fn mmkit_region_kind_name(kind: c_uint) -> *const c_char;

    /// The `RLIMIT_MEMLOCK` arithmetic of `mmkit_lock`.
    pub fn mmkit_memlock_check(addr: *const c_void, len: usize, m: *mut mmkit_memlock) -> c_int;
    /// The `RLIMIT_MEMLOCK` arithmetic of `mmkit_lockall`.
    pub fn mmkit_memlock_check_all(flags: c_uint, m: *mut mmkit_memlock) -> c_int;
    /// `mlock2()` after the limit check.
    pub fn mmkit_lock(addr: *mut c_void, len: usize, flags: c_uint) -> c_int;
    /// `munlock()`.
    pub fn mmkit_unlock(addr: *mut c_void, len: usize) -> c_int;
    /// `mlockall()` after the limit check.
    pub fn mmkit_lockall(flags: c_uint) -> c_int;
    /// `munlockall()`.
    pub fn mmkit_unlockall() -> c_int;

    /// The calling thread's enabled PAC keys.
    pub fn mmkit_pac_get_enabled_keys(keys: *mut c_ulong) -> c_int;
    /// Enables the keys of `mask` set in `enabled`, disables the others.
    pub fn mmkit_pac_set_enabled_keys(mask: c_ulong, enabled: c_ulong) -> c_int;

    /// Allocates `size` zeroed bytes, 16-byte aligned, into `*p`.
    pub fn mmkit_secret_alloc(p: *mut *mut c_void, size: usize, flags: c_uint) -> c_int;
    /// Allocates up to `n` secrets of `size` bytes into `p[0..n]`: how many,
    /// stopping at the first failure, or a negative errno if none.
    pub fn mmkit_secret_alloc_many(
        p: *mut *mut c_void,
        n: usize,
        size: usize,
        flags: c_uint,
    ) -> c_int;
    /// Checks the canaries, zeroes and releases `p`; aborts on misuse.
    pub fn mmkit_secret_free(p: *mut c_void);
    /// The allocator's figures.
    pub fn mmkit_secret_stats(st: *mut mmkit_secret_stats) -> c_int;
    /// Changes the access to a page-granular secret.
    pub fn mmkit_secret_protect(p: *mut c_void, access: c_int) -> c_int;
    /// The size asked for when `p` was allocated.
    pub fn mmkit_secret_size(p: *const c_void, size: *mut usize) -> c_int;
    /// Maps and keeps pool chunks for `bytes` of small secrets.
    pub fn mmkit_secret_reserve(bytes: usize) -> c_int;

    /// Creates a reference page repeating `pattern`.
    pub fn mmkit_refpage_create(
        rp: *mut *mut mmkit_refpage,
        pattern: *const c_void,
        pattern_size: usize,
        flags: c_uint,
    ) -> c_int;
    /// Destroys `rp` (does not unmap its ranges).
    pub fn mmkit_refpage_destroy(rp: *mut mmkit_refpage);
    /// Maps `len` bytes reading as the pattern.
    pub fn mmkit_refpage_map(
        rp: *mut mmkit_refpage,
        len: usize,
        prot: c_int,
        addr: *mut *mut c_void,
    ) -> c_int;
    /// Turns a private anonymous range into reference-page memory.
    pub fn mmkit_refpage_attach(rp: *mut mmkit_refpage, addr: *mut c_void, len: usize) -> c_int;
    /// Unmaps a range of `rp`.
    pub fn mmkit_refpage_unmap(rp: *mut mmkit_refpage, addr: *mut c_void, len: usize) -> c_int;
    /// `mremap(MREMAP_MAYMOVE)` for a range of `rp`.
    pub fn mmkit_refpage_remap(
        rp: *mut mmkit_refpage,
        old_addr: *mut c_void,
        old_len: usize,
        new_len: usize,
        new_addr: *mut *mut c_void,
    ) -> c_int;
    /// `"kmod"`, `"memfd"` or `"uffd"`.
    pub fn mmkit_refpage_backend(rp: *const mmkit_refpage) -> *const c_char;
    /// The contract items `rp` keeps.
    pub fn mmkit_refpage_contract(rp: *const mmkit_refpage) -> c_uint;
    /// 0 if backend `flag` can work here; `why` says why not.
    pub fn mmkit_refpage_backend_available(flag: c_uint, why: *mut c_char, why_len: usize)
        -> c_int;
    /// The `MMKIT_REFPAGE_BACKEND_*` flag of backend `name`, or -EINVAL.
    pub fn mmkit_refpage_backend_flag(name: *const c_char) -> c_int;
    /// What reference pages cost this process beyond the pages written.
    pub fn mmkit_refpage_stats(st: *mut mmkit_refpage_stats) -> c_int;

    /// Sizes and offsets of the C structs, for the layout test.
    #[doc(hidden)]
    pub static mmkit_sys_layout: [usize; 15];
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{size_of, MaybeUninit};

    // offset_of! came with Rust 1.77.
    macro_rules! offset_of_compat {
        ($t:ty, $field:ident) => {{
            let value = MaybeUninit::<$t>::uninit();
            let base = value.as_ptr();
            // SAFETY: addr_of! computes the field's address inside the
            // uninitialised value without reading or referencing it.
            let field = unsafe { std::ptr::addr_of!((*base).$field) };
            field as usize - base as usize
        }};
    }

    #[test]
    fn layout_matches_c() {
        // SAFETY: a constant array csrc/layout.c defines, never written.
        let c = unsafe { mmkit_sys_layout };
        let rust = [
            size_of::<mmkit_feature>(),
            size_of::<mmkit_features>(),
            size_of::<mmkit_region>(),
            offset_of_compat!(mmkit_region, name),
            offset_of_compat!(mmkit_region, swap),
            offset_of_compat!(mmkit_region, have),
            offset_of_compat!(mmkit_region, anonymous),
            offset_of_compat!(mmkit_region, flags),
            size_of::<mmkit_memlock>(),
            offset_of_compat!(mmkit_memlock, exempt),
            size_of::<mmkit_secret_stats>(),
            offset_of_compat!(mmkit_secret_stats, memlock_limit),
            offset_of_compat!(mmkit_secret_stats, fallback),
            size_of::<mmkit_refpage_stats>(),
            offset_of_compat!(mmkit_refpage_stats, cache_bytes),
        ];
        assert_eq!(c, rust);
    }

    /// Every function `include/mmkit.h` declares is declared here too, as
    /// the crate's documentation promises ("one for one").
    #[test]
    fn every_c_function_declared() {
        let header = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/csrc/include/mmkit.h"));
        let this = include_str!("lib.rs");
        let mut missing = Vec::new();
        for line in header.lines() {
            // A prototype starts at the line's start; its name is the word
            // before the first parenthesis.
            if line.starts_with(|c: char| !c.is_ascii_alphabetic()) || line.starts_with("typedef") {
                continue;
            }
            let open = match line.find('(') {
                Some(open) => open,
                None => continue,
            };
            let name = line[..open].rsplit([' ', '*']).next().unwrap_or("");
            if name.starts_with("mmkit_") && !this.contains(&format!("pub fn {}(", name)) {
                missing.push(name);
            }
        }
        assert!(
            missing.is_empty(),
            "not declared in mmkit-sys: {:?}",
            missing
        );
    }
}
