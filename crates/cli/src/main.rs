//! `hasseflow`: the command line over hasseflow-core. Parsing arguments, reading files and
//! printing live here; every computation is the core's.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use hasseflow_core::derive::{
    self, Aggregate, AutoregressiveOptions, BlockOptions, ButterflyOptions, Family, MaeOptions,
};
use hasseflow_core::format::{self, Encoding, MAX_INPUT_BYTES, MAX_LABEL_CHARS, MAX_N, MaskFile, Provenance};
use hasseflow_core::interop;
use hasseflow_core::presets::{CATALOG, Inner, ParamKind, TwoStreamOrder, build_preset, preset_labels, preset_spec};
use hasseflow_core::{Analysis, BitMatrix, ClassWiring, CoverWiring, FirstReach, SparsifyOptions, sparsify};
use serde_json::{Value, json};

mod flow;
mod model;
mod png;
mod progress;
mod report;

/// Order theory of attention masks: how a mask moves information across layers.
#[derive(Parser)]
#[command(name = "hasseflow", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse a mask: L*, limit, classes, Hasse diagram, height, width, per-layer growth.
    Analyze {
        #[command(flatten)]
        input: Input,
        /// Print one JSON object instead of the text summary.
        #[arg(long)]
        json: bool,
        /// Include the first-reach layer of every cell (JSON: `first_reach`, null = never).
        #[arg(long)]
        first_reach: bool,
    },
    /// Print a preset mask. Parameters as KEY=VALUE, e.g. `preset sliding-window --n 8 w=3`.
    Preset {
        /// Preset name (see --list).
        name: Option<String>,
        /// Tokens n (positions for most presets; see --list).
        #[arg(long)]
        n: Option<usize>,
        /// List the catalog with formulas and parameters.
        #[arg(long)]
        list: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutFormat::Json)]
        format: OutFormat,
        /// How JSON stores the mask.
        #[arg(long, value_enum, default_value_t = EncodingArg::Auto)]
        encoding: EncodingArg,
        /// Preset parameters as KEY=VALUE (see --list for each preset's).
        #[arg(value_name = "KEY=VALUE")]
        params: Vec<String>,
    },
    /// Convert a mask between the JSON format and text grids; also imports kernel parameters
    /// (the JSON that `export --to flash` / `--to flashmask` writes) back into a mask.
    Convert {
        #[command(flatten)]
        input: Input,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutFormat::Json)]
        to: OutFormat,
        /// How JSON stores the mask.
        #[arg(long, value_enum, default_value_t = EncodingArg::Auto)]
        encoding: EncodingArg,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Transform a mask: densify, sparsify, transpose, not, and/or/xor with a second mask.
    Op {
        /// The operation.
        #[arg(value_enum)]
        op: Op,
        #[command(flatten)]
        input: Input,
        /// Second mask for and/or/xor.
        other: Option<String>,
        /// sparsify: wire each class as a directed cycle instead of a clique.
        #[arg(long)]
        cycle: bool,
        /// sparsify: one edge per Hasse edge instead of all member pairs.
        #[arg(long)]
        one_edge: bool,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutFormat::Json)]
        format: OutFormat,
    },
    /// Export a mask for other tools: FlexAttention Python, NumPy .npy, the Hasse diagram as DOT,
    /// block statistics, FlashAttention or FlashMask parameters (docs/INTEROP.md).
    Export {
        #[command(flatten)]
        input: Input,
        /// What to produce.
        #[arg(long, value_enum)]
        to: ExportTarget,
        /// Block size for `flex` and `blocks` (FlexAttention's default is 128).
        #[arg(long, default_value_t = interop::DEFAULT_BLOCK_SIZE)]
        block_size: usize,
        /// Write here instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Derive the minimal merged training mask of a task family (THEORY §5-6): `derive
    /// autoregressive --n 8`, `derive block --n 6 --block 2`, `derive butterfly --n 4`,
    /// `derive mae --n 8 --span 2`, or `derive FAMILY.json` (docs/FAMILY_FORMAT.md).
    Derive(Box<DeriveArgs>),
    /// Run a random-weight Transformer on the mask (THEORY §7): perturb each input, measure which
    /// positions change after each layer, and report the agreement with R(L) and the timings.
    Flow(FlowArgs),
    /// Read a Hugging Face config.json (or a gallery model) and print its attention layer by
    /// layer (docs/MODELS.md): `model gemma-3-27b-it --context 8192`, `model --list`.
    Model(model::ModelArgs),
}

