// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! `serde::Deserialize` straight into secret memory (the `serde` feature).
//!
//! Each visitor copies what the format hands it into secret memory and
//! keeps no buffer of its own: bytes and text given by reference are
//! copied, an owned `Vec<u8>` or `String` the format gives up is wiped,
//! and a sequence of numbers is written element by element into secret
//! memory (grown by doubling, each old secret wiped by its free).  What
//! stays out of reach is the format's own memory: the input it parses
//! (a JSON document in a `String`), and any scratch buffer in which it
//! unescapes a string (serde_json's for a string with escapes) before
//! lending it; wipe those yourself where they matter.  No `Serialize`:
//! writing a secret out is an `expose_secret()` the caller makes.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};

use crate::secret::{SecretBox, SecretSlice};
use crate::secret_from::SecretString;
use crate::wipe;

fn alloc_error<E: de::Error>(e: crate::Error) -> E {
    E::custom(e)
}

struct SliceVisitor;

impl<'de> Visitor<'de> for SliceVisitor {
    type Value = SecretSlice;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("bytes or a sequence of bytes")
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<SecretSlice, E> {
        SecretSlice::from_slice(v).map_err(alloc_error)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<SecretSlice, E> {
        SecretSlice::from_vec(v).map_err(alloc_error)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<SecretSlice, E> {
        self.visit_bytes(v.as_bytes())
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<SecretSlice, E> {
        self.visit_byte_buf(v.into_bytes())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SecretSlice, A::Error> {
        let mut buf =
            SecretSlice::zeroed(seq.size_hint().unwrap_or(0).min(4096)).map_err(alloc_error)?;
        let mut len = 0;
        while let Some(byte) = seq.next_element::<u8>()? {
            if len == buf.len() {
                let mut bigger = SecretSlice::zeroed((2 * len).max(32)).map_err(alloc_error)?;
                bigger.expose_secret_mut()[..len].copy_from_slice(buf.expose_secret());
                buf = bigger;
            }
            buf.expose_secret_mut()[len] = byte;
            len += 1;
        }
        if len == buf.len() {
            return Ok(buf);
        }
        SecretSlice::from_slice(&buf.expose_secret()[..len]).map_err(alloc_error)
    }
}

/// Bytes (`deserialize_bytes`: a format's byte string, or a sequence of
/// numbers, as serde_json gives for `[1, 2, 3]`; a string's UTF-8 bytes
/// too), written into secret memory.
impl<'de> Deserialize<'de> for SecretSlice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_bytes(SliceVisitor)
    }
}

struct StringVisitor;

impl<'de> Visitor<'de> for StringVisitor {
    type Value = SecretString;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<SecretString, E> {
        v.parse().map_err(alloc_error)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<SecretString, E> {
        SecretString::from_string(v).map_err(alloc_error)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<SecretString, E> {
        match std::str::from_utf8(v) {
            Ok(s) => self.visit_str(s),
            Err(_) => Err(E::invalid_value(de::Unexpected::Bytes(b""), &self)),
        }
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<SecretString, E> {
        match String::from_utf8(v) {
            Ok(s) => self.visit_string(s),
            Err(e) => {
                wipe::wipe_vec(e.into_bytes());
                Err(E::invalid_value(de::Unexpected::Bytes(b""), &self))
            }
        }
    }
}

/// A string, written into secret memory (invalid UTF-8 is an error that
/// shows none of the bytes).
impl<'de> Deserialize<'de> for SecretString {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StringVisitor)
    }
}

struct ArrayVisitor<const N: usize>(PhantomData<[u8; N]>);

impl<'de, const N: usize> Visitor<'de> for ArrayVisitor<N> {
    type Value = SecretBox<[u8; N]>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bytes", N)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
        if v.len() != N {
            return Err(E::invalid_length(v.len(), &self));
        }
        let mut secret = SecretBox::<[u8; N]>::zeroed().map_err(alloc_error)?;
        secret.expose_secret_mut().copy_from_slice(v);
        Ok(secret)
    }

    fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
        let secret = self.visit_bytes(&v);
        wipe::wipe_vec(v);
        secret
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut secret = SecretBox::<[u8; N]>::zeroed().map_err(alloc_error)?;
        for i in 0..N {
            match seq.next_element::<u8>()? {
                Some(byte) => secret.expose_secret_mut()[i] = byte,
                None => return Err(de::Error::invalid_length(i, &self)),
            }
        }
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(N + 1, &self));
        }
        Ok(secret)
    }
}

/// `N` bytes (`deserialize_tuple`, as serde reads `[u8; N]`: a sequence
/// of exactly `N` numbers; or a byte string of length `N`), each written
/// into the secret memory in place.
impl<'de, const N: usize> Deserialize<'de> for SecretBox<[u8; N]> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_tuple(N, ArrayVisitor::<N>(PhantomData))
    }
}
