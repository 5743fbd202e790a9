// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Named anonymous memory and the mappings of a process.

use std::ffi::CString;
use std::os::raw::{c_int, c_void};
use std::ptr;

use mmkit_sys as sys;

use crate::error::{check, Error, Result};

fn c_name(op: &str, name: &str) -> Result<CString> {
    CString::new(name).map_err(|_| Error::invalid(op, "name contains a NUL byte"))
}

/// Names the pages of `range` (`mmkit_name_pages`): `/proc/PID/maps` shows
/// `[anon:NAME]` where the kernel has `CONFIG_ANON_VMA_NAME`, and
/// [`regions`] and `mmkit maps` show the name from mmkit's registry
/// elsewhere.  `range` must be whole pages (start and length multiples of
/// the page size, such as a [`crate::RefMap`] of whole pages or an `mmap`):
/// `EINVAL`, saying so, for part of a page, whose other bytes would be
/// named too ([`name_raw`] names a range and its last page whole).  An
/// empty `range` names nothing.  The memory must be anonymous (a file or a
/// `memfd_secret` mapping gives `EBADF`); `EINVAL` if `name` is not one the
/// kernel takes (see [`validate_name`]).  The same call as Go's `Name` and
/// Python's `name`.
///
/// ```
/// let arena = mmkit::RefPage::new(&[0])?.map(1 << 20)?;
/// mmkit::name(&arena, "my-arena")?;
/// let e = mmkit::name(&arena[..10], "part").unwrap_err();
/// assert_eq!(e.errno(), 22); // EINVAL: part of a page
/// assert!(e.message().contains("does not cover whole pages"));
/// # Ok::<(), mmkit::Error>(())
/// ```
pub fn name(range: &[u8], name: &str) -> Result<()> {
    let name = c_name("mmkit_name_pages", name)?;
    // SAFETY: range is memory the caller can read; naming changes no byte
    // of it, and the C call refuses part of a page.
    check(unsafe {
        sys::mmkit_name_pages(range.as_ptr() as *mut c_void, range.len(), name.as_ptr())
    })?;
    Ok(())
}

/// Names `[addr, addr + len)` or, with `None`, clears its name
/// (`mmkit_name`, with the kernel's rules): for reservations that cannot be
/// a slice (`PROT_NONE` arenas, which allocators name most).  `addr` must
/// be page aligned; `len` is rounded up to pages.
///
/// # Safety
///
/// The pages must be anonymous mappings this program manages: a name
/// splits mappings (another part of the program may count on them, and
/// the kernel's limit on mappings applies), and with the registry a name
/// stays on the address range until it is cleared or renamed.
pub unsafe fn name_raw(addr: *const u8, len: usize, name: Option<&str>) -> Result<()> {
    let name = name.map(|n| c_name("mmkit_name", n)).transpose()?;
    let name_ptr = name.as_ref().map_or(ptr::null(), |n| n.as_ptr());
    // SAFETY: the caller vouches for the range; the C call checks its
    // alignment and that it is mapped, and reads the name only.
    check(unsafe { sys::mmkit_name(addr as *mut c_void, len, name_ptr) })?;
    Ok(())
}

/// `Ok` if the kernel would accept `name` (`mmkit_name_valid`), else the
/// reason: at most 79 printable ASCII characters, none of `` \ ` $ [ ] ``.
///
/// ```
/// assert!(mmkit::validate_name("session-keys").is_ok());
/// let e = mmkit::validate_name("bad[name]").unwrap_err();
/// assert_eq!(
///     e.message(),
///     "mmkit_name_valid: name: character 0x5b at offset 3 is not allowed"
/// );
/// ```
pub fn validate_name(name: &str) -> Result<()> {
    let name = c_name("mmkit_name_valid", name)?;
    // SAFETY: name is NUL-terminated.
    check(unsafe { sys::mmkit_name_valid(name.as_ptr()) })?;
    Ok(())
}

/// Whether the kernel would accept `name`; [`validate_name`] says why not.
///
/// ```
/// assert!(mmkit::is_valid_name("session-keys"));
/// assert!(!mmkit::is_valid_name("bad[name]"));
/// ```
pub fn is_valid_name(name: &str) -> bool {
    validate_name(name).is_ok()
}

/// What a [`Region`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegionKind {
    /// Anonymous memory without a name.
    Anon,
    /// Named by the kernel (`[anon:NAME]`, `[anon_shmem:NAME]`).
    AnonNamed,
    /// Named through mmkit's registry (kernels without `CONFIG_ANON_VMA_NAME`).
    Registry,
    /// A file: the name is its path.
    File,
    /// `[heap]`.
    Heap,
    /// `[stack]`.
    Stack,
    /// The kernel's other bracketed names: `[vdso]`, `[vvar]`, ...
    Special,
}

