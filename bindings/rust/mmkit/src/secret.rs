// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Secret memory: [`SecretBox`], [`SecretSlice`], their page-granular
//! variants and [`Access`], and the allocator's figures.

use std::any::type_name;
use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, needs_drop, size_of, ManuallyDrop};
use std::ptr::{self, NonNull};
use std::slice;

use mmkit_sys as sys;

use crate::error::{check, Error, Result};

/// Types whose all-zero bytes are a valid value, so that a
/// [`SecretBox`] can hand out freshly zeroed secret memory as a `T`.
///
/// # Safety
///
/// Implement it only for types for which a value made of zero bytes is
/// valid (integers, arrays of them, `#[repr(C)]` structs of them).  A
/// reference, `NonNull`, `NonZero*` or an enum without a zero
/// discriminant must never be `Zeroable`.
pub unsafe trait Zeroable: Sized {}

macro_rules! zeroable {
    ($($t:ty)*) => { $(
        // SAFETY: zero bytes are the number 0 (or false, or '\0').
        unsafe impl Zeroable for $t {}
    )* };
}
zeroable!(u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 bool char);

// SAFETY: an array of zeroable elements is zeroable element by element.
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}

/// What [`SecretBox::protect`] and [`SecretSlice::protect`] allow: like
/// `sodium_mprotect_noaccess/readonly/readwrite`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Every access faults (the secret is at rest).
    NoAccess,
    /// Reads only.
    ReadOnly,
    /// Reads and writes (every secret starts so).
    ReadWrite,
}

impl Access {
    fn to_c(self) -> sys::c_int {
        match self {
            Access::NoAccess => sys::MMKIT_SECRET_NOACCESS,
            Access::ReadOnly => sys::MMKIT_SECRET_READONLY,
            Access::ReadWrite => sys::MMKIT_SECRET_READWRITE,
        }
    }
}

/// One allocation of libmmkit's secret allocator, freed (wiped first by
/// the C side) on drop; or, for size 0, an empty secret that holds no
/// memory and makes no C call (`mmkit_secret_alloc` refuses size 0).
struct Secret {
    ptr: NonNull<u8>,
    size: usize,
    access: Access,
}

/// The alignment of secret memory, for the address of an empty secret.
#[repr(align(16))]
struct Align16;

impl Secret {
    /// `size` zeroed bytes, 16-byte aligned; on their own pages between
    /// guard pages when `pages`.
    fn alloc(size: usize, pages: bool) -> Result<Secret> {
        if size == 0 {
            return Ok(Secret {
                ptr: NonNull::<Align16>::dangling().cast(),
                size,
                access: Access::ReadWrite,
            });
        }
        let flags = if pages { sys::MMKIT_SECRET_PAGES } else { 0 };
        let mut p: *mut sys::c_void = ptr::null_mut();
        // SAFETY: p is a valid out pointer; a size of at least 1 and known
        // flags are what the call takes.
        check(unsafe { sys::mmkit_secret_alloc(&mut p, size, flags) })?;
        let ptr = NonNull::new(p as *mut u8).expect("mmkit_secret_alloc returned 0 and NULL");
        Ok(Secret {
            ptr,
            size,
            access: Access::ReadWrite,
        })
    }

    fn protect(&mut self, access: Access) -> Result<()> {
        // No byte to protect: the access is remembered, as for any secret.
        if self.size == 0 {
            self.access = access;
            return Ok(());
        }
        // SAFETY: ptr is a live allocation of the secret allocator; the call
        // refuses (EINVAL) one that is not on pages of its own.
        check(unsafe { sys::mmkit_secret_protect(self.ptr.as_ptr().cast(), access.to_c()) })?;
        self.access = access;
        Ok(())
    }

    fn readable(&self, what: &str) {
        assert!(
            self.access != Access::NoAccess,
            "{} of a secret protected with Access::NoAccess",
            what
        );
    }

    fn writable(&self, what: &str) {
        assert!(
            self.access == Access::ReadWrite,
            "{} of a secret protected with Access::{:?}",
            what,
            self.access
        );
    }

    /// Read-write again (for a destructor or zeroize); panics if the C side
    /// refuses, which it cannot for a secret it protected before.
    fn make_writable(&mut self) {
        if self.access != Access::ReadWrite {
            self.protect(Access::ReadWrite)
                .expect("mmkit_secret_protect(READWRITE) of a protected secret");
        }
    }
}

