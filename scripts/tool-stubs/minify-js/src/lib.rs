//! Stand-in for minify-js 0.5 (see Cargo.toml): the API trunk calls, refusing to minify, so
//! trunk keeps the script as it was.
use std::fmt;

pub enum TopLevelMode {
    Global,
    Module,
}

pub struct Session;

impl Session {
    pub fn new() -> Self {
        Session
    }
}

impl Default for Session {
    fn default() -> Self {
        Session
    }
}

pub struct NotBuilt;

impl fmt::Display for NotBuilt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("this trunk was installed without a JavaScript minifier")
    }
}

/// Always declines; trunk then copies the script unchanged.
pub fn minify(_session: &Session, _mode: TopLevelMode, _src: &[u8], _out: &mut Vec<u8>) -> Result<(), NotBuilt> {
    Err(NotBuilt)
}
