//! The mask_mod reader across a module boundary: a request (the text, the size hint, `b` and `h`)
//! and the answer (the mask and what the import did, or the refusal with its place), each as one
//! JSON string. The web app's first download leaves the interpreter out (the core without its
//! `interpreter` feature); `crates/lazy`, a second wasm module loaded on first use, answers with
//! [`answer`], and the app reads the answer back with [`read_answer`] into exactly what
//! [`import_mask_at`](super::import_mask_at) returns where the interpreter is linked in. The
//! CLI and the Python package never use this: they link the interpreter.

use serde::{Deserialize, Serialize};

use super::mask_mod::{MaskModError, MaskModReport};
use super::{ImportError, SizeHint, Source};
#[cfg(feature = "interpreter")]
use crate::format::{Encoding, write_json};
use crate::format::{MaskFile, parse_mask_file};

/// What to import: a `mask_mod` text, the size hint and the `(b, h)` it is read at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// The Python text.
    pub text: String,
    /// `n` given by the user (evaluated at it).
    pub given: Option<usize>,
    /// `n` to fall back on when the text defines no `N` (the editor's size).
    pub fallback: Option<usize>,
    /// The batch index.
    pub batch: u64,
    /// The head index.
    pub head: u64,
}

impl Request {
    /// The request for `text` with `size`, at `(batch, head)`.
    pub fn new(text: &str, size: SizeHint, batch: u64, head: u64) -> Self {
        let (given, fallback) = match size {
            SizeHint::None => (None, None),
            SizeHint::Given(n) => (Some(n), None),
            SizeHint::Fallback(n) => (None, Some(n)),
        };
        Request { text: text.to_string(), given, fallback, batch, head }
    }

    /// The request as one JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The size hint it carries.
    pub fn size(&self) -> SizeHint {
        match (self.given, self.fallback) {
            (Some(n), _) => SizeHint::Given(n),
            (None, Some(n)) => SizeHint::Fallback(n),
            (None, None) => SizeHint::None,
        }
    }
}

