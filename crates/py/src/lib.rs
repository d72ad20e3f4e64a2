//! `hasseflow._native`: the core's analyses for the Python package (python/hasseflow). Every
//! function takes plain data (bytes of bit words, interval rows, JSON or config text), calls the
//! core, and returns the core's JSON report as a string, so that the Python objects carry the
//! CLI's schema. Masks travel as row words: `n` rows of `ceil(n / 64)` little-endian `u64` words,
//! bit `k % 64` of word `k / 64` set when query `q` reads key `k` (NumPy's
//! `packbits(..., axis=1, bitorder="little")` of a row padded to a multiple of 64).
//!
//! Errors are raised as `hasseflow.HasseflowError` (a `ValueError`) carrying the core's one-line
//! message; a panic is caught and raised the same way, so a bug never aborts the interpreter.
//! The GIL is released while the core computes; the long calls (analyses, model runs) run on a
//! worker thread and raise `KeyboardInterrupt` within milliseconds of Ctrl-C ([`interruptible`]).

use std::collections::BTreeMap;

mod links;
mod pictures;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use hasseflow_core::bits::words_for;
use hasseflow_core::derive::{self, BuiltinFamily, FAMILIES};
use hasseflow_core::format::{MAX_INPUT_BYTES, MAX_N, MaskFile, check_labels};
use hasseflow_core::interop::{self, MaskMod, SizeHint, is_mask_mod};
use hasseflow_core::job::{Job, Step};
use hasseflow_core::model::{self, ModelJob, ModelRun};
use hasseflow_core::pattern::Overlays;
use hasseflow_core::presets::ParamKind;
use hasseflow_core::reach::IntervalRows;
use hasseflow_core::report::{analysis_json, reach_auto_while, structured_json};
use hasseflow_core::{Analysis, BitMatrix, FirstReach, share};
use hasseflow_render::{Grid, SvgTheme, grid_svg, growth_svg};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pyo3::create_exception!(
    _native,
    HasseflowError,
    pyo3::exceptions::PyValueError,
    "Input hasseflow cannot use: the message names what is wrong."
);

/// Runs `f` with the GIL released, turning its error and any panic into [`HasseflowError`].
fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, String> + Send) -> PyResult<T> {
    finish(py.detach(|| catch_unwind(AssertUnwindSafe(f))))
}

/// How often a waiting call looks for a pending signal (Ctrl-C, Jupyter's interrupt).
const SIGNAL_CHECK: Duration = Duration::from_millis(5);
/// The worker's stack: the mask_mod reader recurses as deep as the main thread allows.
const WORKER_STACK: usize = 64 << 20;

/// Runs `f` on a worker thread while this one waits with the GIL released, looking for a pending
/// signal every [`SIGNAL_CHECK`]: on one, `stop` is set and the signal's exception
/// (`KeyboardInterrupt` for Ctrl-C) is raised at once; the worker ends at its next step (the core's
/// jobs ask `stop` between steps) and its result is dropped. Errors and panics as [`guarded`].
fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    f: impl FnOnce(&AtomicBool) -> Result<T, String> + Send + 'static,
) -> PyResult<T> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let worker_stop = Arc::clone(&stop);
    std::thread::Builder::new()
        .name("hasseflow".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            let _ = tx.send(catch_unwind(AssertUnwindSafe(|| f(&worker_stop))));
        })
        .map_err(|e| HasseflowError::new_err(format!("cannot start hasseflow's worker thread: {e}")))?;
    let mut rx = rx;
    loop {
        let (got, back) = py.detach(move || (rx.recv_timeout(SIGNAL_CHECK), rx));
        rx = back;
        match got {
            Ok(out) => return finish(out),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(HasseflowError::new_err(
                    "internal error in hasseflow (please report it): the worker ended",
                ));
            }
        }
    }
}

/// What a run handed back: its value, its error as [`HasseflowError`], a panic as an internal error.
fn finish<T>(out: std::thread::Result<Result<T, String>>) -> PyResult<T> {
    match out {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(message)) => Err(HasseflowError::new_err(message)),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(HasseflowError::new_err(format!("internal error in hasseflow (please report it): {what}")))
        }
    }
}

/// The message of a run stopped by `stop` (never seen by the caller: the signal's exception is).
const STOPPED: &str = "interrupted";

