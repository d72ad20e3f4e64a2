//! Stand-in for oxipng 9 (see Cargo.toml): the API trunk calls, returning the PNG unchanged.
use std::fmt;

/// The optimisation settings; the stand-in has none.
pub struct Options;

impl Options {
    /// Any preset gives the same (empty) settings.
    pub fn from_preset(_level: u8) -> Self {
        Options
    }
}

/// Never produced: the stand-in cannot fail. It exists for trunk's error handling.
#[derive(Debug)]
pub struct PngError;

impl fmt::Display for PngError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("this trunk was installed without a PNG optimiser")
    }
}

impl std::error::Error for PngError {}

/// The image as it was.
pub fn optimize_from_memory(data: &[u8], _opts: &Options) -> Result<Vec<u8>, PngError> {
    Ok(data.to_vec())
}
