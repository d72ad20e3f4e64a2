//! The `model` subcommand: reads a Hugging Face `config.json` (or a gallery entry) through
//! `hasseflow_core::model`, adds the packed documents, and prints the layers. Everything is
//! gathered in a [`ModelReport`] whose `to_json`/`to_text` print it, so the reach figures of the
//! structured engine (growth, full_at, rows) are a field and a few lines each.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use hasseflow_core::model::{self, GalleryEntry, MAX_CONFIG_BYTES};
use hasseflow_core::pattern::{ModelSpec, Overlays};
use serde_json::{Value, json};

use crate::print_out;

#[derive(clap::Args)]
pub(crate) struct ModelArgs {
    /// A config.json file, or a gallery name (see --list).
    source: Option<String>,
    /// Context length n (tokens).
    #[arg(long)]
    context: Option<u64>,
    /// Packed documents: lengths summing to n, e.g. 512,1024,512.
    #[arg(long, conflicts_with = "segments")]
    docs: Option<String>,
    /// Packed documents from a segment-id file (a JSON array or whitespace-separated ids, one
    /// per position; consecutive equal ids form one document).
    #[arg(long)]
    segments: Option<PathBuf>,
    /// A query position to report on (0-based; repeatable).
    #[arg(long = "row", value_name = "Q")]
    rows: Vec<u64>,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// List the gallery: name, model_type, layers, pattern, source.
    #[arg(long)]
    list: bool,
}

/// What `hasseflow model` prints.
pub(crate) struct ModelReport {
    /// The gallery entry's source URL, or the file path.
    pub source: String,
    /// The model.
    pub spec: ModelSpec,
    /// Context length.
    pub n: u64,
    /// Packed documents (and, later, sinks and globals).
    pub overlays: Overlays,
    /// Query positions asked for with --row.
    pub rows: Vec<u64>,
}

impl ModelReport {
    pub(crate) fn to_json(&self) -> Value {
        let s = &self.spec;
        json!({
            "name": s.name,
            "model_type": s.model_type,
            "source": self.source,
            "causal": s.causal,
            "n": self.n,
            "max_position_embeddings": s.max_position_embeddings,
            "layers": s.layers.len(),
            "types": s.layers.iter().map(|k| k.label()).collect::<Vec<_>>(),
            "pattern": model::pattern_summary(&s.layers),
            "docs": self.overlays.docs,
            "rows": self.rows,
        })
    }

    pub(crate) fn to_text(&self) -> String {
        let s = &self.spec;
        let mut out = String::new();
        let direction = if s.causal { "causal" } else { "bidirectional" };
        out.push_str(&format!("model    {} ({}, {direction})\n", s.name, s.model_type));
        out.push_str(&format!("source   {}\n", self.source));
        out.push_str(&format!("n        {}", self.n));
        if let Some(max) = s.max_position_embeddings {
            out.push_str(&format!(" (max_position_embeddings {max}{})", if self.n > max { ", exceeded" } else { "" }));
        }
        out.push('\n');
        out.push_str(&format!("layers   {}: {}\n", s.layers.len(), model::pattern_summary(&s.layers)));
        if !self.overlays.docs.is_empty() {
            let docs: Vec<String> = self.overlays.docs.iter().map(u64::to_string).collect();
            out.push_str(&format!("docs     {} documents: {}\n", docs.len(), docs.join(",")));
        }
        if !self.rows.is_empty() {
            let rows: Vec<String> = self.rows.iter().map(u64::to_string).collect();
            out.push_str(&format!("rows     {}\n", rows.join(",")));
        }
        out.push_str("\nlayer  type\n");
        for (i, k) in s.layers.iter().enumerate() {
            out.push_str(&format!("{:>5}  {}\n", i + 1, k.label()));
        }
        out
    }
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
    let (spec, source) = load(source)?;
    let docs = match (&a.docs, &a.segments) {
        (Some(d), _) => model::parse_doc_lengths(d, n)?,
        (None, Some(path)) => {
            let text = read_limited(path, model::packing::MAX_SEGMENT_BYTES)?;
            model::parse_segment_ids(&text, n)?
        }
        (None, None) => Vec::new(),
    };
    if let Some(q) = a.rows.iter().find(|&&q| q >= n) {
        bail!("--row: {q} is outside the context (0..{n})");
    }
    let report =
        ModelReport { source, spec, n, overlays: Overlays { docs, ..Overlays::default() }, rows: a.rows.clone() };
    if a.json {
        print_out(&format!("{}\n", report.to_json()));
    } else {
        print_out(&report.to_text());
    }
    Ok(())
}

/// A config file (when the path exists) or a gallery entry.
fn load(source: &str) -> Result<(ModelSpec, String)> {
    let path = Path::new(source);
    if path.is_file() {
        let text = read_limited(path, MAX_CONFIG_BYTES)?;
        let name = path.file_name().map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned());
        let spec = model::parse_config(&text, &name)?;
        return Ok((spec, source.to_string()));
    }
    match model::gallery().iter().find(|e| e.name == source) {
        Some(entry) => Ok((model::load_gallery(entry.name)?, entry.source.to_string())),
        None => bail!("{source}: no such file or gallery model (hasseflow model --list)"),
    }
}

/// Reads at most `max` bytes (one more is read to tell an over-long file).
fn read_limited(path: &Path, max: usize) -> Result<String> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(max as u64 + 1).read_to_end(&mut bytes).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() > max {
        bail!("{}: larger than the {max} bytes allowed", path.display());
    }
    String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", path.display()))
}

fn list(as_json: bool) -> Result<()> {
    let rows: Vec<(&GalleryEntry, ModelSpec)> =
        model::gallery().iter().map(|e| Ok((e, model::load_gallery(e.name)?))).collect::<Result<_>>()?;
    if as_json {
        let v: Vec<Value> = rows
            .iter()
            .map(|(e, s)| {
                json!({"name": e.name, "model_type": s.model_type, "layers": s.layers.len(),
                       "causal": s.causal, "pattern": model::pattern_summary(&s.layers),
                       "source": e.source, "notes": e.notes})
            })
            .collect();
        print_out(&format!("{}\n", Value::Array(v)));
        return Ok(());
    }
    let mut out = format!("{:<24} {:<12} {:>6}  {}\n", "name", "model_type", "layers", "pattern / source");
    for (e, s) in &rows {
        out.push_str(&format!(
            "{:<24} {:<12} {:>6}  {}\n{:<45}{}\n",
            e.name,
            s.model_type,
            s.layers.len(),
            model::pattern_summary(&s.layers),
            "",
            e.source
        ));
    }
    print_out(&out);
    Ok(())
}