impl Drop for Secret {
    fn drop(&mut self) {
        if self.size == 0 {
            return;
        }
        // SAFETY: ptr came from mmkit_secret_alloc and is freed once, here.
        // The C call zeroes the bytes (any access), checks the canaries and
        // aborts the process if they were overwritten.
        unsafe { sys::mmkit_secret_free(self.ptr.as_ptr().cast()) }
    }
}

/// A `T` in secret memory (`memfd_secret(2)`: out of the kernel's direct
/// map, never swapped, never in a core dump; or the announced mlock
/// fallback), zeroed when made, wiped and freed when dropped.
///
/// Made with [`SecretBox::zeroed`] (pooled: 100,000 `SecretBox<[u8; 32]>`
/// fit the default 8 MiB `RLIMIT_MEMLOCK`) or [`SecretBox::zeroed_pages`]
/// (pages of its own, which [`SecretBox::protect`] can make read-only or
/// inaccessible).  `T` must be [`Zeroable`] and aligned to at most 16
/// bytes.  `Debug` prints no contents.  No `Clone`: a copy would be a
/// second secret to wipe.
///
/// Where `memfd_secret` is unavailable libmmkit falls back to mlocked
/// memory and says so once on stderr (`MMKIT_SECRET_REQUIRE=1` in the
/// environment forbids the fallback: allocations then fail with `ENOSYS`).
///
/// **Threads**: libmmkit frees a secret from any thread, so the box is
/// `Send` and `Sync` when `T` is.
///
/// **fork**: in a child the parent's secrets are inaccessible (the child
/// starts with an empty allocator); touching one there faults, and
/// dropping one frees nothing (the C call does nothing for them).  A `T`
/// with a destructor is dropped in place first, which touches the memory:
/// forget such boxes in a child.
///
/// ```
/// use mmkit::{Access, SecretBox};
/// let mut key = SecretBox::<[u8; 32]>::zeroed_pages()?;
/// key.expose_secret_mut().copy_from_slice(&[7; 32]);
/// key.protect(Access::NoAccess)?; // at rest: every access faults
/// key.protect(Access::ReadOnly)?; // to use it
/// assert_eq!(key.expose_secret()[0], 7);
/// assert_eq!(format!("{:?}", key), "SecretBox<[u8; 32]>([REDACTED])");
/// # Ok::<(), mmkit::Error>(())
/// ```
pub struct SecretBox<T: Zeroable> {
    secret: Secret,
    _owns: PhantomData<T>,
}

// SAFETY: the C allocator's free and protect may be called from any
// thread (per-thread caches hand slots back), so the box moves between
// threads as its T does.
unsafe impl<T: Zeroable + Send> Send for SecretBox<T> {}
// SAFETY: &SecretBox only reads T; the C allocator is not called through &.
unsafe impl<T: Zeroable + Sync> Sync for SecretBox<T> {}

impl<T: Zeroable> SecretBox<T> {
    fn alloc(pages: bool) -> Result<Self> {
        if align_of::<T>() > 16 {
            return Err(Error::invalid(
                "mmkit_secret_alloc",
                "secret memory is 16-byte aligned; this type needs more",
            ));
        }
        Ok(SecretBox {
            secret: Secret::alloc(size_of::<T>(), pages)?,
            _owns: PhantomData,
        })
    }

    /// A zeroed `T` in pooled secret memory.
    pub fn zeroed() -> Result<Self> {
        Self::alloc(false)
    }

    /// A zeroed `T` on secret pages of its own between guard pages
    /// (`MMKIT_SECRET_PAGES`): [`SecretBox::protect`] works on it.  Costs
    /// at least one page of `RLIMIT_MEMLOCK`.
    pub fn zeroed_pages() -> Result<Self> {
        Self::alloc(true)
    }

    /// A zeroed `T` in pooled secret memory, then filled in place by `init`
    /// (no copy of the value ever sits on the stack).
    pub fn init_with_mut(init: impl FnOnce(&mut T)) -> Result<Self> {
        let mut secret = Self::zeroed()?;
        init(secret.expose_secret_mut());
        Ok(secret)
    }