/// A mask input: its path and the size for inputs that record none.
#[derive(clap::Args)]
struct Input {
    /// Mask input, or - for standard input: hasseflow JSON, a text grid, NumPy .npy, kernel
    /// parameters (`export --to flash` / `flashmask`), or a FlexAttention mask_mod in Python.
    file: String,
    /// Size for inputs that record none: a mask_mod (default: its `N = ...` constant) or a
    /// FlashAttention window.
    #[arg(long)]
    n: Option<usize>,
}

#[derive(clap::Args)]
struct FlowArgs {
    /// The mask (a layer stack in a JSON file runs one mask per layer).
    #[command(flatten)]
    input: Input,
    /// Layers (1-16; default: the stack's layer count, or 4).
    #[arg(long)]
    layers: Option<usize>,
    /// Width of the residual stream (16-128, a multiple of --heads).
    #[arg(long, default_value_t = 32)]
    d_model: usize,
    /// Attention heads per layer (1-8).
    #[arg(long, default_value_t = 4)]
    heads: usize,
    /// Seed of the weights and inputs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Where to compute: the GPU (fails without an adapter), the CPU, or the GPU when an adapter
    /// exists and the CPU otherwise.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum BackendArg {
    /// The GPU if an adapter exists, else the CPU (the report says which ran, and why).
    Auto,
    /// The core's CPU reference.
    Cpu,
    /// WGSL kernels through wgpu (Vulkan natively).
    Gpu,
}

