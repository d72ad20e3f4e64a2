//! The `model` subcommand: reads a Hugging Face `config.json` (or a gallery entry) through
//! `hasseflow_core::model`, adds the packed documents, runs the structured reach engine
//! ([`ModelRun`]) and prints its report: the core's JSON object, or a table a person reads.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use hasseflow_core::model::{self, GalleryEntry, MAX_CONFIG_BYTES, ModelRun};
use hasseflow_core::pattern::{ModelSpec, Overlays};
use hasseflow_core::reach::{ReachError, human_bytes};
use hasseflow_core::report::percent;
use serde_json::json;

use crate::{print_out, read_limited};

#[derive(clap::Args)]
pub(crate) struct ModelArgs {
    /// A config.json file, or a gallery name (see --list).
    source: Option<String>,
    /// Context length n (tokens; the decoder's for an encoder-decoder).
    #[arg(long)]
    context: Option<u64>,
    /// An encoder-decoder's encoder length (default: --context); its positions come first.
    #[arg(long, value_name = "N")]
    encoder_context: Option<u64>,
    /// Read the model as a decoder, whatever its config says (for a type hasseflow does not know).
    #[arg(long, conflicts_with = "bidirectional")]
    causal: bool,
    /// Read the model as an encoder, whatever its config says.
    #[arg(long)]
    bidirectional: bool,
    /// Packed documents: lengths summing to n, e.g. 512,1024,512.
    #[arg(long, conflicts_with = "segments")]
    docs: Option<String>,
    /// Packed documents from a segment-id file (a JSON array or whitespace-separated ids, one
    /// per position; consecutive equal ids form one document).
    #[arg(long)]
    segments: Option<String>,
    /// Image spans START:LEN,... (0-based first position, tokens), e.g. 3:256,300:256: each
    /// image's tokens read each other both ways, as Gemma 3's token_type_ids make them.
    #[arg(long, value_name = "START:LEN,...")]
    images: Option<String>,
    /// A query position to report on (0-based; repeatable).
    #[arg(long = "row", value_name = "Q")]
    rows: Vec<u64>,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// List the gallery: name, model_type, layers, pattern, source.
    #[arg(long)]
    list: bool,
    /// Most memory the run may need, in GiB (default 8, or three quarters of the available
    /// memory when that is less): a longer context is refused up front, with the estimate and
    /// the largest context that fits.
    #[arg(long, value_name = "GIB")]
    max_memory: Option<f64>,
}

