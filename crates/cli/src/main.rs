//! `hasseflow`: the command line over hasseflow-core. Parsing arguments, reading files and
//! printing live here; every computation is the core's.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use hasseflow_core::format::{Encoding, MAX_INPUT_BYTES, MAX_N, MaskFile};
use hasseflow_core::interop;
use hasseflow_core::presets::{CATALOG, ParamSpec, build_preset, preset_labels, preset_provenance};
use hasseflow_core::{Analysis, BitMatrix, ClassWiring, CoverWiring, SparsifyOptions, sparsify};

mod analyze;
mod derivation;
mod export;
mod flow;
mod model;
mod png;
mod progress;
mod report;

use derivation::DeriveArgs;
use export::{ExportTarget, export, render};

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
        /// A mask_mod on the structured engine with this many layers (used by itself above
        /// n = 8192, up to 16M positions: the depth that reaches the limit, up to 64).
        #[arg(long)]
        layers: Option<usize>,
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
    /// For a mask_mod: the batch index `b` it is evaluated at (create_mask's `[b, h]`).
    #[arg(long, default_value_t = 0)]
    batch: u64,
    /// For a mask_mod: the head index `h` it is evaluated at.
    #[arg(long, default_value_t = 0)]
    head: u64,
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
        Command::Derive(args) => derivation::derive_command(&args),
        Command::Flow(args) => flow::flow_command(&args),
        Command::Model(args) => model::model_command(&args),
        Command::Analyze { input, json, first_reach, layers } => analyze::analyze(&input, json, first_reach, layers),
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
            let provenance = preset_provenance(&name, n, &params);
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
                let b = read_mask(&Input { file: path.to_string(), n, batch: 0, head: 0 })?.mask;
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

/// Reads a mask input (any format `core::interop::import_mask` tells apart) from a path or `-`,
/// refusing oversized input before reading it all.
fn read_mask(input: &Input) -> Result<MaskFile> {
    let bytes = read_limited(&input.file, MAX_INPUT_BYTES)?;
    let name = if input.file == "-" { "<stdin>" } else { &input.file };
    let size = input.n.map_or(interop::SizeHint::None, interop::SizeHint::Given);
    match interop::import_mask_at(&bytes, size, input.batch, input.head) {
        Ok((file, interop::Source::MaskMod { report, .. })) => {
            // What the import did besides the mask goes to stderr, so stdout stays the mask.
            if report.uses_batch || report.uses_head {
                let which = match (report.uses_batch, report.uses_head) {
                    (true, true) => "b and h",
                    (true, false) => "b",
                    _ => "h",
                };
                eprintln!(
                    "note: {name}: `{}` reads {which}; evaluated at b = {}, h = {} (--batch/--head pick another)",
                    report.name, input.batch, input.head
                );
            }
            for (line, col, why) in &report.skipped {
                eprintln!("note: {name}: skipped line {line}, column {col}: {why}");
            }
            Ok(file)
        }
        Ok((file, _)) => Ok(file),
        Err(e @ interop::ImportError::Kernel(interop::KernelImportError::NeedsSize)) => {
            bail!("{name}: {e} (for a FlashAttention window: hasseflow convert {name} --n N)")
        }
        Err(e @ interop::ImportError::Format(_)) => bail!("{name}: invalid mask: {e}"),
        Err(e) => bail!("{name}: {e}"),
    }
}

/// Reads a path or `-`, at most one byte over `max` (the parser reports the size).
pub(crate) fn read_limited(path: &str, max: usize) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let limit = max as u64 + 1;
    if path == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes).context("cannot read standard input")?;
    } else {
        let f = std::fs::File::open(path).with_context(|| format!("cannot open {path}"))?;
        f.take(limit).read_to_end(&mut bytes).with_context(|| format!("cannot read {path}"))?;
    }
    Ok(bytes)
}

/// `KEY=VALUE` arguments into a map.
pub(crate) fn parse_params(args: &[String]) -> Result<BTreeMap<String, String>> {
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

fn catalog_text() -> String {
    let mut out = String::new();
    for spec in CATALOG {
        out.push_str(&format!("{:<22} {}\n", spec.name, spec.formula));
        out.push_str(&format!("{:<22} positions: {}\n", "", spec.positions));
        for p in spec.params {
            out.push_str(&param_line(p, p.default));
        }
    }
    out
}

/// A catalog line of parameter `p` with its `default` (text; empty: `(empty)`): `name=default :
/// help`, indented under its preset or family.
pub(crate) fn param_line(p: &ParamSpec, default: &str) -> String {
    let default = if default.is_empty() { "(empty)" } else { default };
    format!("{:<22}   {}={} : {}\n", "", p.name, default, p.help)
}