#[derive(clap::Args)]
struct DeriveArgs {
    /// autoregressive, block, butterfly, mae, or a family file (JSON; - for standard input).
    family: String,
    /// Tokens n (built-in families).
    #[arg(long)]
    n: Option<usize>,
    /// block: block size s.
    #[arg(long)]
    block: Option<usize>,
    /// block: attention inside clean blocks (and the prompt).
    #[arg(long, value_enum, default_value_t = InnerArg::Full)]
    clean: InnerArg,
    /// block: attention inside mask blocks.
    #[arg(long, value_enum, default_value_t = InnerArg::Full)]
    query: InnerArg,
    /// block: clean prompt tokens read by everything.
    #[arg(long, default_value_t = 0)]
    prompt: usize,
    /// block, butterfly: minimal layout (leave out the positions no task reads).
    #[arg(long)]
    minimal: bool,
    /// block: interleaved order [K0 Q0 K1 Q1 ...] instead of grouped [w | m].
    #[arg(long)]
    interleaved: bool,
    /// autoregressive: each task as one bidirectional block instead of the inference chain.
    #[arg(long)]
    bidirectional: bool,
    /// autoregressive: keep w_{n-1} as a padding position (n positions).
    #[arg(long)]
    pad: bool,
    /// butterfly: what the predictor P_k holds.
    #[arg(long, value_enum, default_value_t = AggregateArg::Neighbours)]
    aggregate: AggregateArg,
    /// butterfly: neighbours on each side aggregated into w'_k.
    #[arg(long, default_value_t = 1)]
    radius: usize,
    /// mae: masked span length.
    #[arg(long)]
    span: Option<usize>,
    /// mae: distance between span starts (0: the span length).
    #[arg(long, default_value_t = 0)]
    stride: usize,
    /// mae: causal encoder over the visible tokens.
    #[arg(long)]
    causal_encoder: bool,
    /// Print one JSON object instead of the text report.
    #[arg(long)]
    json: bool,
    /// Write the derived mask (hasseflow-mask JSON, position labels = inputs) to this file.
    #[arg(long)]
    mask_out: Option<PathBuf>,
    /// With --mask-out: write the sparse mask instead of the dense one.
    #[arg(long)]
    sparse: bool,
    /// With --json: add `task_diagrams`, each task's Hasse diagram (nodes labelled by their
    /// inputs) and the content of its labelled positions.
    #[arg(long)]
    tasks: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum InnerArg {
    /// Every token of the block reads every other.
    Full,
    /// A token reads the tokens of its block up to itself.
    Causal,
}

#[derive(Clone, Copy, ValueEnum)]
enum AggregateArg {
    /// w'_k built from the neighbours within --radius.
    Neighbours,
    /// A plain mask token m@k.
    Mask,
}

#[derive(Clone, Copy, ValueEnum)]
enum OutFormat {
    /// The hasseflow-mask JSON format.
    Json,
    /// A text grid of `1` and `.`.
    Text,
}

#[derive(Clone, Copy, ValueEnum)]
enum EncodingArg {
    /// Row strings up to n = 512, packed above.
    Auto,
    /// Row strings.
    Rows,
    /// Base64 bits.
    Packed,
}

#[derive(Clone, Copy, ValueEnum)]
enum Op {
    /// Replace the mask by its limit closure (one layer suffices).
    Densify,
    /// Keep classes and covering pairs only (same limit, more layers).
    Sparsify,
    /// Reverse the direction of information flow.
    Transpose,
    /// Complement every entry.
    Not,
    /// Entry-wise AND with a second mask.
    And,
    /// Entry-wise OR with a second mask (two heads in one layer).
    Or,
    /// Entry-wise XOR with a second mask (where they differ).
    Xor,
}

impl From<EncodingArg> for Encoding {
    fn from(e: EncodingArg) -> Self {
        match e {
            EncodingArg::Auto => Encoding::Auto,
            EncodingArg::Rows => Encoding::Rows,
            EncodingArg::Packed => Encoding::Packed,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hasseflow: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Derive(args) => derive_command(&args),
        Command::Flow(args) => flow::flow_command(&args),
        Command::Model(args) => model::model_command(&args),
        Command::Analyze { input, json, first_reach } => analyze(&input, json, first_reach),
        Command::Preset { list: true, .. } => {
            print_out(&catalog_text());
            Ok(())
        }
        Command::Preset { name, n, format, encoding, params, .. } => {
            let name = name.context("give a preset name, or --list to see them")?;
            let n = n.context("give the size with --n N")?;
            let params = parse_params(&params)?;
            let mask = build_preset(&name, n, &params, MAX_N)?;
            let labels = preset_labels(&name, n, &params, MAX_N)?;
            let spec = preset_spec(&name).context("preset exists")?;
            let provenance = Provenance { preset: name, n, params: typed_params(spec.params, &params) };
            let file = MaskFile { provenance: Some(provenance), labels, ..MaskFile::new(mask) };
            print_out(&render(&file, format, encoding.into()));
            Ok(())
        }
        Command::Convert { input, to, encoding, output } => {
            let mask_file = read_mask(&input)?;
            let text = render(&mask_file, to, encoding.into());
            write_output(output.as_ref(), text.as_bytes())
        }
        Command::Export { input, to, block_size, output } => {
            let mask_file = read_mask(&input)?;
            let bytes = export(&mask_file, to, block_size)?;
            write_output(output.as_ref(), &bytes)
        }
        Command::Op { op, input, other, cycle, one_edge, format } => {
            let n = input.n;
            let input = read_mask(&input)?;
            let m = &input.mask;
            let second = || -> Result<BitMatrix> {
                let path = other.as_deref().context("this operation needs a second mask file")?;
                let b = read_mask(&Input { file: path.to_string(), n })?.mask;
                if b.n() != m.n() {
                    bail!("masks differ in size: {} and {}", m.n(), b.n());
                }
                Ok(b)
            };
            let out = match op {
                Op::Densify => Analysis::new(m).closure().clone(),
                Op::Sparsify => sparsify(
                    m,
                    SparsifyOptions {
                        classes: if cycle { ClassWiring::Cycle } else { ClassWiring::Clique },
                        covers: if one_edge { CoverWiring::OneEdge } else { CoverWiring::AllPairs },
                    },
                ),
                Op::Transpose => m.transpose(),
                Op::Not => m.not(),
                Op::And => m.and(&second()?),
                Op::Or => m.or(&second()?),
                Op::Xor => m.xor(&second()?),
            };
            let file = MaskFile { labels: input.labels, ..MaskFile::new(out) };
            print_out(&render(&file, format, Encoding::Auto));
            Ok(())
        }
    }
}

/// Writes to stdout, ignoring a closed pipe (`hasseflow ... | head`).
fn print_out(text: &str) {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// Writes to a file, or to stdout (ignoring a closed pipe).
fn write_output(path: Option<&PathBuf>, bytes: &[u8]) -> Result<()> {
    match path {
        Some(path) => std::fs::write(path, bytes).with_context(|| format!("cannot write {}", path.display())),
        None => {
            let _ = std::io::stdout().lock().write_all(bytes);
            Ok(())
        }
    }
}

/// What `export --to` produces: one of the core's exports (named and described by the core), or
/// a drawing only the CLI renders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ExportTarget {
    /// A core export ([`interop::export`]).
    Core(interop::ExportKind),
    /// The Hasse diagram as SVG, laid out by hasseflow-render.
    Svg,
    /// The grid as a PNG image.
    Png,
}

impl ExportTarget {
    /// Every target, in `--help` order: the core's kinds, then the drawings.
    const ALL: [ExportTarget; interop::ExportKind::ALL.len() + 2] = {
        let core = interop::ExportKind::ALL;
        let mut all = [ExportTarget::Svg; interop::ExportKind::ALL.len() + 2];
        let mut i = 0;
        while i < core.len() {
            all[i] = ExportTarget::Core(core[i]);
            i += 1;
        }
        all[core.len()] = ExportTarget::Svg;
        all[core.len() + 1] = ExportTarget::Png;
        all
    };

