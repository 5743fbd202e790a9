// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! The one error type: the errno and libmmkit's own words for it.

use std::ffi::CStr;
use std::fmt;
use std::io;

use mmkit_sys as sys;

/// A failed mmkit call: the errno it returned and the library's message
/// (`mmkit_last_error()`), which names the C call and says why, e.g.
/// `"mmkit_lock: locking 16384 KiB more would exceed RLIMIT_MEMLOCK: limit
/// 8192 KiB, 0 KiB locked"`.
///
/// ```
/// use std::io;
/// let e = mmkit::SecretSlice::zeroed(usize::MAX).unwrap_err();
/// assert_eq!(e.errno(), 12); // ENOMEM
/// assert_eq!(e.kind(), io::ErrorKind::OutOfMemory);
/// assert!(e.message().starts_with("mmkit_secret_alloc: "));
/// let io_error: io::Error = e.into(); // the errno, as any system call's
/// assert_eq!(io_error.raw_os_error(), Some(12));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    errno: i32,
    message: String,
}

/// `Result` with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The error of a C call that just returned `rc` (a negative errno), with
    /// the message the library left for this thread.  Must be called on the
    /// thread that made the call, before its next mmkit call.
    pub(crate) fn last(rc: sys::c_int) -> Error {
        // SAFETY: mmkit_last_error() takes no argument and returns a
        // NUL-terminated string in storage of this thread that lives as
        // long as the thread; it is copied out at once.
        let message = unsafe { CStr::from_ptr(sys::mmkit_last_error()) };
        Error {
            errno: -rc,
            message: message.to_string_lossy().into_owned(),
        }
    }

    /// An error found on the Rust side before calling `op` (a string the C
    /// call cannot take, a value out of its range).
    pub(crate) fn invalid(op: &str, why: &str) -> Error {
        Error {
            errno: EINVAL,
            message: format!("{}: {}", op, why),
        }
    }

    /// A system call made on the Rust side for `op` failed with `e`.
    pub(crate) fn os(op: &str, call: &str, e: &io::Error) -> Error {
        Error {
            errno: e.raw_os_error().unwrap_or(EIO),
            message: format!("{}: {} failed", op, call),
        }
    }

    /// The errno, positive (`libc::ENOMEM`, ...).
    pub fn errno(&self) -> i32 {
        self.errno
    }

    /// The library's message: `"mmkit_OP: reason"`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The [`io::ErrorKind`] of the errno (`OutOfMemory`, `PermissionDenied`, ...).
    pub fn kind(&self) -> io::ErrorKind {
        io::Error::from_raw_os_error(self.errno).kind()
    }
}

pub(crate) const EINVAL: i32 = 22;
const EIO: i32 = 5;

/// Turns a C return value into `Ok(value)` or the thread's last error.
pub(crate) fn check(rc: sys::c_int) -> Result<sys::c_int> {
    if rc < 0 {
        Err(Error::last(rc))
    } else {
        Ok(rc)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (os error {})", self.message, self.errno)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("errno", &self.errno)
            .field("kind", &self.kind())
            .field("message", &self.message)
            .finish()
    }
}

impl std::error::Error for Error {}

impl Error {
    /// An `io::Error` of the errno's kind whose inner error is this one:
    /// it displays the library's message, and `get_ref()` downcasts to
    /// [`Error`] for the errno, but its `raw_os_error()` is `None` (an
    /// `io::Error` holds an OS error code or an inner error, never both).
    /// The `From` conversion keeps the code instead.
    pub fn into_io_error_with_message(self) -> io::Error {
        io::Error::new(self.kind(), self)
    }
}

impl From<Error> for io::Error {
    /// `io::Error::from_raw_os_error(errno)`: `raw_os_error()` and `kind()`
    /// are the errno's, as for any system call, so code that matches on
    /// them works unchanged.  The library's message does not fit in it
    /// (an `io::Error` is an OS error code or an inner error, never both):
    /// where it matters, keep the [`Error`] (`?` into `Box<dyn Error>`
    /// keeps it whole) or use [`Error::into_io_error_with_message`].
    fn from(e: Error) -> io::Error {
        io::Error::from_raw_os_error(e.errno)
    }
}