    /// The `T` that `init` returns, moved into pooled secret memory; the
    /// bytes it occupied on the way (the return slot) are zeroed after the
    /// move, as secrecy 0.10's `init_with` zeroizes its copy.  Copies the
    /// compiler made before the return are beyond reach: where that matters
    /// use [`SecretBox::init_with_mut`], which builds the value in place.
    ///
    /// ```
    /// let key = mmkit::SecretBox::<[u8; 4]>::init_with(|| [1, 2, 3, 4])?;
    /// assert_eq!(key.expose_secret(), &[1, 2, 3, 4]);
    /// # Ok::<(), mmkit::Error>(())
    /// ```
    pub fn init_with(init: impl FnOnce() -> T) -> Result<Self> {
        let mut secret = Self::zeroed()?;
        secret.put(init());
        Ok(secret)
    }

    /// As [`SecretBox::init_with`], for an `init` that can fail: its error,
    /// or the allocation's converted into `E` (`std::io::Error` and
    /// `Box<dyn Error>` convert from [`Error`]).  The secret memory is taken
    /// first, so a failed allocation never leaves a value made for nothing.
    ///
    /// ```
    /// let key = mmkit::SecretBox::<u64>::try_init_with(|| {
    ///     u64::from_str_radix("2a", 16)
    ///         .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
    /// })?;
    /// assert_eq!(*key.expose_secret(), 42);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn try_init_with<E: From<Error>>(
        init: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<Self, E> {
        let mut secret = Self::zeroed()?;
        secret.put(init()?);
        Ok(secret)
    }

    /// Moves `value` into the (zeroed, writable) secret memory and zeroes
    /// the bytes it was moved from.
    fn put(&mut self, value: T) {
        let mut value = ManuallyDrop::new(value);
        let src = &mut *value as *mut T as *mut u8;
        // SAFETY: the secret is a fresh, writable, aligned allocation of
        // size_of::<T>() bytes holding a zero T, which needs no drop; value
        // is a T the secret takes over (ManuallyDrop: never dropped here).
        // Its bytes are then zeroed through volatile writes, which the
        // compiler may not remove although nothing reads them again.
        unsafe {
            ptr::copy_nonoverlapping(src, self.secret.ptr.as_ptr(), size_of::<T>());
            crate::wipe::wipe_raw(src, size_of::<T>());
        }
    }

    /// The secret.  Panics if it is protected with [`Access::NoAccess`].
    pub fn expose_secret(&self) -> &T {
        self.secret.readable("expose_secret");
        // SAFETY: ptr is a live allocation of size_of::<T>() bytes (or, for
        // a zero-sized T, a non-null address), 16-byte aligned
        // (align_of::<T>() <= 16 was checked), that started as zero bytes, a
        // valid T (Zeroable), and is only written through &mut self; it is
        // readable (checked above).
        unsafe { &*(self.secret.ptr.as_ptr() as *const T) }
    }

    /// The secret, writable.  Panics unless its access is
    /// [`Access::ReadWrite`].
    pub fn expose_secret_mut(&mut self) -> &mut T {
        self.secret.writable("expose_secret_mut");
        // SAFETY: as for expose_secret; &mut self makes the reference
        // unique, and the memory is writable (checked above).
        unsafe { &mut *(self.secret.ptr.as_ptr() as *mut T) }
    }

    /// Changes the access to a box made by [`SecretBox::zeroed_pages`]
    /// (`mmkit_secret_protect`); a pooled box gives `EINVAL`.
    /// [`SecretBox::expose_secret`] and [`SecretBox::expose_secret_mut`]
    /// panic where the access forbids them, rather than fault.
    pub fn protect(&mut self, access: Access) -> Result<()> {
        self.secret.protect(access)
    }

    /// The access [`SecretBox::protect`] last set.
    pub fn access(&self) -> Access {
        self.secret.access
    }

    /// The address of the secret, for comparisons and for C calls.
    pub fn as_ptr(&self) -> *const T {
        self.secret.ptr.as_ptr() as *const T
    }
}

impl<T: Zeroable> Drop for SecretBox<T> {
    fn drop(&mut self) {
        if needs_drop::<T>() {
            self.secret.make_writable();
            // SAFETY: the T is valid (see expose_secret) and dropped once;
            // the memory is freed right after, by Secret's drop.
            unsafe { ptr::drop_in_place(self.secret.ptr.as_ptr() as *mut T) }
        }
    }
}

