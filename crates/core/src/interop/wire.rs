//! The readers and writers the web app loads on first use, across a module boundary: an import
//! request (the input, the size hint, `b` and `h`) and its answer (the mask and what the import
//! did, or the refusal, with its place for a `mask_mod`), and an export request (the mask file,
//! the kind, the block size) and its answer (the bytes, or the refusal), each as one JSON string.
//! The web app's first download leaves the `mask_mod` interpreter and the `.npy`, kernel and
//! export codecs out (the core without its `interpreter` and `codecs` features); `crates/lazy`,
//! a second wasm module loaded on first use, answers with [`answer`] and [`export_answer`], and
//! the app reads the answers back with [`read_answer`] and [`read_export`] into exactly what
//! [`import_mask_at`](super::import_mask_at) and [`export`](super::export) return where they are
//! linked in. The CLI and the Python package never use this: they link everything.

use serde::{Deserialize, Serialize};

use crate::base64::STANDARD as BASE64;

use super::mask_mod::{MaskModError, MaskModReport};
use super::{ExportKind, ImportError, SizeHint, Source};
#[cfg(any(feature = "interpreter", feature = "codecs"))]
use crate::format::write_json_compact;
use crate::format::{MaskFile, parse_mask_file};
use crate::tuple_wire::tuple_wire;

