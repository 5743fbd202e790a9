// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Secrets made from ordinary memory (which is wiped), from random bytes,
//! compared in constant time; and [`SecretString`].

use std::fmt;
use std::str::{self, FromStr};

use crate::error::Result;
use crate::secret::{Access, SecretBox, SecretSlice};
use crate::wipe;

impl SecretSlice {
    /// The bytes of `v` copied into pooled secret memory, then `v`'s whole
    /// allocation zeroed (its spare capacity too) and freed: as secrecy
    /// 0.10's `From<Vec<u8>>`, whose `SecretBox` zeroizes on drop.  `v` is
    /// wiped whether or not the allocation succeeds.
    ///
    /// ```
    /// let key = mmkit::SecretSlice::from_vec(b"hunter2".to_vec())?;
    /// assert_eq!(key.expose_secret(), b"hunter2");
    /// # Ok::<(), mmkit::Error>(())
    /// ```
    pub fn from_vec(v: Vec<u8>) -> Result<Self> {
        let secret = Self::from_slice(&v);
        wipe::wipe_vec(v);
        secret
    }

    /// A copy of `bytes` in pooled secret memory (`bytes` is left as it
    /// is: the caller owns it).
    pub fn from_slice(bytes: &[u8]) -> Result<Self> {
        let mut secret = Self::zeroed(bytes.len())?;
        secret.expose_secret_mut().copy_from_slice(bytes);
        Ok(secret)
    }

    /// `len` random bytes (`getrandom(2)`), written by the kernel straight
    /// into the secret memory: no copy of them exists elsewhere.
    ///
    /// ```
    /// let key = mmkit::SecretSlice::random(32)?;
    /// assert_eq!(key.len(), 32);
    /// # Ok::<(), mmkit::Error>(())
    /// ```
    pub fn random(len: usize) -> Result<Self> {
        let mut secret = Self::zeroed(len)?;
        wipe::fill_random("SecretSlice::random", secret.expose_secret_mut())?;
        Ok(secret)
    }

    /// Whether the secret's bytes are `other`'s, in a time that depends on
    /// the length only (as memsec's `memeq`); a different length is
    /// `false` at once.  Panics if protected with [`Access::NoAccess`].
    ///
    /// ```
    /// let pin = mmkit::SecretSlice::from_slice(b"1234")?;
    /// assert!(pin.ct_eq(b"1234"));
    /// assert!(!pin.ct_eq(b"1235"));
    /// # Ok::<(), mmkit::Error>(())
    /// ```
    pub fn ct_eq(&self, other: &[u8]) -> bool {
        wipe::ct_eq(self.expose_secret(), other)
    }
}

/// The allocation failing is a panic, as `Vec` and `Box` abort when memory
/// runs out; [`SecretSlice::from_vec`] returns the error instead.
impl From<Vec<u8>> for SecretSlice {
    fn from(v: Vec<u8>) -> Self {
        Self::from_vec(v).unwrap_or_else(|e| panic!("SecretSlice::from(Vec<u8>): {}", e))
    }
}

/// As `From<Vec<u8>>`: the box is wiped and freed.
impl From<Box<[u8]>> for SecretSlice {
    fn from(b: Box<[u8]>) -> Self {
        Self::from(b.into_vec())
    }
}

impl<const N: usize> SecretBox<[u8; N]> {
    /// `N` random bytes (`getrandom(2)`) written straight into pooled
    /// secret memory.
    ///
    /// ```
    /// let key = mmkit::SecretBox::<[u8; 32]>::random()?;
    /// assert!(!key.ct_eq(&[0; 32])); // 2^-256 to fail
    /// # Ok::<(), mmkit::Error>(())
    /// ```
    pub fn random() -> Result<Self> {
        let mut secret = Self::zeroed()?;
        wipe::fill_random("SecretBox::random", secret.expose_secret_mut())?;
        Ok(secret)
    }

    /// Constant-time comparison, as [`SecretSlice::ct_eq`].
    pub fn ct_eq(&self, other: &[u8]) -> bool {
        wipe::ct_eq(self.expose_secret(), other)
    }
}