/// The text report: the header, the verdict, one row per layer, the limit and the asked rows.
fn to_text(run: &ModelRun, reach_ms: f64) -> String {
    let s = &run.spec;
    let r = &run.report;
    let mut out = String::new();
    let direction = match (&s.encoder, s.causal) {
        (Some(_), _) => "encoder-decoder",
        (None, true) => "causal",
        (None, false) => "bidirectional",
    };
    out.push_str(&format!("model    {} ({}, {direction})\n", s.name, s.model_type));
    out.push_str(&format!("source   {}\n", run.source));
    // An encoder-decoder's limit is the decoder's (its encoder has its own).
    let own = run.n - s.encoder.as_ref().map_or(0, |e| e.context);
    out.push_str(&format!("n        {}", run.n));
    if s.encoder.is_some() {
        out.push_str(&format!(" (encoder {}, decoder {own})", run.n - own));
    }
    if let Some(max) = s.max_position_embeddings {
        out.push_str(&format!(" (max_position_embeddings {max}{})", if own > max { ", exceeded" } else { "" }));
    }
    out.push('\n');
    if let Some(e) = &s.encoder {
        out.push_str(&format!(
            "encoder  {} positions (0..{}), {} layers: {}\n",
            e.context,
            e.context,
            e.layers.len(),
            model::pattern_summary(&e.layers)
        ));
    }
    out.push_str(&format!("layers   {}: {}\n", s.layers.len(), model::pattern_summary(&s.layers)));
    if !run.overlays.docs.is_empty() {
        let docs: Vec<String> = run.overlays.docs.iter().map(u64::to_string).collect();
        let shown = if docs.len() > 12 { format!("{},…", docs[..12].join(",")) } else { docs.join(",") };
        out.push_str(&format!("docs     {} documents: {shown}\n", docs.len()));
    }
    if !run.overlays.images.is_empty() {
        let spans = &run.overlays.images;
        let shown = model::image_spans_text(&spans[..spans.len().min(12)]);
        let more = if spans.len() > 12 { ",…" } else { "" };
        let count = if spans.len() == 1 { "1 span".to_string() } else { format!("{} spans", spans.len()) };
        out.push_str(&format!("images   {count} (START:LEN, read both ways): {shown}{more}\n"));
    }
    out.push_str(&format!("verdict  {}\n", run.verdict()));
    out.push_str(&format!(
        "leaks    {}\n",
        if run.leaks() { "yes: some reach crosses a document boundary" } else { "no" }
    ));
    let hasse = crate::report::hasse_summary(&r.limit);
    let classes = r.limit.classes.map_or_else(|| "-".to_string(), |c| c.to_string());
    out.push_str(&format!(
        "limit    {} cells, {classes} classes, {} components; Hasse diagram {hasse}\n",
        r.limit_cells, r.limit.components
    ));
    out.push_str(&format!("time     {reach_ms:.1} ms (structured engine, all layers)\n"));
    out.push_str(&format!(
        "\n{:>5}  {:<26} {:>16} {:>9}  {:>26}  {}\n",
        "layer", "type", "|R(l)|", "of limit", "lookback min/median/max", "leaks"
    ));
    for l in &r.layers {
        out.push_str(&format!(
            "{:>5}  {:<26} {:>16} {:>9}  {:>26}  {}\n",
            l.layer,
            l.label,
            l.cells,
            percent(l.cells, r.limit_cells, 2),
            format!("{}/{}/{}", l.lookback.min, l.lookback.median, l.lookback.max),
            if l.leaks { "yes" } else { "no" }
        ));
    }
    if let Some(first) = r.layers.first() {
        for (i, q) in first.query_rows.iter().enumerate() {
            out.push_str(&format!("\nrow q = {} (R(l)[q] as inclusive intervals)\n", q.query));
            for l in &r.layers {
                let spans: Vec<String> = l.query_rows[i].intervals.iter().map(|[a, b]| format!("[{a}, {b}]")).collect();
                out.push_str(&format!("{:>5}  {}\n", l.layer, spans.join(" ")));
            }
        }
    }
    out
}

