//! The grid as a PNG image (8-bit greyscale, one square of pixels per cell), compressed by the
//! `png` crate. Only the CLI writes images, so the encoder lives here, not in the core.

use anyhow::{Context, Result};
use hasseflow_core::BitMatrix;

/// Largest image side written, in pixels (cells shrink to fit, down to 1 pixel).
pub const MAX_SIDE_PX: usize = 4096;

/// Pixels per cell for a mask of side `n`: up to 16, so that the image stays under
/// [`MAX_SIDE_PX`] and about 1024 pixels for mid-sized masks.
pub fn cell_pixels(n: usize) -> usize {
    (1024 / n.max(1)).clamp(1, 16)
}

/// The greyscale pixels of `mask`, row by row (`side x side`, returned with `side`): a set cell
/// is dark (`0x1d`), an unset cell white, the diagonal of unset cells light grey (the residual
/// connection every layer has anyway).
fn grid_pixels(mask: &BitMatrix) -> (usize, Vec<u8>) {
    let n = mask.n();
    let cell = cell_pixels(n);
    let side = (n * cell).clamp(1, MAX_SIDE_PX);
    let mut pixels = Vec::with_capacity(side * side);
    for y in 0..side {
        let q = (y / cell).min(n.saturating_sub(1));
        for x in 0..side {
            let k = (x / cell).min(n.saturating_sub(1));
            pixels.push(if n == 0 {
                0xff
            } else if mask.get(q, k) {
                0x1d
            } else if q == k {
                0xdd
            } else {
                0xff
            });
        }
    }
    (side, pixels)
}

/// The PNG bytes of `mask` (see [`grid_pixels`] for the shades).
///
/// Complexity: `O((n · cell)²)` bytes.
pub fn grid_png(mask: &BitMatrix) -> Result<Vec<u8>> {
    let (side, pixels) = grid_pixels(mask);
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, side as u32, side as u32);
    encoder.set_color(png::ColorType::Grayscale);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Balanced);
    let mut writer = encoder.write_header().context("writing the PNG header")?;
    writer.write_image_data(&pixels).context("encoding the PNG")?;
    writer.finish().context("finishing the PNG")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decodes a PNG with the `png` crate's decoder (which checks every CRC and the zlib
    /// checksum): side and greyscale pixels.
    fn decode(bytes: &[u8]) -> (usize, Vec<u8>) {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().expect("a valid PNG");
        let mut buf = vec![0; reader.output_buffer_size().expect("fits")];
        let info = reader.next_frame(&mut buf).expect("one frame");
        assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Grayscale, png::BitDepth::Eight));
        assert_eq!(info.width, info.height);
        buf.truncate(info.buffer_size());
        (info.width as usize, buf)
    }

    #[test]
    fn pixels_read_back_as_the_mask() {
        for n in [1usize, 3, 40, 300] {
            let m = BitMatrix::from_fn(n, |q, k| (q * 7 + k * 3) % 5 == 0);
            let (side, pixels) = decode(&grid_png(&m).expect("encodes"));
            let cell = cell_pixels(n);
            assert_eq!(side, n * cell);
            for q in 0..n {
                for k in 0..n {
                    let px = pixels[(q * cell) * side + k * cell];
                    assert_eq!(px == 0x1d, m.get(q, k), "n={n} cell ({q},{k})");
                }
            }
        }
    }

    #[test]
    fn images_are_compressed() {
        let m = BitMatrix::from_fn(256, |q, k| k <= q);
        let (side, _) = grid_pixels(&m);
        let png = grid_png(&m).expect("encodes");
        assert!(png.len() * 20 < side * side, "{} bytes for {side}² pixels", png.len());
    }
}
