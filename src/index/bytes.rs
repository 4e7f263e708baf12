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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::error::{CError, Code};

    const MAGIC: &[u8; 8] = b"TESTREC1";
    const WHAT: &str = "a test record";

    /// The error of a call that must fail (the readers carry no Debug, so
    /// `unwrap_err` is not available).
    fn refused<T>(result: CResult<T>) -> CError {
        match result {
            Ok(_) => panic!("accepted bytes that must be refused"),
            Err(e) => e,
        }
    }

    fn unseal(bytes: &[u8]) -> CResult<(ByteReader<'_>, [u8; 32])> {
        ByteReader::unseal(bytes, MAGIC, WHAT, "the test bytes")
    }

    /// A record holding one field of every kind.
    fn sample_record() -> ByteWriter {
        let mut w = ByteWriter::new(MAGIC);
        w.u8(0xab).i32(-7).u32(0xdead_beef).u64(u64::MAX - 1).f32(-1.5).f64(1e300);
        w.str("column é").floats(&[0.25, -2.0]).f32s(&[1.0, 2.0, 3.0]).f64s(&[-0.5]);
        w.u64s(&[0, 1 << 40]).u32s(&[9, 8, 7]).str("");
        w
    }

    #[test]
    fn hex_is_two_lowercase_digits_per_byte() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        // The SHA-256 of "abc" (the standard's own example).
        assert_eq!(hex(&Sha256::digest(b"abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn writer_lays_out_little_endian_fields_after_the_magic() {
        let mut w = ByteWriter::new(MAGIC);
        w.u8(1).i32(-2).u32(3).u64(4).f32(1.5).f64(-0.25).str("hé");
        let mut want = MAGIC.to_vec();
        want.push(1);
        want.extend([0xfe, 0xff, 0xff, 0xff]); // -2
        want.extend([3, 0, 0, 0]);
        want.extend([4, 0, 0, 0, 0, 0, 0, 0]);
        want.extend([0x00, 0x00, 0xc0, 0x3f]); // 1.5f32 = 0x3fc00000
        want.extend([0, 0, 0, 0, 0, 0, 0xd0, 0xbf]); // -0.25f64 = 0xbfd0000000000000
        want.extend([3, 0, 0, 0, 0, 0, 0, 0]); // "hé" is 3 bytes of UTF-8
        want.extend([0x68, 0xc3, 0xa9]);
        assert_eq!(w.body(), want.as_slice());
    }

    #[test]
    fn counted_arrays_carry_their_length_and_floats_do_not() {
        let mut counted = ByteWriter::new(MAGIC);
        counted.f32s(&[1.0, 2.0]);
        let mut bare = ByteWriter::new(MAGIC);
        bare.floats(&[1.0, 2.0]);
        let values: [u8; 8] = [0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40]; // 1.0f32, 2.0f32
        let count: [u8; 8] = [2, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(&counted.body()[8..], [&count[..], &values[..]].concat().as_slice());
        assert_eq!(&bare.body()[8..], &values[..]);
        let mut ints = ByteWriter::new(MAGIC);
        ints.u32s(&[0x0102_0304]).u64s(&[]);
        let want: [u8; 20] = [1, 0, 0, 0, 0, 0, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0];
        assert_eq!(&ints.body()[8..], &want[..]);
    }

    #[test]
    fn seal_appends_the_sha256_of_the_body() {
        let w = sample_record();
        let body = w.body().to_vec();
        let sealed = w.seal();
        assert_eq!(sealed.len(), body.len() + 32);
        assert_eq!(&sealed[..body.len()], body.as_slice());
        assert_eq!(&sealed[body.len()..], Sha256::digest(&body).as_slice());
    }

    #[test]
    fn round_trip_reads_back_every_field() {
        let sealed = sample_record().seal();
        let (mut r, digest) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(&digest[..], &sealed[sealed.len() - 32..]);
        assert_eq!(r.u8().ok(), Some(0xab));
        assert_eq!(r.i32().ok(), Some(-7));
        assert_eq!(r.u32().ok(), Some(0xdead_beef));
        assert_eq!(r.u64().ok(), Some(u64::MAX - 1));
        assert_eq!(r.f32().ok(), Some(-1.5));
        assert_eq!(r.f64().ok(), Some(1e300));
        assert_eq!(r.str().ok().as_deref(), Some("column é"));
        assert_eq!(r.floats(2).ok(), Some(vec![0.25, -2.0]));
        assert_eq!(r.f32s().ok(), Some(vec![1.0, 2.0, 3.0]));
        assert_eq!(r.f64s().ok(), Some(vec![-0.5]));
        assert_eq!(r.u64s().ok(), Some(vec![0, 1 << 40]));
        assert_eq!(r.u32s().ok(), Some(vec![9, 8, 7]));
        assert_eq!(r.str().ok().as_deref(), Some(""));
        assert!(r.finish().is_ok());
    }

    #[test]
    fn float_bits_survive_the_round_trip() {
        let odd = [f32::from_bits(0x7fc0_0001), -0.0, f32::MIN_POSITIVE / 2.0, f32::INFINITY];
        let mut w = ByteWriter::new(MAGIC);
        w.f32s(&odd);
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        let back: Vec<u32> = r.f32s().unwrap_or_else(|e| panic!("{}", e.message)).iter().map(|f| f.to_bits()).collect();
        assert_eq!(back, odd.iter().map(|f| f.to_bits()).collect::<Vec<_>>());
    }

    #[test]
    fn short_or_foreign_bytes_are_refused_as_wrong_magic() {
        let want = "the test bytes are not a test record: wrong magic or too short";
        for bytes in [&b""[..], &MAGIC[..], &[0u8; 39][..]] {
            let e = refused(unseal(bytes));
            assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
        }
        // A well-formed record of another kind.
        let other = ByteWriter::new(b"OTHERREC").seal();
        let e = refused(unseal(&other));
        assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
        // The smallest record: the magic and the digest of the magic.
        let empty = ByteWriter::new(MAGIC).seal();
        assert_eq!(empty.len(), 40);
        let (r, _) = unseal(&empty).unwrap_or_else(|e| panic!("{}", e.message));
        assert!(r.finish().is_ok());
    }

    #[test]
    fn every_truncation_is_refused() {
        let sealed = sample_record().seal();
        let checksum = "the test bytes are not a test record: checksum mismatch (truncated or corrupted)";
        let magic = "the test bytes are not a test record: wrong magic or too short";
        for len in 0..sealed.len() {
            let e = refused(unseal(&sealed[..len]));
            assert_eq!(e.code, Code::InvalidArgument, "length {len}");
            assert_eq!(e.message, if len < 40 { magic } else { checksum }, "length {len}");
        }
    }

    #[test]
    fn every_flipped_bit_is_refused() {
        let sealed = sample_record().seal();
        let checksum = "the test bytes are not a test record: checksum mismatch (truncated or corrupted)";
        let magic = "the test bytes are not a test record: wrong magic or too short";
        for i in 0..sealed.len() {
            for bit in [0x01u8, 0x80] {
                let mut bad = sealed.clone();
                bad[i] ^= bit;
                let e = refused(unseal(&bad));
                assert_eq!(e.code, Code::InvalidArgument);
                assert_eq!(e.message, if i < 8 { magic } else { checksum }, "byte {i}");
            }
        }
    }

    #[test]
    fn reading_past_the_fields_is_truncated() {
        let mut w = ByteWriter::new(MAGIC);
        w.u32(5);
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        // A u64 needs 8 bytes, 4 are left: refused, and nothing is consumed.
        let e = refused(r.u64());
        let want = "bytes are not a test record: truncated";
        assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
        assert_eq!(r.u32().ok(), Some(5));
        assert_eq!(refused(r.u8()).message, "bytes are not a test record: truncated");
        assert!(r.finish().is_ok());
    }

    #[test]
    fn counts_beyond_the_record_are_refused() {
        // A count of 3 floats with only 2 behind it.
        let mut w = ByteWriter::new(MAGIC);
        w.u64(3).f32(1.0).f32(2.0);
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(refused(r.f32s()).message, "bytes are not a test record: truncated");
        // A count whose byte size overflows a usize.
        let mut w = ByteWriter::new(MAGIC);
        w.u64(u64::MAX / 8 + 1);
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(refused(r.u64s()).message, "bytes are not a test record: size overflow");
        // A string longer than the record.
        let mut w = ByteWriter::new(MAGIC);
        w.u64(100).u8(b'a');
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(refused(r.str()).message, "bytes are not a test record: truncated");
    }

    #[test]
    fn a_name_that_is_not_utf8_is_refused() {
        let mut w = ByteWriter::new(MAGIC);
        w.u64(2).u8(0xc3).u8(0x28); // a lead byte followed by a non-continuation byte
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        let e = refused(r.str());
        let want = "bytes are not a test record: a name is not UTF-8";
        assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
    }

    #[test]
    fn bytes_left_after_the_last_field_are_refused() {
        let mut w = ByteWriter::new(MAGIC);
        w.u32(1).u8(0);
        let sealed = w.seal();
        let (mut r, _) = unseal(&sealed).unwrap_or_else(|e| panic!("{}", e.message));
        assert_eq!(r.u32().ok(), Some(1));
        let e = refused(r.finish());
        let want = "bytes are not a test record: trailing bytes";
        assert_eq!((e.code, e.message.as_str()), (Code::InvalidArgument, want));
        assert_eq!(r.u8().ok(), Some(0));
        assert!(r.finish().is_ok());
    }
}