pub(crate) fn model_command(a: &ModelArgs) -> Result<()> {
    if a.list {
        return list(a.json);
    }
    let source = a.source.as_deref().context("give a config.json or a gallery name, or --list to see the gallery")?;
    let n = a.context.context("give the context length with --context N")?;
    if n == 0 {
        bail!("--context: must be at least 1");
    }
    let max_bytes = match a.max_memory {
        None => default_max_bytes(),
        Some(g) if g.is_finite() && g > 0.0 => (g * (1u64 << 30) as f64) as u64,
        Some(g) => bail!("--max-memory: must be a positive number of GiB, got {g}"),
    };
    let opts = model::ReadOptions {
        direction: match (a.causal, a.bidirectional) {
            (true, _) => Some(model::Direction::Causal),
            (_, true) => Some(model::Direction::Bidirectional),
            _ => None,
        },
        ..model::ReadOptions::default()
    };
    let (spec, source) = load(source, &opts)?;
    if spec.encoder.is_some() && (a.docs.is_some() || a.segments.is_some()) {
        bail!("--docs/--segments: packed documents are not modelled for an encoder-decoder model");
    }
    if spec.encoder.is_some() && a.images.is_some() {
        bail!("--images: image spans are not modelled for an encoder-decoder model");
    }
    // An encoder-decoder runs its encoder's positions, then the decoder's.
    let (spec, n) = ModelRun::positions(spec, n, a.encoder_context)
        .map_err(|e| anyhow!("--{}", e.replacen("encoder context", "encoder-context", 1)))?;
    let docs = match (&a.docs, &a.segments) {
        (Some(d), _) => model::parse_doc_lengths(d, n)?,
        (None, Some(path)) => {
            let bytes = read_limited(path, model::packing::MAX_SEGMENT_BYTES)?;
            let text = String::from_utf8(bytes).with_context(|| format!("{path}: not UTF-8"))?;
            model::parse_segment_ids(&text, n)?
        }
        (None, None) => Vec::new(),
    };
    if let Some(q) = a.rows.iter().find(|&&q| q >= n) {
        bail!("--row: {q} is outside the context (0..{n})");
    }
    let images = match &a.images {
        Some(text) => model::parse_image_spans(text, n).map_err(|e| anyhow!("--{e}"))?,
        None => Vec::new(),
    };
    let overlays = Overlays { docs, images, ..Overlays::default() };
    // A bar over the layers (the core's ModelJob steps one layer at a time); hidden in pipes and
    // with --json.
    let bar = crate::progress::bar(crate::progress::wanted(a.json), spec.layer_count() as u64, "reach over the layers");
    let start = Instant::now();
    let run =
        ModelRun::compute_with_progress(source, spec, n, overlays, &a.rows, max_bytes, crate::progress::follow(&bar));
    let reach_ms = start.elapsed().as_secs_f64() * 1e3;
    bar.finish_and_clear();
    let run = run.map_err(|e| match e {
        ReachError::OverMemory { .. } => {
            anyhow!("{e}, or raise the limit with --max-memory GIB (now {})", human_bytes(max_bytes))
        }
        e => e.into(),
    })?;
    // The reader's notes, once the run stands (a refusal stays one line); `--json` has them in `notes`.
    if !a.json {
        for note in &run.spec.notes {
            eprintln!("note: {note}");
        }
    }
    if a.json {
        let mut v = run.to_json();
        v["timings_ms"] = json!({ "reach": reach_ms });
        print_out(&format!("{v}\n"));
    } else {
        print_out(&to_text(&run, reach_ms));
    }
    Ok(())
}

/// The core's [`model::MAX_RUN_BYTES`], or three quarters of the memory the system says is
/// available (Linux `/proc/meminfo`, `MemAvailable`) when that is less, so that a run within the
/// estimate also fits a smaller machine.
fn default_max_bytes() -> u64 {
    let available_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|text| {
        text.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    available_kib.map_or(model::MAX_RUN_BYTES, |kib| (kib.saturating_mul(1024) / 4 * 3).min(model::MAX_RUN_BYTES))
}

/// A config file (when the path exists) or a gallery entry.
fn load(source: &str, opts: &model::ReadOptions) -> Result<(ModelSpec, String)> {
    let path = Path::new(source);
    if path.is_file() {
        let bytes = read_limited(source, MAX_CONFIG_BYTES)?;
        let name = path.file_name().map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned());
        let spec = model::parse_config_bytes_with(&bytes, &name, opts)?;
        return Ok((spec, source.to_string()));
    }
    let entry = model::gallery_entry(source)
        .map_err(|_| anyhow!("{source}: no such file or gallery model (hasseflow model --list)"))?;
    let spec = model::parse_config_with(entry.config(), entry.name, opts)?;
    Ok((spec, entry.source.to_string()))
}

fn list(as_json: bool) -> Result<()> {
    if as_json {
        print_out(&format!("{}\n", model::gallery_json()?));
        return Ok(());
    }
    let rows: Vec<(&GalleryEntry, ModelSpec)> =
        model::gallery().iter().map(|e| Ok((e, model::load_gallery(e.name)?))).collect::<Result<_>>()?;
    let mut out = format!("{:<24} {:<16} {:>6}  {}\n", "name", "model_type", "layers", "pattern / source");
    for (e, s) in &rows {
        out.push_str(&format!(
            "{:<24} {:<16} {:>6}  {}\n{:<49}{}\n",
            e.name,
            s.model_type,
            s.layer_count(),
            model::pattern_summary(&s.layers),
            "",
            e.source
        ));
    }
    print_out(&out);
    Ok(())
}
