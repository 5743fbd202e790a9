// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Reference pages: memory whose untouched pages read as a repeating
//! pattern, copied on first write.

use std::ffi::CStr;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};
use std::slice;
use std::sync::Arc;

use mmkit_sys as sys;

use crate::error::{check, Error, Result};

const PROT_READ_WRITE: sys::c_int = 0x1 | 0x2;

/// A backend of reference pages (`mmkit_refpage(3)` says what each keeps
/// of the contract and costs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The `refpage_create(2)` system call of a kernel with the series
    /// (`kernel/patches/`), where the kernel publishes its number.
    Syscall,
    /// refpage.ko's `/dev/refpage`.
    Kmod,
    /// A memfd of the pattern, shared by the objects of one pattern and
    /// mapped in windows of at most 4 MiB.
    Memfd,
    /// userfaultfd: pages filled on fault by a handler thread.
    Uffd,
}

impl Backend {
    fn flag(self) -> sys::c_uint {
        match self {
            Backend::Syscall => sys::MMKIT_REFPAGE_BACKEND_SYSCALL,
            Backend::Kmod => sys::MMKIT_REFPAGE_BACKEND_KMOD,
            Backend::Memfd => sys::MMKIT_REFPAGE_BACKEND_MEMFD,
            Backend::Uffd => sys::MMKIT_REFPAGE_BACKEND_UFFD,
        }
    }

    /// `Ok` if this backend can work for this process, else why not
    /// (`mmkit_refpage_backend_available`).
    pub fn available(self) -> Result<()> {
        // SAFETY: a NULL why with length 0 is allowed: the reason goes to
        // the thread's last error.
        check(unsafe { sys::mmkit_refpage_backend_available(self.flag(), ptr::null_mut(), 0) })?;
        Ok(())
    }
}

/// The C object; destroyed when the last [`RefPage`] and [`RefMap`] of it go.
struct Object(NonNull<sys::mmkit_refpage>);

// SAFETY: libmmkit serialises the calls on one object itself (the object's
// mutex, the uffd backend's lock), and destroying it while ranges live is
// allowed; the ranges' bytes are plain memory.
unsafe impl Send for Object {}
// SAFETY: as above: every call through a shared Object is thread-safe in C.
unsafe impl Sync for Object {}

impl Drop for Object {
    fn drop(&mut self) {
        // SAFETY: the object came from mmkit_refpage_create and this is the
        // last owner; its ranges (RefMaps) hold an Arc, so none is left.
        unsafe { sys::mmkit_refpage_destroy(self.0.as_ptr()) }
    }
}

/// A reference page: a pattern of a power-of-two size (1 byte to a page)
/// that ranges made by [`RefPage::map`] read as until written.  Cloning it
/// is cheap (the object is shared).
///
/// ```
/// let page = mmkit::RefPage::new(b"0123456789abcdef")?;
/// let mut map = page.map(1 << 20)?; // 1 MiB, no page of its own yet
/// assert_eq!(&map[16..20], b"0123");
/// map[0] = b'X'; // this page alone is copied
/// assert_eq!(&map[..2], b"X1");
/// # Ok::<(), mmkit::Error>(())
/// ```
#[derive(Clone)]
pub struct RefPage {
    object: Arc<Object>,
}

impl RefPage {
    /// A reference page repeating `pattern`, on the best backend that keeps
    /// the whole contract here (or the one `MMKIT_REFPAGE_BACKEND` names).
    pub fn new(pattern: &[u8]) -> Result<RefPage> {
        Self::create(pattern, 0)
    }

    /// A reference page on `backend`; an error if it cannot work here
    /// (`ENODEV` without `/dev/refpage`, `EPERM`/`ENOSYS` for uffd).
    pub fn with_backend(pattern: &[u8], backend: Backend) -> Result<RefPage> {
        Self::create(pattern, backend.flag())
    }

    fn create(pattern: &[u8], flags: sys::c_uint) -> Result<RefPage> {
        let mut rp = ptr::null_mut();
        // SAFETY: rp is a valid out pointer and pattern is readable for its
        // length, which the C call checks (a power of two up to a page).
        check(unsafe {
            sys::mmkit_refpage_create(&mut rp, pattern.as_ptr().cast(), pattern.len(), flags)
        })?;
        let rp = NonNull::new(rp).expect("mmkit_refpage_create returned 0 and NULL");
        Ok(RefPage {
            object: Arc::new(Object(rp)),
        })
    }

    /// `len` bytes (rounded up to pages) that read as the pattern, readable
    /// and writable; unmapped when the [`RefMap`] is dropped.
    pub fn map(&self, len: usize) -> Result<RefMap> {
        let mut addr = ptr::null_mut();
        // SAFETY: the object is live (self holds it) and addr a valid out
        // pointer.
        check(unsafe {
            sys::mmkit_refpage_map(self.object.0.as_ptr(), len, PROT_READ_WRITE, &mut addr)
        })?;
        Ok(RefMap {
            object: Arc::clone(&self.object),
            ptr: NonNull::new(addr.cast()).expect("mmkit_refpage_map returned 0 and NULL"),
            len,
        })
    }