    /// The `--to` name.
    fn name(self) -> &'static str {
        match self {
            ExportTarget::Core(kind) => kind.name(),
            ExportTarget::Svg => "svg",
            ExportTarget::Png => "png",
        }
    }

    /// One line for `--help`.
    fn summary(self) -> &'static str {
        match self {
            ExportTarget::Core(kind) => kind.summary(),
            ExportTarget::Svg => "the Hasse diagram as an SVG drawing (bottom to top)",
            ExportTarget::Png => "the grid as a PNG image (row q, column k; dark = reads)",
        }
    }
}

impl ValueEnum for ExportTarget {
    fn value_variants<'a>() -> &'a [Self] {
        &ExportTarget::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.name()).help(self.summary()))
    }
}

/// The bytes of one export: the core's formats, plus the Hasse diagram as SVG (laid out by
/// hasseflow-render) and the grid as PNG.
fn export(file: &MaskFile, to: ExportTarget, block_size: usize) -> Result<Vec<u8>> {
    match to {
        ExportTarget::Core(kind) => Ok(interop::export(file, kind, block_size)?),
        ExportTarget::Svg => {
            let analysis = Analysis::new(&file.mask);
            let input = hasseflow_render::HasseInput::from_analysis(&analysis, file.labels.as_deref());
            let scene = hasseflow_render::layout(&input, &hasseflow_render::LayoutOptions::default());
            Ok(hasseflow_render::to_svg(&scene, &hasseflow_render::SvgTheme::light()).into_bytes())
        }
        ExportTarget::Png => png::grid_png(&file.mask),
    }
}