/// One mapping of a process (or the part of one a registry name covers),
/// from `/proc/PID/smaps`: the shape every mmkit binding gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// First address.
    pub start: usize,
    /// One past the last address.
    pub end: usize,
    /// What it is.
    pub kind: RegionKind,
    /// `"rw-p"`, as in `/proc/PID/maps` (`s` last: shared).
    pub perms: String,
    /// What the mapping is called, by [`kind`](Region::kind): for
    /// [`RegionKind::AnonNamed`] and [`RegionKind::Registry`] the name as
    /// given to [`name`] (no `[anon:...]` around it); for
    /// [`RegionKind::File`] the path (`"/usr/lib/libc.so.6"`, `" (deleted)"`
    /// and all); for [`RegionKind::Heap`], [`RegionKind::Stack`] and
    /// [`RegionKind::Special`] the kernel's bracketed word (`"[heap]"`,
    /// `"[vdso]"`); `None` for [`RegionKind::Anon`], anonymous memory
    /// without a name.
    pub name: Option<String>,
    /// Bytes mapped.
    pub size: u64,
    /// Bytes resident.
    pub rss: u64,
    /// Proportional set size in bytes, where the kernel gives it.
    pub pss: Option<u64>,
    /// Bytes swapped out, where the kernel gives it.
    pub swap: Option<u64>,
    /// Private dirty bytes.
    pub private_dirty: u64,
    /// Locked bytes.
    pub locked: u64,
    /// Shared clean bytes (smaps' `Shared_Clean`).
    pub shared_clean: u64,
    /// Shared dirty bytes.
    pub shared_dirty: u64,
    /// Private clean bytes.
    pub private_clean: u64,
    /// Bytes marked referenced.
    pub referenced: u64,
    /// Anonymous bytes (not backed by a file).
    pub anonymous: u64,
}

impl Region {
    fn from_c(r: &sys::mmkit_region) -> Region {
        let kind = match r.kind {
            sys::MMKIT_REGION_ANON => RegionKind::Anon,
            sys::MMKIT_REGION_ANON_NAMED => RegionKind::AnonNamed,
            sys::MMKIT_REGION_REGISTRY => RegionKind::Registry,
            sys::MMKIT_REGION_FILE => RegionKind::File,
            sys::MMKIT_REGION_HEAP => RegionKind::Heap,
            sys::MMKIT_REGION_STACK => RegionKind::Stack,
            _ => RegionKind::Special,
        };
        let name = crate::c_text(&r.name);
        Region {
            start: r.start as usize,
            end: r.end as usize,
            kind,
            perms: crate::c_text(&r.perms),
            name: if name.is_empty() { None } else { Some(name) },
            size: r.size,
            rss: r.rss,
            pss: (r.have & sys::MMKIT_REGION_HAVE_PSS != 0).then_some(r.pss),
            swap: (r.have & sys::MMKIT_REGION_HAVE_SWAP != 0).then_some(r.swap),
            private_dirty: r.private_dirty,
            locked: r.locked,
            shared_clean: r.shared_clean,
            shared_dirty: r.shared_dirty,
            private_clean: r.private_clean,
            referenced: r.referenced,
            anonymous: r.anonymous,
        }
    }
}

unsafe extern "C" fn collect(region: *const sys::mmkit_region, arg: *mut c_void) -> c_int {
    // SAFETY: mmkit_regions passes the Vec given below as arg and a valid
    // region for the duration of this call.  Nothing here unwinds (a
    // failed allocation aborts).
    let (out, region) = unsafe { (&mut *(arg as *mut Vec<Region>), &*region) };
    out.push(Region::from_c(region));
    0
}

/// The mappings of process `pid` (0: this one) in address order, with
/// kernel and registry names (`mmkit_regions`).  `ESRCH` if there is no
/// such process, `EACCES`/`EPERM` if its memory may not be read.
///
/// ```
/// use mmkit::RegionKind;
/// let arena = mmkit::RefPage::new(&[0])?.map(4 << 20)?;
/// mmkit::name(&arena, "doc-arena")?;
/// let regions = mmkit::regions(0)?; // 0: this process
/// let r = regions
///     .iter()
///     .find(|r| r.start == arena.as_ptr() as usize)
///     .expect("the arena is mapped");
/// assert_eq!(r.name.as_deref(), Some("doc-arena"));
/// assert!(matches!(r.kind, RegionKind::AnonNamed | RegionKind::Registry));
/// assert!(regions.iter().any(|r| r.kind == RegionKind::Stack));
/// # Ok::<(), mmkit::Error>(())
/// ```
pub fn regions(pid: u32) -> Result<Vec<Region>> {
    let pid =
        i32::try_from(pid).map_err(|_| Error::invalid("mmkit_regions", "pid out of range"))?;
    let mut out: Vec<Region> = Vec::new();
    // SAFETY: collect matches mmkit_region_fn and receives &mut out, which
    // outlives the call; it never stops the walk (returns 0).
    check(unsafe {
        sys::mmkit_regions(
            pid,
            Some(collect),
            &mut out as *mut Vec<Region> as *mut c_void,
        )
    })?;
    Ok(out)
}
