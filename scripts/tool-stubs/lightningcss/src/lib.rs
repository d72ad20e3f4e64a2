//! Stand-in for lightningcss 1.0.0-alpha.65 (see Cargo.toml): the API trunk calls, refusing to
//! parse, so trunk keeps the stylesheet as it was.

pub mod stylesheet {
    use std::fmt;
    use std::marker::PhantomData;

    #[derive(Default)]
    pub struct ParserOptions;

    #[derive(Default)]
    pub struct MinifyOptions;

    #[derive(Default)]
    pub struct PrinterOptions {
        pub minify: bool,
    }

    pub struct ToCssResult {
        pub code: String,
    }

    pub struct NotBuilt;

    impl fmt::Display for NotBuilt {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("this trunk was installed without a CSS minifier")
        }
    }

    pub struct StyleSheet<'i>(PhantomData<&'i str>);

    impl<'i> StyleSheet<'i> {
        /// Always declines; trunk then copies the stylesheet unchanged.
        pub fn parse(_css: &'i str, _options: ParserOptions) -> Result<Self, NotBuilt> {
            Err(NotBuilt)
        }

        pub fn minify(&mut self, _options: MinifyOptions) -> Result<(), NotBuilt> {
            Err(NotBuilt)
        }

        pub fn to_css(&self, _options: PrinterOptions) -> Result<ToCssResult, NotBuilt> {
            Err(NotBuilt)
        }
    }
}