fn render(file: &MaskFile, format: OutFormat, encoding: Encoding) -> String {
    match format {
        OutFormat::Json => format::write_json(file, encoding),
        OutFormat::Text => format::write_grid(&file.mask),
    }
}

/// Reads a mask input (any format `core::interop::import_mask` tells apart) from a path or `-`,
/// refusing oversized input before reading it all.
fn read_mask(input: &Input) -> Result<MaskFile> {
    let bytes = read_limited(&input.file)?;
    let name = if input.file == "-" { "<stdin>" } else { &input.file };
    let size = input.n.map_or(interop::SizeHint::None, interop::SizeHint::Given);
    match interop::import_mask(&bytes, size) {
        Ok((file, _)) => Ok(file),
        Err(e @ interop::ImportError::Kernel(interop::KernelImportError::NeedsSize)) => {
            bail!("{name}: {e} (for a FlashAttention window: hasseflow convert {name} --n N)")
        }
        Err(e @ interop::ImportError::Format(_)) => bail!("{name}: invalid mask: {e}"),
        Err(e) => bail!("{name}: {e}"),
    }
}

/// Reads a path or `-`, at most one byte over the input limit (the parser reports the size).
fn read_limited(path: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = MAX_INPUT_BYTES as u64 + 1;
    if path == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes).context("cannot read standard input")?;
    } else {
        let f = std::fs::File::open(path).with_context(|| format!("cannot open {path}"))?;
        f.take(limit).read_to_end(&mut bytes).with_context(|| format!("cannot read {path}"))?;
    }
    Ok(bytes)
}

/// `KEY=VALUE` arguments into a map.
fn parse_params(args: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for arg in args {
        let Some((key, value)) = arg.split_once('=') else {
            bail!("parameter '{arg}' is not KEY=VALUE");
        };
        let (key, value) = (key.to_string(), value.to_string());
        if out.insert(key.clone(), value).is_some() {
            bail!("parameter '{key}' given twice");
        }
    }
    Ok(out)
}

/// Parameters for provenance, as JSON numbers and booleans where the kind says so.
fn typed_params(
    specs: &[hasseflow_core::presets::ParamSpec],
    given: &BTreeMap<String, String>,
) -> BTreeMap<String, Value> {
    given
        .iter()
        .map(|(k, v)| {
            let kind = specs.iter().find(|p| p.name == k).map(|p| p.kind);
            let value = match kind {
                Some(ParamKind::Int { .. }) => v.parse::<u64>().map(Value::from).unwrap_or_else(|_| json!(v)),
                Some(ParamKind::Fraction) => v.parse::<f64>().map(Value::from).unwrap_or_else(|_| json!(v)),
                Some(ParamKind::Bool) => v.parse::<bool>().map(Value::from).unwrap_or_else(|_| json!(v)),
                _ => json!(v),
            };
            (k.clone(), value)
        })
        .collect()
}

fn catalog_text() -> String {
    let mut out = String::new();
    for spec in CATALOG {
        out.push_str(&format!("{:<22} {}\n", spec.name, spec.formula));
        out.push_str(&format!("{:<22} positions: {}\n", "", spec.positions));
        for p in spec.params {
            let default = if p.default.is_empty() { "(empty)" } else { p.default };
            out.push_str(&format!("{:<22}   {}={} : {}\n", "", p.name, default, p.help));
        }
    }
    out
}

fn analyze(input: &Input, json_out: bool, with_first_reach: bool) -> Result<()> {
    let file = read_mask(input)?;
    let analysis = Analysis::new(&file.mask);
    let first_reach = with_first_reach.then(|| FirstReach::new(&file.mask));
    let text = if json_out {
        let mut v = report::analysis_json(&file, &analysis, first_reach.as_ref());
        if let Some((stack, mode)) = &file.stack {
            v["stack"] = report::stack_json(stack, *mode);
        }
        let mut s = serde_json::to_string(&v).context("serialising the report")?;
        s.push('\n');
        s
    } else {
        report::analysis_text(&file, &analysis, first_reach.as_ref())
    };
    print_out(&text);
    Ok(())
}