/// The answer on the wire.
#[derive(Serialize, Deserialize)]
enum Answer {
    /// The mask (a mask file, packed) and the import's report.
    Mask {
        mask: String,
        #[serde(with = "ReportDef")]
        report: MaskModReport,
    },
    /// The refusal.
    Refused(#[serde(with = "ErrorDef")] MaskModError),
}

/// [`MaskModReport`]'s fields, for serde (the interpreter's crate has no serde).
#[derive(Serialize, Deserialize)]
#[serde(remote = "MaskModReport")]
struct ReportDef {
    name: String,
    skipped: Vec<(usize, usize, String)>,
    uses_batch: bool,
    uses_head: bool,
    operations: usize,
}

/// [`MaskModError`]'s variants, for serde.
#[derive(Serialize, Deserialize)]
#[serde(remote = "MaskModError")]
enum ErrorDef {
    At { line: usize, col: usize, what: String },
    Text(String),
    Cell { line: usize, col: usize, q: u64, k: u64, what: String },
    NeedsSize,
    Size { n: i128, max: u64 },
    TooIrregular { q: u64, cap: usize, dense: usize },
}

/// Answers a request (JSON from [`Request::to_json`]) as [`import_mask_at`](super::import_mask_at)
/// would, as one JSON string for [`read_answer`]. A request that is not one is refused as text.
#[cfg(feature = "interpreter")]
pub fn answer(request: &str) -> String {
    let answer = match serde_json::from_str::<Request>(request) {
        Err(e) => Answer::Refused(MaskModError::Text(format!("not a mask_mod request: {e}"))),
        Ok(r) if !super::is_mask_mod(r.text.as_bytes()) => {
            Answer::Refused(MaskModError::Text("the text is not a mask_mod".into()))
        }
        // The mask_mod branch alone: this module reads no other format.
        Ok(r) => match super::import_mask_mod(r.text.as_bytes(), r.size(), r.batch, r.head) {
            Ok((file, report)) => Answer::Mask { mask: write_json(&file, Encoding::Packed), report },
            Err(e) => Answer::Refused(e),
        },
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

/// Reads an answer of [`answer`] as the import's result. An answer that is not one (a
/// truncated or tampered string) is refused with what is wrong.
///
/// # Errors
/// The refusal the answer carries, or [`ImportError::MaskMod`] naming a malformed answer.
pub fn read_answer(answer: &str) -> Result<(MaskFile, Source), ImportError> {
    let malformed =
        |why: String| ImportError::MaskMod(MaskModError::Text(format!("the mask_mod reader's answer: {why}")));
    match serde_json::from_str::<Answer>(answer).map_err(|e| malformed(e.to_string()))? {
        Answer::Refused(e) => Err(ImportError::MaskMod(e)),
        Answer::Mask { mask, report } => {
            let file = parse_mask_file(mask.as_bytes()).map_err(|e| malformed(e.to_string()))?;
            let n = file.mask.n();
            Ok((file, Source::mask_mod(n, report)))
        }
    }
}

#[cfg(all(test, feature = "interpreter"))]
mod tests {
    use super::*;
    use crate::interop::import_mask_at;

    /// Through the wire, every import gives what the linked interpreter gives: masks, reports,
    /// refusals with their places, sizes from the hint and from `N`.
    #[test]
    fn the_wire_gives_what_the_interpreter_gives() {
        let texts = [
            "def m(b, h, q, k):\n    return k <= q\n",
            "N = 6\ndef m(b, h, q_idx, kv_idx):\n    return (q_idx - kv_idx < 2) & (kv_idx <= q_idx)\n",
            "import torch\nDOC = torch.tensor([0, 0, 1, 1, 1])\ndef m(b, h, q, k):\n    return DOC[q] == DOC[k]\n",
            "def m(b, h, q, k):\n    return (h == 1) | (k == q)\nsome_unknown_call()\n",
            "def m(b, h, q, k):\n    return q @@ k\n",
            "def m(b, h, q, k):\n    return k // (q - 2) >= 0\n",
        ];
        for text in texts {
            for size in [SizeHint::None, SizeHint::Given(5), SizeHint::Fallback(4)] {
                for (b, h) in [(0, 0), (0, 1)] {
                    let direct = import_mask_at(text.as_bytes(), size, b, h);
                    let wired = read_answer(&answer(&Request::new(text, size, b, h).to_json()));
                    match (&direct, &wired) {
                        (Ok((f, s)), Ok((g, t))) => {
                            assert_eq!((&f.mask, s), (&g.mask, t), "{text:?} at {size:?}");
                        }
                        (Err(ImportError::MaskMod(e)), Err(ImportError::MaskMod(w))) => assert_eq!(e, w, "{text:?}"),
                        (Err(e), Err(w)) => assert_eq!(e.to_string(), w.to_string(), "{text:?}"),
                        _ => panic!("{text:?} at {size:?}: {direct:?} vs {wired:?}"),
                    }
                }
            }
        }
    }

    /// A malformed or tampered answer, or a request that is not one, is a one-line refusal.
    #[test]
    fn malformed_answers_and_requests_are_refused() {
        let good = answer(&Request::new("def m(b, h, q, k):\n    return k <= q\n", SizeHint::Given(3), 0, 0).to_json());
        for bad in ["", "{", "null", "{\"Mask\": 1}", &good[..good.len() / 2], &good.replace("mask", "task")] {
            let e = read_answer(bad).expect_err(bad);
            assert!(e.to_string().contains("the mask_mod reader's answer"), "{e}");
            assert!(!e.to_string().contains('\n'));
        }
        let e = read_answer(&answer("not json")).expect_err("refused");
        assert!(e.to_string().contains("not a mask_mod request"), "{e}");
        let e =
            read_answer(&answer(&Request::new("x = 1\n", SizeHint::Given(3), 0, 0).to_json())).expect_err("refused");
        assert!(e.to_string().contains("the text is not a mask_mod"), "{e}");
    }
}