/// Row words (see the module docs) into a matrix, refusing a wrong length or bits past `n`.
fn matrix_from_words(words: &[u8], n: usize) -> Result<BitMatrix, String> {
    if n == 0 || n > MAX_N {
        return Err(format!("mask size n = {n} is out of range 1..={MAX_N}"));
    }
    let per_row = words_for(n);
    if words.len() != n * per_row * 8 {
        return Err(format!("mask data has {} bytes, expected {} for n = {n}", words.len(), n * per_row * 8));
    }
    let bits: Vec<u64> =
        words.chunks_exact(8).map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])).collect();
    if !n.is_multiple_of(64) {
        let keep = (1u64 << (n % 64)) - 1;
        if let Some(q) = (0..n).find(|q| bits[q * per_row + per_row - 1] & !keep != 0) {
            return Err(format!("mask data: row {q} has bits set past column {}", n - 1));
        }
    }
    Ok(BitMatrix::from_words(n, bits))
}

/// A matrix as row words.
fn words_of(m: &BitMatrix) -> Vec<u8> {
    m.as_words().iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The dense report of a mask given as row words: `(report JSON without "limit", the limit as
/// row words)`.
#[pyfunction]
#[pyo3(signature = (words, n, labels=None, first_reach=false))]
fn analyze_words(
    py: Python<'_>,
    words: &[u8],
    n: usize,
    labels: Option<Vec<String>>,
    first_reach: bool,
) -> PyResult<(String, Py<PyBytes>)> {
    let words = words.to_vec();
    let (json, limit) = interruptible(py, move |_| {
        let mask = matrix_from_words(&words, n)?;
        if let Some(l) = &labels {
            check_labels(l, n).map_err(|e| e.to_string())?;
        }
        let file = MaskFile { labels, ..MaskFile::new(mask) };
        Ok(dense_report(&file, first_reach))
    })?;
    Ok((json, PyBytes::new(py, &limit).unbind()))
}

fn dense_report(file: &MaskFile, first_reach: bool) -> (String, Vec<u8>) {
    let a = Analysis::new(&file.mask);
    let d = first_reach.then(|| FirstReach::new(&file.mask));
    (analysis_json(file, &a, d.as_ref(), false).to_string(), words_of(a.closure()))
}

/// Any input the CLI's `analyze` reads (hasseflow JSON with its stack, a text grid, `.npy`,
/// kernel parameters, mask_mod text), analysed as `hasseflow analyze --json` does: dense up to
/// n = 8192, a mask_mod above (or with `layers`) on the structured engine. Returns `(report
/// JSON, `(the dense limit, the mask)` as row words or None, notes)`.
#[pyfunction]
#[pyo3(signature = (data, n=None, b=0, h=0, layers=None))]
fn analyze_file(
    py: Python<'_>,
    data: &[u8],
    n: Option<usize>,
    b: u64,
    h: u64,
    layers: Option<usize>,
) -> PyResult<(String, Option<DenseWords>, Vec<String>)> {
    let data = data.to_vec();
    let (json, dense, notes) = interruptible(py, move |_| {
        let data = &data[..];
        if data.len() > MAX_INPUT_BYTES {
            return Err(format!("input is {} bytes; the limit is {MAX_INPUT_BYTES} bytes", data.len()));
        }
        if n.is_some_and(|n| n > MAX_N) || layers.is_some() {
            if !is_mask_mod(data) {
                return Err(format!(
                    "above n = {MAX_N} (or with layers) only a mask_mod is analysed, on the structured engine"
                ));
            }
            let text = std::str::from_utf8(data).map_err(|_| "mask_mod text is not UTF-8".to_string())?;
            let m = MaskMod::parse(text).map_err(|e| format!("mask_mod not imported: {e}"))?;
            let size = m.size(n).map_err(|e| e.to_string())? as u64;
            let r = m.reach(size, b, h, layers).map_err(|e| e.to_string())?;
            let rep = m.report();
            return Ok((structured_json(&r, Some((&rep, b, h))).to_string(), None, mask_mod_notes(&rep, b, h)));
        }
        let size = n.map_or(SizeHint::None, SizeHint::Given);
        let (file, source) = interop::import_mask_at(data, size, b, h).map_err(|e| e.to_string())?;
        let notes = match source {
            interop::Source::MaskMod { report, .. } => mask_mod_notes(&report, b, h),
            _ => Vec::new(),
        };
        let (json, limit) = dense_report(&file, false);
        Ok((json, Some((limit, words_of(&file.mask))), notes))
    })?;
    let dense = dense.map(|(l, m)| (PyBytes::new(py, &l).unbind(), PyBytes::new(py, &m).unbind()));
    Ok((json, dense, notes))
}

/// A dense result's `(limit, mask)` as row words.
type DenseWords = (Py<PyBytes>, Py<PyBytes>);

fn mask_mod_notes(rep: &interop::MaskModReport, b: u64, h: u64) -> Vec<String> {
    let mut notes = Vec::new();
    if rep.uses_batch || rep.uses_head {
        notes.push(format!("`{}` reads b or h; evaluated at b = {b}, h = {h} (pass b=, h= for another)", rep.name));
    }
    for (line, col, why) in &rep.skipped {
        notes.push(format!("skipped line {line}, column {col}: {why}"));
    }
    notes
}

/// Interval rows (CSR: `offsets` as `n + 1` little-endian `u64`, `spans` as little-endian `u32`
/// pairs `lo, hi`, inclusive, sorted and disjoint per row) on the structured engine, `layers`
/// copies deep or at the depth that reaches the limit; `documents` for the leak check.
#[pyfunction]
#[pyo3(signature = (n, offsets, spans, layers=None, documents=Vec::new()))]
fn analyze_rows(
    py: Python<'_>,
    n: u64,
    offsets: &[u8],
    spans: &[u8],
    layers: Option<usize>,
    documents: Vec<u64>,
) -> PyResult<String> {
    let (offsets, spans) = (offsets.to_vec(), spans.to_vec());
    interruptible(py, move |stop| {
        let rows = interval_rows(n, &offsets, &spans)?;
        let r = reach_auto_while(&rows, layers, &documents, || !stop.load(Ordering::Relaxed))
            .ok_or_else(|| STOPPED.to_string())?
            .map_err(|e| e.to_string())?;
        Ok(structured_json(&r, None).to_string())
    })
}

/// Interval rows from their bytes (see [`analyze_rows`]).
fn interval_rows(n: u64, offsets: &[u8], spans: &[u8]) -> Result<IntervalRows, String> {
    if !offsets.len().is_multiple_of(8) || !spans.len().is_multiple_of(8) {
        return Err("interval rows: offsets must be u64 and spans u32 pairs".to_string());
    }
    let offsets: Vec<usize> = offsets
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as usize)
        .collect();
    let spans: Vec<[u32; 2]> = spans
        .chunks_exact(8)
        .map(|c| [u32::from_le_bytes([c[0], c[1], c[2], c[3]]), u32::from_le_bytes([c[4], c[5], c[6], c[7]])])
        .collect();
    IntervalRows::new(n, offsets, spans).map_err(|e| e.to_string())
}