impl<T: Zeroable> fmt::Debug for SecretBox<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretBox<{}>([REDACTED])", type_name::<T>())
    }
}

/// A fixed-length byte buffer in secret memory (secrecy 0.10's name for
/// secret slices), zeroed when made, wiped and freed when dropped.  What
/// [`SecretBox`] says about threads, fork and protection holds here too.
///
/// ```
/// use mmkit::SecretSlice;
/// let mut password = SecretSlice::zeroed(64)?;
/// password.expose_secret_mut()[..6].copy_from_slice(b"hunter");
/// assert_eq!(&password.expose_secret()[..6], b"hunter");
/// let key = SecretSlice::from(vec![1, 2, 3]); // the Vec is wiped
/// assert!(key.ct_eq(&[1, 2, 3]));
/// # Ok::<(), mmkit::Error>(())
/// ```
pub struct SecretSlice {
    secret: Secret,
    len: usize,
}

// SAFETY: as for SecretBox: bytes, freed from any thread.
unsafe impl Send for SecretSlice {}
// SAFETY: &SecretSlice only reads the bytes.
unsafe impl Sync for SecretSlice {}

impl SecretSlice {
    /// `len` zeroed bytes of pooled secret memory (pages of its own
    /// beyond `MMKIT_SECRET_POOL_MAX`, 2040 bytes).  A `len` of 0 is an
    /// empty secret, as in secrecy: it holds no memory and costs no C call
    /// (the C allocator refuses size 0); every binding does the same.
    pub fn zeroed(len: usize) -> Result<Self> {
        Ok(SecretSlice {
            secret: Secret::alloc(len, false)?,
            len,
        })
    }

    /// `len` zeroed bytes on secret pages of their own:
    /// [`SecretSlice::protect`] works on them.
    pub fn zeroed_pages(len: usize) -> Result<Self> {
        Ok(SecretSlice {
            secret: Secret::alloc(len, true)?,
            len,
        })
    }