    /// Turns the private anonymous range `[addr, addr + len)` into
    /// reference-page memory (`mmkit_refpage_attach`): pages already there
    /// keep their contents, the others read as the pattern.  The returned
    /// [`RefMap`] owns the range and unmaps it when dropped.
    ///
    /// # Safety
    ///
    /// The range must be a private anonymous mapping (`mmap`) of page-
    /// aligned `addr`, readable and writable, that the caller owns and gives
    /// up: nothing else may use or unmap it afterwards (nor touch it during
    /// the call), since the `RefMap` hands it out as `&mut [u8]` and unmaps
    /// it.  Memory of a Rust allocation (`Vec`, `Box`) does not qualify.
    pub unsafe fn attach(&self, addr: *mut u8, len: usize) -> Result<RefMap> {
        let ptr = match NonNull::new(addr) {
            Some(ptr) => ptr,
            None => return Err(Error::invalid("mmkit_refpage_attach", "address NULL")),
        };
        // SAFETY: the caller guarantees the range is theirs to give up and
        // untouched meanwhile; the C call checks the rest (alignment, a
        // private anonymous mapping).
        check(unsafe { sys::mmkit_refpage_attach(self.object.0.as_ptr(), addr.cast(), len) })?;
        Ok(RefMap {
            object: Arc::clone(&self.object),
            ptr,
            len,
        })
    }

    /// The backend in use: `"syscall"`, `"kmod"`, `"memfd"` or `"uffd"`.
    pub fn backend(&self) -> &'static str {
        // SAFETY: the object is live; the C call returns one of three
        // static strings.
        let name = unsafe { CStr::from_ptr(sys::mmkit_refpage_backend(self.object.0.as_ptr())) };
        name.to_str().unwrap_or("?")
    }

    /// The contract items this object keeps, a mask of `1 << n` for items 1
    /// to 10 (`0x7fe`: all of them).
    pub fn contract(&self) -> u32 {
        // SAFETY: the object is live.
        unsafe { sys::mmkit_refpage_contract(self.object.0.as_ptr()) }
    }
}

impl fmt::Debug for RefPage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefPage")
            .field("backend", &self.backend())
            .finish()
    }
}

/// A range of reference-page memory: derefs to `[u8]`, reads as the
/// pattern where never written, unmapped on drop (errors ignored, as
/// `memmap2` does).  It keeps its [`RefPage`]'s object alive.
///
/// On the uffd backend, the first read of a page is served by a handler
/// thread through `SIGBUS`: a thread that blocks `SIGBUS` must not touch
/// the range (`mmkit_refpage(3)`).
///
/// ```
/// let mut map = mmkit::RefPage::new(&[0xff])?.map(8192)?;
/// assert_eq!(map.len(), 8192);
/// assert!(map.iter().all(|&b| b == 0xff));
/// map.remap(4096)?;
/// assert_eq!(map.len(), 4096);
/// # Ok::<(), mmkit::Error>(())
/// ```
pub struct RefMap {
    object: Arc<Object>,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the range is plain memory this RefMap owns; unmapping it from
// another thread is allowed (the object is Sync).
unsafe impl Send for RefMap {}
// SAFETY: &RefMap only reads the bytes.
unsafe impl Sync for RefMap {}

impl RefMap {
    /// Grows or shrinks the range (`mmkit_refpage_remap`, which may move
    /// it): kept bytes move along, added pages read as the pattern.
    pub fn remap(&mut self, new_len: usize) -> Result<()> {
        let mut addr = ptr::null_mut();
        // SAFETY: the range is this RefMap's own (unique through &mut self),
        // of the live object; addr is a valid out pointer.
        check(unsafe {
            sys::mmkit_refpage_remap(
                self.object.0.as_ptr(),
                self.ptr.as_ptr().cast(),
                self.len,
                new_len,
                &mut addr,
            )
        })?;
        self.ptr = NonNull::new(addr.cast()).expect("mmkit_refpage_remap returned 0 and NULL");
        self.len = new_len;
        Ok(())
    }
}

impl Deref for RefMap {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is a live read-write mapping owned by this
        // RefMap (a map of at least len bytes, or an attached range the
        // caller gave up); it is only written through &mut self.
        unsafe { slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for RefMap {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for deref; &mut self makes it unique.
        unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for RefMap {
    fn drop(&mut self) {
        // SAFETY: the range belongs to this RefMap and nothing borrows it
        // any more; an error (none is expected) leaves it mapped: a leak,
        // never a dangling use.
        unsafe {
            sys::mmkit_refpage_unmap(self.object.0.as_ptr(), self.ptr.as_ptr().cast(), self.len);
        }
    }
}

impl fmt::Debug for RefMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefMap")
            .field("ptr", &self.ptr)
            .field("len", &self.len)
            .finish()
    }
}