/// Refuses options that the chosen family does not take (rather than ignoring them).
fn check_derive_options(a: &DeriveArgs) -> Result<()> {
    let builtin = ["autoregressive", "block", "butterfly", "mae"];
    let fam = if builtin.contains(&a.family.as_str()) { a.family.as_str() } else { "file" };
    let given: [(&str, bool, &[&str]); 14] = [
        ("--n", a.n.is_some(), &["autoregressive", "block", "butterfly", "mae"]),
        ("--block", a.block.is_some(), &["block"]),
        ("--clean", !matches!(a.clean, InnerArg::Full), &["block"]),
        ("--query", !matches!(a.query, InnerArg::Full), &["block"]),
        ("--prompt", a.prompt != 0, &["block"]),
        ("--minimal", a.minimal, &["block", "butterfly"]),
        ("--interleaved", a.interleaved, &["block"]),
        ("--bidirectional", a.bidirectional, &["autoregressive"]),
        ("--pad", a.pad, &["autoregressive"]),
        ("--aggregate", !matches!(a.aggregate, AggregateArg::Neighbours), &["butterfly"]),
        ("--radius", a.radius != 1, &["butterfly"]),
        ("--span", a.span.is_some(), &["mae"]),
        ("--stride", a.stride != 0, &["mae"]),
        ("--causal-encoder", a.causal_encoder, &["mae"]),
    ];
    for (name, set, takes) in given {
        if set && !takes.contains(&fam) {
            let what = if fam == "file" { "a family file".to_string() } else { format!("family '{fam}'") };
            bail!("{what} does not take {name} (it applies to: {})", takes.join(", "));
        }
    }
    Ok(())
}

fn build_family(a: &DeriveArgs) -> Result<Family> {
    check_derive_options(a)?;
    let n = || a.n.context("give the number of tokens with --n N");
    let inner = |i: InnerArg| match i {
        InnerArg::Full => Inner::Full,
        InnerArg::Causal => Inner::Causal,
    };
    let family = match a.family.as_str() {
        "autoregressive" => {
            derive::autoregressive(AutoregressiveOptions { n: n()?, bidirectional: a.bidirectional, pad: a.pad })?
        }
        "block" => derive::block_generation(BlockOptions {
            n: n()?,
            block: a.block.context("give the block size with --block S")?,
            clean: inner(a.clean),
            query: inner(a.query),
            prompt: a.prompt,
            minimal: a.minimal,
            order: if a.interleaved { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped },
        })?,
        "butterfly" => derive::butterfly(ButterflyOptions {
            n: n()?,
            minimal: a.minimal,
            aggregate: match a.aggregate {
                AggregateArg::Neighbours => Aggregate::Neighbours(a.radius),
                AggregateArg::Mask => Aggregate::Mask,
            },
        })?,
        "mae" => derive::masked_autoencoding(MaeOptions {
            n: n()?,
            span: a.span.context("give the masked span length with --span S")?,
            stride: a.stride,
            causal_encoder: a.causal_encoder,
        })?,
        path => {
            let bytes = read_limited(path)?;
            let name = if path == "-" { "<stdin>" } else { path };
            derive::parse_family(&bytes).with_context(|| format!("{name}: invalid family"))?
        }
    };
    Ok(family)
}