    /// The bytes.  Panics if protected with [`Access::NoAccess`].
    pub fn expose_secret(&self) -> &[u8] {
        self.secret.readable("expose_secret");
        // SAFETY: ptr is a live allocation of len bytes (or, for len 0, a
        // non-null, aligned address), initialised (zeroed by the allocator),
        // only written through &mut self, and readable (checked above).
        unsafe { slice::from_raw_parts(self.secret.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.  Panics unless the access is
    /// [`Access::ReadWrite`].
    pub fn expose_secret_mut(&mut self) -> &mut [u8] {
        self.secret.writable("expose_secret_mut");
        // SAFETY: as for expose_secret; &mut self makes it unique and the
        // memory is writable (checked above).
        unsafe { slice::from_raw_parts_mut(self.secret.ptr.as_ptr(), self.len) }
    }

    /// Changes the access of a slice made by [`SecretSlice::zeroed_pages`]
    /// or longer than 2040 bytes; a pooled one gives `EINVAL`.  An empty
    /// slice has no byte to protect: any access is `Ok`.
    pub fn protect(&mut self, access: Access) -> Result<()> {
        self.secret.protect(access)
    }

    /// The access [`SecretSlice::protect`] last set.
    pub fn access(&self) -> Access {
        self.secret.access
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the length is 0.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the bytes.
    pub fn as_ptr(&self) -> *const u8 {
        self.secret.ptr.as_ptr()
    }
}

impl fmt::Debug for SecretSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretSlice<[u8; {}]>([REDACTED])", self.len)
    }
}

#[cfg(feature = "secrecy")]
mod secrecy_traits {
    use super::{SecretBox, SecretSlice, Zeroable};

    impl<T: Zeroable> secrecy::ExposeSecret<T> for SecretBox<T> {
        fn expose_secret(&self) -> &T {
            SecretBox::expose_secret(self)
        }
    }

    impl<T: Zeroable> secrecy::ExposeSecretMut<T> for SecretBox<T> {
        fn expose_secret_mut(&mut self) -> &mut T {
            SecretBox::expose_secret_mut(self)
        }
    }

    impl secrecy::ExposeSecret<[u8]> for SecretSlice {
        fn expose_secret(&self) -> &[u8] {
            SecretSlice::expose_secret(self)
        }
    }

    impl secrecy::ExposeSecretMut<[u8]> for SecretSlice {
        fn expose_secret_mut(&mut self) -> &mut [u8] {
            SecretSlice::expose_secret_mut(self)
        }
    }
}

#[cfg(feature = "zeroize")]
mod zeroize_traits {
    use std::mem::size_of;
    use std::slice;

    use super::{Secret, SecretBox, SecretSlice, Zeroable};

    impl Secret {
        /// Zeroes `len` bytes, whatever the access (restored after).
        fn zeroize_bytes(&mut self, len: usize) {
            let access = self.access;
            self.make_writable();
            // SAFETY: ptr is a live, writable allocation of at least len
            // bytes; zero bytes are valid for what it holds (Zeroable, u8).
            let bytes = unsafe { slice::from_raw_parts_mut(self.ptr.as_ptr(), len) };
            zeroize::Zeroize::zeroize(bytes);
            if access != self.access {
                self.protect(access)
                    .expect("mmkit_secret_protect back to the access it had");
            }
        }
    }

    impl<T: Zeroable> zeroize::Zeroize for SecretBox<T> {
        /// Zeroes the `T` in place (a valid value: `T` is [`Zeroable`]).
        fn zeroize(&mut self) {
            self.secret.zeroize_bytes(size_of::<T>());
        }
    }

    /// Dropping wipes: `mmkit_secret_free` zeroes the memory.
    impl<T: Zeroable> zeroize::ZeroizeOnDrop for SecretBox<T> {}

    impl zeroize::Zeroize for SecretSlice {
        fn zeroize(&mut self) {
            self.secret.zeroize_bytes(self.len);
        }
    }

    /// Dropping wipes: `mmkit_secret_free` zeroes the memory.
    impl zeroize::ZeroizeOnDrop for SecretSlice {}
}

/// The secret allocator's figures (`mmkit_secret_stats`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretStats {
    /// `"memfd_secret"`, `"mlock"` (the fallback) or `"none"`.
    pub backend: String,
    /// Why this backend.
    pub reason: String,
    /// Why the last allocation failed, or empty.
    pub last_error: String,
    /// Allocations not yet freed.
    pub allocs_live: u64,
    /// Bytes asked for by those allocations.
    pub bytes_live: u64,
    /// Secret pages mapped, live or cached.
    pub pages_mapped: u64,
    /// Of those, held empty for reuse.
    pub pages_cached: u64,
    /// Bytes charged to `RLIMIT_MEMLOCK` by mmkit.
    pub bytes_locked: u64,
    /// The soft `RLIMIT_MEMLOCK`, `None` when unlimited.
    pub memlock_limit: Option<u64>,
    /// Allocations refused for `RLIMIT_MEMLOCK`.
    pub enomem: u64,
    /// `CAP_IPC_LOCK` in the initial user namespace: the limit does not apply.
    pub memlock_exempt: bool,
    /// The mlock fallback is in use.
    pub fallback: bool,
}

/// The secret allocator's figures now.
pub fn secret_stats() -> Result<SecretStats> {
    // SAFETY: an all-zero mmkit_secret_stats is valid (integers and
    // arrays), and the call fills it.
    let mut st: sys::mmkit_secret_stats = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid, writable struct of the C layout.
    check(unsafe { sys::mmkit_secret_stats(&mut st) })?;
    Ok(SecretStats {
        backend: crate::c_text(&st.backend),
        reason: crate::c_text(&st.reason),
        last_error: crate::c_text(&st.last_error),
        allocs_live: st.allocs_live,
        bytes_live: st.bytes_live,
        pages_mapped: st.pages_mapped,
        pages_cached: st.pages_cached,
        bytes_locked: st.bytes_locked,
        memlock_limit: crate::limit(st.memlock_limit),
        enomem: st.enomem,
        memlock_exempt: st.memlock_exempt != 0,
        fallback: st.fallback != 0,
    })
}

/// Maps and pre-faults pool memory for `bytes` of small secrets now
/// (`mmkit_secret_reserve`), charging `RLIMIT_MEMLOCK` up front: later
/// [`SecretBox::zeroed`] calls neither map nor fault.
pub fn secret_reserve(bytes: usize) -> Result<()> {
    // SAFETY: takes a plain size.
    check(unsafe { sys::mmkit_secret_reserve(bytes) })?;
    Ok(())
}