/// What to import: a `mask_mod` text, kernel parameters or a `.npy` array, the size hint and the
/// `(b, h)` a `mask_mod` is read at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The input, when it is text (a `mask_mod`, kernel parameters).
    pub text: String,
    /// The input, when it is not text (a `.npy` array), in hex; `text` is empty then.
    pub binary: String,
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
        Request { text: text.to_string(), binary: String::new(), given, fallback, batch, head }
    }

    /// The request for `bytes` (text as it is, anything else in hex), else as [`Request::new`].
    pub fn of_bytes(bytes: &[u8], size: SizeHint, batch: u64, head: u64) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Request::new(text, size, batch, head),
            Err(_) => Request { binary: crate::hex::hex(bytes), ..Request::new("", size, batch, head) },
        }
    }

    /// Whether it is for the `mask_mod` reader (else for the formats module: `.npy` arrays,
    /// kernel parameters).
    pub fn is_mask_mod(&self) -> bool {
        self.binary.is_empty() && super::is_mask_mod(self.text.as_bytes())
    }

    /// The input's bytes (a `binary` that is not hex gives none: refused as no known input).
    pub fn bytes(&self) -> Vec<u8> {
        if self.binary.is_empty() {
            self.text.as_bytes().to_vec()
        } else {
            crate::hex::unhex(&self.binary).unwrap_or_default()
        }
    }

    /// The request as one JSON string ([`RequestWire`]'s array).
    pub fn to_json(&self) -> String {
        serde_json::to_string(&RequestWire::from(self.clone())).unwrap_or_default()
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

tuple_wire!(Request as RequestWire {
    text: String,
    binary: String,
    given: Option<usize>,
    fallback: Option<usize>,
    batch: u64,
    head: u64,
});

/// An answer on the wire, as [`read_answer`] reads it: either module's (their variants'
/// names are the wire's tags, so each module serialises only its own, [`MaskModAnswer`] and
/// [`FormatsAnswer`], and neither carries the other's code). Tuple variants, read with no field
/// names to match (`crate::tuple_wire`).
#[derive(Deserialize)]
enum Answer {
    /// A `mask_mod`'s mask (a mask file, packed) and the import's report.
    Mask(String, ReportWire),
    /// A `mask_mod`'s refusal, with its place.
    Refused(ErrorWire),
    /// A `.npy` array's mask.
    Array(String),
    /// Kernel parameters' mask; `sized` when the size came from the hint.
    Kernel(String, bool),
    /// The formats module's refusal, in its one line.
    RefusedText(String),
}

/// The interpreter's module's answer ([`answer`]): [`Answer`]'s first two variants.
#[cfg(feature = "interpreter")]
#[derive(Serialize)]
enum MaskModAnswer {
    Mask(String, ReportWire),
    Refused(ErrorWire),
}

/// The formats module's answer ([`answer_formats`]): [`Answer`]'s last three variants.
#[cfg(feature = "codecs")]
#[derive(Serialize)]
enum FormatsAnswer {
    Array(String),
    Kernel(String, bool),
    RefusedText(String),
}

tuple_wire!(MaskModReport as ReportWire {
    name: String,
    skipped: Vec<(usize, usize, String)>,
    uses_batch: bool,
    uses_head: bool,
    operations: usize,
});

/// [`MaskModError`]'s variants on the wire, each as a JSON array of its fields (the
/// interpreter's crate has no serde).
#[derive(Serialize, Deserialize)]
enum ErrorWire {
    At(usize, usize, String),
    Text(String),
    Cell(usize, usize, u64, u64, String),
    NeedsSize,
    Size(i128, u64),
    TooIrregular(u64, usize, usize),
}

impl From<MaskModError> for ErrorWire {
    fn from(e: MaskModError) -> Self {
        match e {
            MaskModError::At { line, col, what } => ErrorWire::At(line, col, what),
            MaskModError::Text(t) => ErrorWire::Text(t),
            MaskModError::Cell { line, col, q, k, what } => ErrorWire::Cell(line, col, q, k, what),
            MaskModError::NeedsSize => ErrorWire::NeedsSize,
            MaskModError::Size { n, max } => ErrorWire::Size(n, max),
            MaskModError::TooIrregular { q, cap, dense } => ErrorWire::TooIrregular(q, cap, dense),
        }
    }
}

impl From<ErrorWire> for MaskModError {
    fn from(e: ErrorWire) -> Self {
        match e {
            ErrorWire::At(line, col, what) => MaskModError::At { line, col, what },
            ErrorWire::Text(t) => MaskModError::Text(t),
            ErrorWire::Cell(line, col, q, k, what) => MaskModError::Cell { line, col, q, k, what },
            ErrorWire::NeedsSize => MaskModError::NeedsSize,
            ErrorWire::Size(n, max) => MaskModError::Size { n, max },
            ErrorWire::TooIrregular(q, cap, dense) => MaskModError::TooIrregular { q, cap, dense },
        }
    }
}

/// Whether `bytes` are what a lazily loaded module reads: a `mask_mod` (crates/lazy), kernel
/// parameters or a `.npy` array (crates/formats). Everything else (mask files, text grids) the
/// first download reads itself.
pub fn needs_lazy_reader(bytes: &[u8]) -> bool {
    super::is_mask_mod(bytes) || super::is_npy(bytes) || super::is_kernel_json(bytes)
}

/// What is wrong with a request the mask_mod reader's module cannot read, and where: by the kind
/// of `serde_json` error, not its message, whose text (and that of `std::io`'s errors, which it
/// can carry) cost that module 1.1 KB gzipped (the app's own requests never fail so). The formats
/// module keeps the message: it reads JSON mask files, whose errors show it anyway.
#[cfg(feature = "interpreter")]
fn unreadable(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let what = match e.classify() {
        Category::Io => "unreadable",
        Category::Syntax => "not JSON",
        Category::Data => "JSON without a request's fields",
        Category::Eof => "cut short",
    };
    format!("{what} at line {}, column {}", e.line(), e.column())
}

/// Answers a `mask_mod` request (JSON from [`Request::to_json`]) as
/// [`import_mask_at`](super::import_mask_at) would, as one JSON string for [`read_answer`]: the
/// interpreter's module. A request that is not one, or not for a `mask_mod`, is refused as text.
#[cfg(feature = "interpreter")]
pub fn answer(request: &str) -> String {
    let answer = match serde_json::from_str::<RequestWire>(request).map(Request::from) {
        Err(e) => MaskModAnswer::Refused(ErrorWire::Text(format!("not a mask_mod request: {}", unreadable(&e)))),
        Ok(r) if !r.is_mask_mod() => MaskModAnswer::Refused(ErrorWire::Text("the text is not a mask_mod".into())),
        // The mask_mod branch alone: this module reads no other format.
        Ok(r) => match super::import_mask_mod(r.text.as_bytes(), r.size(), r.batch, r.head) {
            Ok((file, report)) => MaskModAnswer::Mask(write_json_compact(&file), report.into()),
            Err(e) => MaskModAnswer::Refused(e.into()),
        },
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

/// Answers a request for a `.npy` array or kernel parameters as
/// [`import_mask_at`](super::import_mask_at) would, as one JSON string for [`read_answer`]: the
/// formats module. A request that is not one, or for another input, is refused as text.
#[cfg(feature = "codecs")]
pub fn answer_formats(request: &str) -> String {
    let answer = match serde_json::from_str::<RequestWire>(request).map(Request::from) {
        Err(e) => FormatsAnswer::RefusedText(format!("not an import request: {e}")),
        Ok(r) => match super::import_codec(&r.bytes(), r.size()) {
            None => FormatsAnswer::RefusedText("the input is neither a .npy array nor kernel parameters".into()),
            Some(Ok((file, source))) => {
                let mask = write_json_compact(&file);
                // `import_codec` reads arrays and kernel parameters only.
                match source {
                    Source::Kernel { sized } => FormatsAnswer::Kernel(mask, sized),
                    _ => FormatsAnswer::Array(mask),
                }
            }
            Some(Err(e)) => FormatsAnswer::RefusedText(e.to_string()),
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
    let read_mask = |mask: &str| parse_mask_file(mask.as_bytes()).map_err(|e| malformed(e.to_string()));
    match serde_json::from_str::<Answer>(answer).map_err(|e| malformed(e.to_string()))? {
        Answer::Refused(e) => Err(ImportError::MaskMod(e.into())),
        Answer::RefusedText(e) => Err(ImportError::Refused(e)),
        Answer::Mask(mask, report) => {
            let file = read_mask(&mask)?;
            let n = file.mask.n();
            Ok((file, Source::mask_mod(n, report.into())))
        }
        Answer::Array(mask) => Ok((read_mask(&mask)?, Source::Npy)),
        Answer::Kernel(mask, sized) => Ok((read_mask(&mask)?, Source::Kernel { sized })),
    }
}

/// What to export: the mask (its packed bits in hex: a decoder with no panic paths), its labels
/// and provenance, the kind and the block size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportRequest {
    /// The mask's size.
    pub n: usize,
    /// The mask's [`pack_bits`](crate::bits::pack_bits), in hex (`crate::hex::mask_hex`).
    pub bits: String,
    /// Its position labels.
    pub labels: Option<Vec<String>>,
    /// Where it came from (a catalog preset).
    pub provenance: Option<crate::format::Provenance>,
    /// The kind's [`ExportKind::name`].
    pub kind: String,
    /// The block size (`Flex` and the block statistics).
    pub block_size: usize,
}

impl ExportRequest {
    /// The request for `kind` of `file` at `block_size` (an export reads the mask, its labels
    /// and its provenance, never a layer stack).
    pub fn new(file: &MaskFile, kind: ExportKind, block_size: usize) -> Self {
        ExportRequest {
            n: file.mask.n(),
            bits: crate::hex::mask_hex(&file.mask),
            labels: file.labels.clone(),
            provenance: file.provenance.clone(),
            kind: kind.name().to_string(),
            block_size,
        }
    }

    /// The request as one JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Exports it here when this build links the codecs (the `codecs` feature);
    /// `None` without them: ask the lazily loaded module ([`export_answer`]).
    pub fn export_here(&self) -> Option<Result<Vec<u8>, String>> {
        #[cfg(feature = "codecs")]
        return Some(self.export());
        #[cfg(not(feature = "codecs"))]
        None
    }

    /// The export, with the codecs linked in: what [`export_answer`] gives, without the JSON.
    #[cfg(feature = "codecs")]
    fn export(&self) -> Result<Vec<u8>, String> {
        let kind = ExportKind::from_name(&self.kind).ok_or_else(|| format!("no export kind {:?}", self.kind))?;
        if self.n > crate::format::MAX_N {
            return Err(format!("the mask to export: n = {} is more than {}", self.n, crate::format::MAX_N));
        }
        let mask = crate::hex::mask_unhex(&self.bits, self.n).map_err(|e| format!("the mask to export {e}"))?;
        if let Some(l) = &self.labels
            && l.len() != self.n
        {
            return Err(format!("the mask to export: {} labels for n = {}", l.len(), self.n));
        }
        let file = MaskFile { labels: self.labels.clone(), provenance: self.provenance.clone(), ..MaskFile::new(mask) };
        super::export(&file, kind, self.block_size).map_err(|e| e.to_string())
    }
}

/// An export's answer on the wire.
#[derive(Serialize, Deserialize)]
enum ExportAnswer {
    /// The bytes, in base64.
    Bytes(String),
    /// Why not, in one line.
    Refused(String),
}

/// Answers an export request (JSON from [`ExportRequest::to_json`]) as
/// [`export`](super::export) would, as one JSON string for [`read_export`].
#[cfg(feature = "codecs")]
pub fn export_answer(request: &str) -> String {
    let answer = match serde_json::from_str::<ExportRequest>(request) {
        Err(e) => ExportAnswer::Refused(format!("not an export request: {e}")),
        Ok(r) => match r.export() {
            Ok(bytes) => ExportAnswer::Bytes(BASE64.encode(bytes)),
            Err(e) => ExportAnswer::Refused(e),
        },
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

/// Reads an answer of [`export_answer`]: the bytes, or the refusal's line (a damaged answer says
/// so).
///
/// # Errors
/// The export's refusal, or a line naming a malformed answer.
pub fn read_export(answer: &str) -> Result<Vec<u8>, String> {
    let malformed = |why: String| format!("the exporter's answer: {why}");
    match serde_json::from_str::<ExportAnswer>(answer).map_err(|e| malformed(e.to_string()))? {
        ExportAnswer::Bytes(b) => BASE64.decode(b).map_err(|e| malformed(e.to_string())),
        ExportAnswer::Refused(e) => Err(e),
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

    /// `.npy` arrays (binary, in hex) and kernel parameters, read and refused, come back as
    /// the linked importer gives them; so do inputs the first download reads itself (refused).
    #[test]
    fn npy_and_kernel_inputs_cross_the_wire_as_the_importer_reads_them() {
        use crate::BitMatrix;
        use crate::interop::{flash_json, flashmask_json, write_npy};
        let m = BitMatrix::from_fn(6, |q, k| k <= q && q - k < 3);
        let mut npy = write_npy(&m);
        assert!(std::str::from_utf8(&npy).is_err(), "binary: travels in hex");
        let inputs: Vec<Vec<u8>> = vec![
            npy.clone(),
            flash_json(&m).into_bytes(),
            flashmask_json(&m).into_bytes(),
            br#"{"kernel": "flash-attention", "causal": true, "window_size": [2, 0]}"#.to_vec(),
            br#"{"kernel": "flashmask", "n": 3, "LTS": [5, 3, 3]}"#.to_vec(),
            {
                npy.truncate(npy.len() - 3);
                npy
            },
        ];
        for bytes in &inputs {
            assert!(needs_lazy_reader(bytes));
            for size in [SizeHint::None, SizeHint::Given(6), SizeHint::Fallback(4)] {
                let direct = import_mask_at(bytes, size, 0, 0);
                let request = Request::of_bytes(bytes, size, 0, 0);
                assert!(!request.is_mask_mod());
                let wired = read_answer(&answer_formats(&request.to_json()));
                match (&direct, &wired) {
                    (Ok((f, s)), Ok((g, t))) => assert_eq!((&f.mask, s), (&g.mask, t)),
                    (Err(e), Err(w)) => assert_eq!(e.to_string(), w.to_string()),
                    _ => panic!("{size:?}: {direct:?} vs {wired:?}"),
                }
            }
        }
        // Read and refused, both seen: the array, and the truncated one.
        let read = |b: &[u8]| read_answer(&answer_formats(&Request::of_bytes(b, SizeHint::None, 0, 0).to_json()));
        assert!(matches!(read(&inputs[0]), Ok((_, Source::Npy))));
        let e = read(&inputs[5]).expect_err("truncated");
        assert!(matches!(&e, ImportError::Refused(t) if t.starts_with("invalid .npy mask: ")), "{e}");
        assert!(!needs_lazy_reader(b"1.\n11\n"));
        assert!(read(b"1.\n11\n").is_err(), "a grid is the first download's to read");
        // Each module reads its own inputs only: the formats module no mask_mod, the
        // interpreter's no array.
        let mm = Request::new("def m(b, h, q, k):\n    return k <= q\n", SizeHint::Given(3), 0, 0);
        assert!(mm.is_mask_mod() && read_answer(&answer_formats(&mm.to_json())).is_err());
        assert!(read_answer(&answer(&Request::of_bytes(&inputs[0], SizeHint::None, 0, 0).to_json())).is_err());
    }

    /// Every export kind, of a labelled mask with its provenance, crosses the wire byte for byte;
    /// a damaged answer or request is one line.
    #[test]
    fn exports_cross_the_wire_byte_for_byte() {
        use crate::interop::{ExportKind, export};
        use crate::presets::{build_preset, preset_labels, preset_provenance};
        let params = Default::default();
        let mut file = MaskFile::new(build_preset("xlnet", 4, &params, 64).expect("preset"));
        file.labels = preset_labels("xlnet", 4, &params, 64).expect("labels");
        file.provenance = Some(preset_provenance("xlnet", 4, &params));
        assert!(file.labels.is_some());
        for kind in ExportKind::ALL {
            for block in [1, 3, 128, 0] {
                let direct = export(&file, kind, block).map_err(|e| e.to_string());
                let wired = read_export(&export_answer(&ExportRequest::new(&file, kind, block).to_json()));
                assert_eq!(wired, direct, "{} at {block}", kind.name());
            }
        }
        let good = export_answer(&ExportRequest::new(&file, ExportKind::Npy, 1).to_json());
        for bad in ["", "{", &good[..good.len() / 2], &good.replace("Bytes", "Bites"), "{\"Bytes\": \"@@@\"}"] {
            let e = read_export(bad).expect_err(bad);
            assert!(e.starts_with("the exporter's answer: ") && !e.contains('\n'), "{e}");
        }
        let e = read_export(&export_answer("{\"file\": \"x\", \"kind\": \"npy\", \"block_size\": 1}"))
            .expect_err("not a request");
        assert!(e.starts_with("not an export request: "), "{e}");
        let req = ExportRequest::new(&file, ExportKind::Npy, 1);
        for bad in [
            ExportRequest { bits: "zz".into(), ..req.clone() },
            ExportRequest { bits: "00".into(), ..req.clone() },
            ExportRequest { n: usize::MAX, ..req.clone() },
            ExportRequest { labels: Some(vec!["a".into()]), ..req.clone() },
        ] {
            let e = read_export(&export_answer(&bad.to_json())).expect_err("no mask");
            assert!(e.starts_with("the mask to export") && !e.contains('\n'), "{e}");
        }
        let e = read_export(&export_answer(
            &ExportRequest { kind: "pdf".into(), ..ExportRequest::new(&file, ExportKind::Npy, 1) }.to_json(),
        ))
        .expect_err("no such kind");
        assert_eq!(e, "no export kind \"pdf\"");
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
        assert_eq!(e.to_string(), "mask_mod not imported: not a mask_mod request: not JSON at line 1, column 2");
        // A request is an array of its fields (`RequestWire`): a named object is not one.
        for bad in ["[1]", "{\"text\": \"def m(b, h, q, k): return k <= q\", \"given\": 3}"] {
            let e = read_answer(&answer(bad)).expect_err("refused");
            assert!(
                e.to_string().starts_with(
                    "mask_mod not imported: not a mask_mod request: JSON without a request's fields at line 1"
                ),
                "{e}"
            );
        }
        let e = read_answer(&answer("[\"def m(b, h, q, k): return k <= q\", ")).expect_err("refused");
        assert!(e.to_string().starts_with("mask_mod not imported: not a mask_mod request: cut short at line 1"), "{e}");
        let e =
            read_answer(&answer(&Request::new("x = 1\n", SizeHint::Given(3), 0, 0).to_json())).expect_err("refused");
        assert!(e.to_string().contains("the text is not a mask_mod"), "{e}");
    }
}