fn derive_command(a: &DeriveArgs) -> Result<()> {
    let family = build_family(a)?;
    let d = derive::derive(&family)?;
    if let Some(path) = &a.mask_out {
        let mask = if a.sparse { d.sparse() } else { d.dense() };
        // Mask files cap labels at MAX_LABEL_CHARS (long aggregated tokens are shortened).
        let labels = d
            .position_texts()
            .into_iter()
            .map(|l| {
                if l.chars().count() > MAX_LABEL_CHARS {
                    l.chars().take(MAX_LABEL_CHARS - 1).chain(['…']).collect()
                } else {
                    l
                }
            })
            .collect();
        // Built-in families reproduce presets: record the preset only where it rebuilds this mask,
        // so exports (FlexAttention) can use its closed form.
        let provenance = if a.sparse { None } else { derived_provenance(a, mask) };
        let file = MaskFile { labels: Some(labels), provenance, ..MaskFile::new(mask.clone()) };
        std::fs::write(path, format::write_json(&file, Encoding::Auto))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let text = if a.json {
        // The object the app's Designer exports too (`Derivation::to_json`).
        let mut v = d.to_json();
        if a.tasks {
            v["task_diagrams"] = task_diagrams_json(&d);
        }
        let mut s = serde_json::to_string(&v).context("serialising the report")?;
        s.push('\n');
        s
    } else {
        d.render_text()
    };
    print_out(&text);
    Ok(())
}

/// The preset a built-in family's dense mask equals, if it does (checked by rebuilding it).
fn derived_provenance(a: &DeriveArgs, mask: &BitMatrix) -> Option<Provenance> {
    let inner = |i: InnerArg| match i {
        InnerArg::Full => "full",
        InnerArg::Causal => "causal",
    };
    let (preset, n, params) = match a.family.as_str() {
        "autoregressive" if !a.bidirectional => ("causal", mask.n(), BTreeMap::new()),
        "block" => (
            "block-two-stream",
            a.n?,
            BTreeMap::from([
                ("s".to_string(), json!(a.block?)),
                ("clean".to_string(), json!(inner(a.clean))),
                ("query".to_string(), json!(inner(a.query))),
                ("prompt".to_string(), json!(a.prompt)),
                ("drop_last".to_string(), json!(a.minimal)),
                ("order".to_string(), json!(if a.interleaved { "interleaved" } else { "grouped" })),
            ]),
        ),
        "butterfly" => ("butterfly", a.n?, BTreeMap::from([("minimal".to_string(), json!(a.minimal))])),
        _ => return None,
    };
    interop::provenance_if_matches(mask, Provenance { preset: preset.into(), n, params })
}

/// Each task's Hasse diagram and the content of its labelled positions, as JSON.
fn task_diagrams_json(d: &derive::Derivation) -> Value {
    let f = d.family();
    let text = |ids: &[u32]| ids.iter().map(|&i| f.input(i).to_string()).collect::<Vec<_>>();
    let tasks: Vec<Value> = d
        .diagrams()
        .iter()
        .zip(f.tasks())
        .enumerate()
        .map(|(t, (diag, task))| {
            let nodes: Vec<Value> = (0..diag.node_count())
                .map(|v| json!({"inputs": text(diag.node_inputs(v)), "merged": d.node_class()[t][v]}))
                .collect();
            let labelled: Vec<Value> = task
                .labels
                .iter()
                .enumerate()
                .filter_map(|(p, l)| {
                    l.map(|l| {
                        json!({
                            "position": p,
                            "input": f.input(task.inputs[p]).to_string(),
                            "label": f.input(l).to_string(),
                            "content": text(&d.task_content(t, p)),
                        })
                    })
                })
                .collect();
            json!({
                "name": task.name,
                "padding": task.padding,
                "nodes": nodes,
                "hasse_edges": diag.hasse_edges(),
                "labelled": labelled,
            })
        })
        .collect();
    Value::Array(tasks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_targets_are_the_core_kinds_then_the_drawings_with_distinct_names() {
        let core: Vec<_> = interop::ExportKind::ALL.iter().map(|&k| ExportTarget::Core(k)).collect();
        assert_eq!(&ExportTarget::ALL[..core.len()], &core[..]);
        assert_eq!(&ExportTarget::ALL[core.len()..], &[ExportTarget::Svg, ExportTarget::Png]);
        let mut names: Vec<_> = ExportTarget::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ExportTarget::ALL.len());
        for t in ExportTarget::ALL {
            assert_eq!(ExportTarget::from_str(t.name(), false), Ok(t));
        }
    }
}
