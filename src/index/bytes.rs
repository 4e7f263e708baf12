//! The byte form of this library's own records (a shared vector model, a
//! training request, a worker's training statistics): a magic, little-endian
//! fields, and a SHA-256 of everything before it, so a truncated or corrupted
//! buffer is refused before any field is read.

use sha2::{Digest, Sha256};

use crate::boundary::error::{invalid, CResult};

/// Hex of a SHA-256 digest.
pub fn hex(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Appends little-endian fields to a record that starts with its magic.
pub struct ByteWriter(Vec<u8>);

impl ByteWriter {
    pub fn new(magic: &[u8; 8]) -> Self {
        Self(magic.to_vec())
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// A length (u64), then the UTF-8 bytes.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    /// Floats with no count before them (the reader knows how many).
    pub fn floats(&mut self, v: &[f32]) -> &mut Self {
        self.0.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        self
    }
    /// A count (u64), then the values.
    pub fn f32s(&mut self, v: &[f32]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        self
    }
    pub fn f64s(&mut self, v: &[f64]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        self
    }
    pub fn u64s(&mut self, v: &[u64]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        self
    }
    pub fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.u64(v.len() as u64);
        self.0.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        self
    }
    /// The record without its digest (what a fingerprint is taken of).
    pub fn body(&self) -> &[u8] {
        &self.0
    }
    /// The record followed by its 32-byte SHA-256.
    pub fn seal(self) -> Vec<u8> {
        let mut out = self.0;
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }
}

/// Reads the fields of a sealed record, after checking its magic and digest.
pub struct ByteReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// What the record is, for messages: "a lance-c vector model".
    what: &'static str,
}

impl<'a> ByteReader<'a> {
    /// Checks the magic and the digest; the reader starts after the magic.
    /// Also returns the digest, which identifies the record.
    pub fn unseal(bytes: &'a [u8], magic: &[u8; 8], what: &'static str, name: &str) -> CResult<(Self, [u8; 32])> {
        if bytes.len() < magic.len() + 32 || &bytes[..magic.len()] != magic {
            return Err(invalid(format!("{name} are not {what}: wrong magic or too short")));
        }
        let (body, digest) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body).as_slice() != digest {
            return Err(invalid(format!("{name} are not {what}: checksum mismatch (truncated or corrupted)")));
        }
        Ok((Self { bytes: body, pos: magic.len(), what }, digest.try_into().expect("32 bytes")))
    }

    pub fn bad(&self, detail: &str) -> crate::boundary::error::CError {
        invalid(format!("bytes are not {}: {detail}", self.what))
    }

    fn take(&mut self, n: usize) -> CResult<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.bytes.len());
        let end = end.ok_or_else(|| self.bad("truncated"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }
    pub fn u8(&mut self) -> CResult<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn i32(&mut self) -> CResult<i32> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u32(&mut self) -> CResult<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> CResult<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn f32(&mut self) -> CResult<f32> {
        Ok(f32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn f64(&mut self) -> CResult<f64> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    /// A u64 that must fit a usize.
    pub fn len(&mut self) -> CResult<usize> {
        let v = self.u64()?;
        usize::try_from(v).map_err(|_| self.bad("size overflow"))
    }
    pub fn str(&mut self) -> CResult<String> {
        let n = self.len()?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| self.bad("a name is not UTF-8"))
    }
    fn array<const N: usize, T>(&mut self, n: usize, from: fn([u8; N]) -> T) -> CResult<Vec<T>> {
        let raw = self.take(n.checked_mul(N).ok_or_else(|| self.bad("size overflow"))?)?;
        Ok(raw.chunks_exact(N).map(|c| from(c.try_into().expect("N bytes"))).collect())
    }
    /// `n` floats with no count before them.
    pub fn floats(&mut self, n: usize) -> CResult<Vec<f32>> {
        self.array(n, f32::from_le_bytes)
    }
    pub fn f32s(&mut self) -> CResult<Vec<f32>> {
        let n = self.len()?;
        self.array(n, f32::from_le_bytes)
    }
    pub fn f64s(&mut self) -> CResult<Vec<f64>> {
        let n = self.len()?;
        self.array(n, f64::from_le_bytes)
    }
    pub fn u64s(&mut self) -> CResult<Vec<u64>> {
        let n = self.len()?;
        self.array(n, u64::from_le_bytes)
    }
    pub fn u32s(&mut self) -> CResult<Vec<u32>> {
        let n = self.len()?;
        self.array(n, u32::from_le_bytes)
    }
    /// Refuses bytes left after the last field.
    pub fn finish(&self) -> CResult<()> {
        if self.pos != self.bytes.len() {
            return Err(self.bad("trailing bytes"));
        }
        Ok(())
    }
}