/// `hasseflow model --json` on a config's text (`config`) or a gallery entry (`gallery`):
/// `context` tokens (the decoder's), an encoder-decoder's `encoder_context`, packed `documents`,
/// the `rows` to report, `direction` ("causal" / "bidirectional") to override the config, image
/// spans `images` as `(start, length)` pairs.
#[pyfunction]
#[pyo3(signature = (context, config=None, gallery=None, name="config.json", encoder_context=None,
                    documents=Vec::new(), rows=Vec::new(), direction=None, max_bytes=None, images=Vec::new()))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments, one per CLI flag.
fn model_run(
    py: Python<'_>,
    context: u64,
    config: Option<String>,
    gallery: Option<String>,
    name: &str,
    encoder_context: Option<u64>,
    documents: Vec<u64>,
    rows: Vec<u64>,
    direction: Option<String>,
    max_bytes: Option<u64>,
    images: Vec<(u64, u64)>,
) -> PyResult<String> {
    let name = name.to_string();
    interruptible(py, move |stop| {
        let opts = model::ReadOptions {
            direction: match direction.as_deref() {
                None => None,
                Some("causal") => Some(model::Direction::Causal),
                Some("bidirectional") => Some(model::Direction::Bidirectional),
                Some(other) => return Err(format!("direction: {other:?} is neither \"causal\" nor \"bidirectional\"")),
            },
            ..model::ReadOptions::default()
        };
        let (spec, source) = match (config, gallery) {
            (Some(text), None) => (model::parse_config_with(&text, &name, &opts).map_err(|e| e.to_string())?, name),
            (None, Some(g)) => {
                let entry = model::gallery_entry(&g).map_err(|e| e.to_string())?;
                let spec = model::parse_config_with(entry.config(), entry.name, &opts).map_err(|e| e.to_string())?;
                (spec, entry.source.to_string())
            }
            _ => return Err("give a config or a gallery name".to_string()),
        };
        if spec.encoder.is_some() && !documents.is_empty() {
            return Err("documents: packed documents are not modelled for an encoder-decoder model".to_string());
        }
        if spec.encoder.is_some() && !images.is_empty() {
            return Err("images: image spans are not modelled for an encoder-decoder model".to_string());
        }
        let (spec, n) = ModelRun::positions(spec, context, encoder_context)?;
        let spans: Vec<[u64; 2]> = images.iter().map(|&(s, l)| [s, l]).collect();
        let images = model::check_image_spans(&spans, n).map_err(|e| e.to_string())?;
        if let Some(q) = rows.iter().find(|&&q| q >= n) {
            return Err(format!("rows: {q} is outside the context (0..{n})"));
        }
        let overlays = Overlays { docs: documents, images, ..Overlays::default() };
        let start = std::time::Instant::now();
        let max = max_bytes.unwrap_or(model::MAX_RUN_BYTES);
        let stack = ModelRun::stack(&spec, n, &overlays, rows.len(), max).map_err(|e| e.to_string())?;
        let mut job = ModelJob::new(&stack, source, spec, n, overlays, &rows).map_err(|e| e.to_string())?;
        let run = match job.step_while(|| !stop.load(Ordering::Relaxed)) {
            Step::Done(run) => run.map_err(|e| e.to_string())?,
            Step::Progress { .. } => return Err(STOPPED.to_string()),
        };
        let mut v = run.to_json();
        v["timings_ms"] = serde_json::json!({ "reach": start.elapsed().as_secs_f64() * 1e3 });
        Ok(v.to_string())
    })
}

