//! The grid as a PNG image (8-bit greyscale, one square of pixels per cell), written without an
//! image crate: a PNG of stored (uncompressed) deflate blocks is a few CRC-guarded chunks.

use crate::bits::BitMatrix;

/// Largest image side written, in pixels (cells shrink to fit, down to 1 pixel).
pub const MAX_SIDE_PX: usize = 4096;

/// Pixels per cell for a mask of side `n`: up to 16, so that the image stays under
/// [`MAX_SIDE_PX`] and about 1024 pixels for mid-sized masks.
pub fn cell_pixels(n: usize) -> usize {
    (1024 / n.max(1)).clamp(1, 16)
}

/// The PNG bytes of `mask`: a set cell is dark (`0x1d`), an unset cell white, the diagonal of
/// unset cells light grey (the residual connection every layer has anyway).
///
/// Complexity: `O((n · cell)²)` bytes.
///
/// # Examples
/// ```
/// use hasseflow_core::{BitMatrix, interop::png::grid_png};
/// let png = grid_png(&BitMatrix::from_fn(3, |q, k| k <= q));
/// assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
/// ```
pub fn grid_png(mask: &BitMatrix) -> Vec<u8> {
    let n = mask.n();
    let cell = cell_pixels(n);
    let side = (n * cell).clamp(1, MAX_SIDE_PX);
    // Raw scanlines: a filter byte (0 = none) then one grey byte per pixel.
    let mut raw = Vec::with_capacity(side * (side + 1));
    for y in 0..side {
        raw.push(0);
        let q = (y / cell).min(n.saturating_sub(1));
        for x in 0..side {
            let k = (x / cell).min(n.saturating_sub(1));
            let v = if n == 0 {
                0xff
            } else if mask.get(q, k) {
                0x1d
            } else if q == k {
                0xdd
            } else {
                0xff
            };
            raw.push(v);
        }
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&(side as u32).to_be_bytes());
    ihdr.extend_from_slice(&(side as u32).to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit, greyscale, deflate, adaptive filters, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    chunk(&mut out, b"IEND", &[]);
    out
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// A zlib stream of stored deflate blocks (at most 65535 bytes each) with its Adler-32.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = if data.is_empty() { vec![&[]] } else { data.chunks(65535).collect() };
    for (i, block) in blocks.iter().enumerate() {
        out.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + u32::from(byte)) % 65521;
        b = (b + a) % 65521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// CRC-32 (ISO-HDLC, the one PNG uses), bitwise: the images are small.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &byte in data {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads back our own PNG (stored blocks only), checking every CRC and the Adler-32.
    fn decode(png: &[u8]) -> (usize, Vec<u8>) {
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        let mut i = 8;
        let (mut side, mut idat) = (0, Vec::new());
        while i < png.len() {
            let len = u32::from_be_bytes(png[i..i + 4].try_into().unwrap()) as usize;
            let kind = &png[i + 4..i + 8];
            let data = &png[i + 8..i + 8 + len];
            let crc = u32::from_be_bytes(png[i + 8 + len..i + 12 + len].try_into().unwrap());
            assert_eq!(crc, crc32(&png[i + 4..i + 8 + len]), "chunk CRC");
            match kind {
                b"IHDR" => side = u32::from_be_bytes(data[0..4].try_into().unwrap()) as usize,
                b"IDAT" => idat.extend_from_slice(data),
                _ => {}
            }
            i += 12 + len;
        }
        let mut raw = Vec::new();
        let mut j = 2;
        loop {
            let last = idat[j] & 1 == 1;
            let len = u16::from_le_bytes([idat[j + 1], idat[j + 2]]) as usize;
            raw.extend_from_slice(&idat[j + 5..j + 5 + len]);
            j += 5 + len;
            if last {
                break;
            }
        }
        let adler = u32::from_be_bytes(idat[j..j + 4].try_into().unwrap());
        let (mut a, mut b) = (1u32, 0u32);
        for &x in &raw {
            a = (a + u32::from(x)) % 65521;
            b = (b + a) % 65521;
        }
        assert_eq!(adler, (b << 16) | a, "adler-32");
        (side, raw)
    }

    #[test]
    fn crc_matches_the_reference_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    #[test]
    fn pixels_read_back_as_the_mask() {
        for n in [1usize, 3, 40, 300] {
            let m = BitMatrix::from_fn(n, |q, k| (q * 7 + k * 3) % 5 == 0);
            let (side, raw) = decode(&grid_png(&m));
            let cell = cell_pixels(n);
            assert_eq!(side, n * cell);
            for q in 0..n {
                for k in 0..n {
                    let px = raw[(q * cell) * (side + 1) + 1 + k * cell];
                    assert_eq!(px == 0x1d, m.get(q, k), "n={n} cell ({q},{k})");
                }
            }
        }
    }
}