/// Text in secret memory (secrecy 0.10's `SecretString`): always valid
/// UTF-8, zeroed when made, wiped and freed when dropped, `Debug` without
/// the text.  An empty string is an empty secret (no memory, no C call).
///
/// ```
/// use mmkit::SecretString;
/// let password = SecretString::from(String::from("correct horse")); // the String is wiped
/// assert_eq!(password.expose_secret(), "correct horse");
/// assert!(password.ct_eq("correct horse"));
/// assert_eq!(format!("{:?}", password), "SecretString([REDACTED])");
/// let empty: SecretString = "".parse()?; // FromStr: the error instead of a panic
/// assert_eq!(empty.expose_secret(), "");
/// # Ok::<(), mmkit::Error>(())
/// ```
pub struct SecretString {
    /// Valid UTF-8: made from a `str`, and `Zeroize` writes NUL bytes.
    bytes: SecretSlice,
}

impl SecretString {
    /// The text of `s` in pooled secret memory, `s`'s allocation wiped
    /// (spare capacity too) and freed, whether or not this succeeds.
    pub fn from_string(s: String) -> Result<Self> {
        Ok(SecretString {
            bytes: SecretSlice::from_vec(s.into_bytes())?,
        })
    }

    /// The text.  Panics if protected with [`Access::NoAccess`].
    pub fn expose_secret(&self) -> &str {
        // SAFETY: the bytes are valid UTF-8 (see the field).
        unsafe { str::from_utf8_unchecked(self.bytes.expose_secret()) }
    }

    /// The text, writable in place (`make_ascii_uppercase` and the like).
    /// Panics unless the access is [`Access::ReadWrite`].
    pub fn expose_secret_mut(&mut self) -> &mut str {
        // SAFETY: the bytes are valid UTF-8, and a &mut str keeps them so.
        unsafe { str::from_utf8_unchecked_mut(self.bytes.expose_secret_mut()) }
    }

    /// Constant-time comparison of the bytes (see [`SecretSlice::ct_eq`]).
    pub fn ct_eq(&self, other: &str) -> bool {
        self.bytes.ct_eq(other.as_bytes())
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the text is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Changes the access of a string longer than 2040 bytes (on pages of
    /// its own); as [`SecretSlice::protect`].
    pub fn protect(&mut self, access: Access) -> Result<()> {
        self.bytes.protect(access)
    }
}

/// The `String` is wiped and freed; the allocation failing is a panic, as
/// for `From<Vec<u8>> for SecretSlice` ([`SecretString::from_string`]
/// returns the error).
impl From<String> for SecretString {
    fn from(s: String) -> Self {
        Self::from_string(s).unwrap_or_else(|e| panic!("SecretString::from(String): {}", e))
    }
}

/// A copy of the text (the `&str` is the caller's to wipe); panics if the
/// allocation fails (`str::parse` returns the error instead).
impl From<&str> for SecretString {
    fn from(s: &str) -> Self {
        s.parse()
            .unwrap_or_else(|e| panic!("SecretString::from(&str): {}", e))
    }
}

impl FromStr for SecretString {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self> {
        Ok(SecretString {
            bytes: SecretSlice::from_slice(s.as_bytes())?,
        })
    }
}

impl fmt::Debug for SecretString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretString([REDACTED])")
    }
}

#[cfg(feature = "secrecy")]
impl secrecy::ExposeSecret<str> for SecretString {
    fn expose_secret(&self) -> &str {
        SecretString::expose_secret(self)
    }
}

#[cfg(feature = "zeroize")]
mod zeroize_traits {
    use super::SecretString;

    /// Zeroes the bytes: NUL characters, still valid UTF-8.
    impl zeroize::Zeroize for SecretString {
        fn zeroize(&mut self) {
            self.bytes.zeroize();
        }
    }

    /// Dropping wipes: `mmkit_secret_free` zeroes the memory.
    impl zeroize::ZeroizeOnDrop for SecretString {}
}