/// The gallery as `hasseflow model --list --json` prints it.
#[pyfunction]
fn gallery_list(py: Python<'_>) -> PyResult<String> {
    guarded(py, || model::gallery_json().map(|v| v.to_string()).map_err(|e| e.to_string()))
}

/// A derivation (THEORY §5-6) of a built-in family (`builtin`: its JSON, `{"family": "block",
/// "n": 6, "block": 2}`) or of a family file's text (`family_file`): `(the report JSON of
/// `hasseflow derive --json`, the merged mask file as hasseflow JSON, the designer link's
/// fragment or None for a file)`.
/// `name` and `params` (the CLI's options as text, [`BuiltinFamily::from_params`]) give a
/// built-in family the way `hasseflow derive NAME --option value` does.
#[pyfunction]
#[pyo3(signature = (builtin=None, family_file=None, sparse=false, name=None, params=None))]
fn derive_family(
    py: Python<'_>,
    builtin: Option<String>,
    family_file: Option<Vec<u8>>,
    sparse: bool,
    name: Option<String>,
    params: Option<BTreeMap<String, String>>,
) -> PyResult<(String, String, Option<String>)> {
    guarded(py, move || {
        let spec: Option<BuiltinFamily> = match (&builtin, &name) {
            (Some(text), _) => Some(serde_json::from_str(text).map_err(|e| format!("family options: {e}"))?),
            (None, Some(name)) => {
                Some(BuiltinFamily::from_params(name, &params.unwrap_or_default()).map_err(|e| e.to_string())?)
            }
            (None, None) => None,
        };
        let family = match (&spec, &family_file) {
            (Some(spec), None) => spec.build().map_err(|e| e.to_string())?,
            (None, Some(bytes)) => derive::parse_family(bytes).map_err(|e| format!("invalid family: {e}"))?,
            _ => return Err("give a built-in family or a family file".to_string()),
        };
        let d = derive::derive(&family).map_err(|e| e.to_string())?;
        let file = match &spec {
            Some(spec) => spec.mask_file(&d, sparse),
            None => d.mask_file(sparse),
        };
        let link = spec.and_then(|s| serde_json::to_string(&s).ok()).map(|j| share::encode_design(&j));
        let mask = hasseflow_core::format::write_json(&file, hasseflow_core::format::Encoding::Packed);
        Ok((d.to_json().to_string(), mask, link))
    })
}

/// The built-in families ([`FAMILIES`]) as JSON: per family its `name`, `title` and `params`
/// (`name`, `kind`, `default`, `required`, `help`, and `options` of a choice or `min` of an int).
#[pyfunction]
fn families() -> String {
    let list: Vec<serde_json::Value> = FAMILIES
        .iter()
        .map(|f| {
            let params: Vec<serde_json::Value> = f
                .params
                .iter()
                .map(|p| {
                    let mut v = serde_json::json!({"name": p.spec.name, "default": p.spec.default,
                                                   "required": p.required, "help": p.spec.help});
                    match p.spec.kind {
                        ParamKind::Int { min } => {
                            v["kind"] = "int".into();
                            v["min"] = min.into();
                        }
                        ParamKind::Bool => v["kind"] = "bool".into(),
                        ParamKind::Choice(options) => {
                            v["kind"] = "choice".into();
                            v["options"] = options.into();
                        }
                        ParamKind::Fraction => v["kind"] = "fraction".into(),
                        ParamKind::IntList => v["kind"] = "int list".into(),
                    }
                    v
                })
                .collect();
            serde_json::json!({"name": f.name, "title": f.title, "params": params})
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

/// The app's share-link fragment (without `#`) of a mask given as row words.
#[pyfunction]
#[pyo3(signature = (words, n, labels=None))]
fn share_fragment(py: Python<'_>, words: &[u8], n: usize, labels: Option<Vec<String>>) -> PyResult<String> {
    guarded(py, || {
        let m = matrix_from_words(words, n)?;
        if let Some(l) = &labels {
            check_labels(l, n).map_err(|e| e.to_string())?;
        }
        Ok(share::encode(&m, labels.as_deref()))
    })
}

fn theme(dark: bool) -> SvgTheme {
    if dark { SvgTheme::dark() } else { SvgTheme::light() }
}

/// A grid picture of `n x n` cells: `cells` holds one class byte per cell, row-major; `colours`
/// fills each class (0 = background); `legend` pairs a class with its meaning.
#[pyfunction]
#[pyo3(signature = (cells, n, colours, legend, title, dark=false))]
fn grid_picture(
    py: Python<'_>,
    cells: &[u8],
    n: usize,
    colours: Vec<String>,
    legend: Vec<(u8, String)>,
    title: &str,
    dark: bool,
) -> PyResult<String> {
    guarded(py, || {
        if n == 0 || cells.len() != n.saturating_mul(n) {
            return Err(format!("grid: {} cells for n = {n}", cells.len()));
        }
        let colours: Vec<&str> = colours.iter().map(String::as_str).collect();
        let legend: Vec<(u8, &str)> = legend.iter().map(|(c, m)| (*c, m.as_str())).collect();
        let grid = Grid { n, colours: &colours, legend: &legend, title };
        Ok(grid_svg(&grid, &theme(dark), |q, k| cells[q * n + k]))
    })
}

/// The growth plot `|R(l)| / |limit|` by layer as SVG.
#[pyfunction]
#[pyo3(signature = (growth, limit, full_at=None, dark=false))]
fn growth_picture(
    py: Python<'_>,
    growth: Vec<u64>,
    limit: u64,
    full_at: Option<usize>,
    dark: bool,
) -> PyResult<String> {
    guarded(py, move || Ok(growth_svg(&growth, limit, full_at, &theme(dark))))
}

/// Panics inside the guard: the test that a Rust panic reaches Python as an exception.
#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    guarded(py, || -> Result<(), String> { panic!("a deliberate panic") })
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HasseflowError", m.py().get_type::<HasseflowError>())?;
    m.add("MAX_N", MAX_N)?;
    m.add("MAX_STRUCTURED_N", interop::mask_mod::MAX_STRUCTURED_N)?;
    m.add("MAX_ROW_INTERVALS", interop::mask_mod::MAX_ROW_INTERVALS)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(analyze_words, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_file, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_rows, m)?)?;
    m.add_function(wrap_pyfunction!(model_run, m)?)?;
    m.add_function(wrap_pyfunction!(gallery_list, m)?)?;
    m.add_function(wrap_pyfunction!(derive_family, m)?)?;
    m.add_function(wrap_pyfunction!(share_fragment, m)?)?;
    m.add_function(wrap_pyfunction!(families, m)?)?;
    m.add_function(wrap_pyfunction!(grid_picture, m)?)?;
    m.add_function(wrap_pyfunction!(growth_picture, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    pictures::register(m)?;
    links::register(m)?;
    Ok(())
}
