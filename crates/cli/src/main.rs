//! `hasseflow`: the command line over hasseflow-core. Parsing arguments, reading files and
//! printing live here; every computation is the core's.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand, ValueEnum};
use hasseflow_core::format::{self, Encoding, MAX_INPUT_BYTES, MAX_N, MaskFile, Provenance};
use hasseflow_core::presets::{CATALOG, ParamKind, build_preset, preset_spec};
use hasseflow_core::{Analysis, BitMatrix, ClassWiring, CoverWiring, FirstReach, SparsifyOptions, sparsify};
use serde_json::{Value, json};

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
        /// Mask file (JSON or text grid), or - for standard input.
        file: String,
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
    /// Convert a mask between the JSON format and text grids.
    Convert {
        /// Input file (JSON or text grid), or - for standard input.
        file: String,
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
        /// Mask file, or - for standard input.
        file: String,
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
        Command::Analyze { file, json, first_reach } => analyze(&file, json, first_reach),
        Command::Preset { list: true, .. } => {
            print_out(&catalog_text());
            Ok(())
        }
        Command::Preset { name, n, format, encoding, params, .. } => {
            let name = name.context("give a preset name, or --list to see them")?;
            let n = n.context("give the size with --n N")?;
            let params = parse_params(&params)?;
            let mask = build_preset(&name, n, &params, MAX_N)?;
            let spec = preset_spec(&name).context("preset exists")?;
            let provenance = Provenance { preset: name, n, params: typed_params(spec.params, &params) };
            let file = MaskFile { provenance: Some(provenance), ..MaskFile::new(mask) };
            print_out(&render(&file, format, encoding.into()));
            Ok(())
        }
        Command::Convert { file, to, encoding, output } => {
            let mask_file = read_mask(&file)?;
            let text = render(&mask_file, to, encoding.into());
            match output {
                Some(path) => std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display())),
                None => {
                    print_out(&text);
                    Ok(())
                }
            }
        }
        Command::Op { op, file, other, cycle, one_edge, format } => {
            let input = read_mask(&file)?;
            let m = &input.mask;
            let second = || -> Result<BitMatrix> {
                let path = other.as_deref().context("this operation needs a second mask file")?;
                let b = read_mask(path)?.mask;
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

fn render(file: &MaskFile, format: OutFormat, encoding: Encoding) -> String {
    match format {
        OutFormat::Json => format::write_json(file, encoding),
        OutFormat::Text => format::write_grid(&file.mask),
    }
}

/// Reads a mask file from a path or `-`, refusing oversized input before reading it all.
fn read_mask(path: &str) -> Result<MaskFile> {
    let mut bytes = Vec::new();
    let limit = MAX_INPUT_BYTES as u64 + 1;
    if path == "-" {
        std::io::stdin().lock().take(limit).read_to_end(&mut bytes).context("cannot read standard input")?;
    } else {
        let f = std::fs::File::open(path).with_context(|| format!("cannot open {path}"))?;
        f.take(limit).read_to_end(&mut bytes).with_context(|| format!("cannot read {path}"))?;
    }
    let name = if path == "-" { "<stdin>" } else { path };
    format::parse_mask_file(&bytes).with_context(|| format!("{name}: invalid mask"))
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

fn analyze(path: &str, json_out: bool, with_first_reach: bool) -> Result<()> {
    let file = read_mask(path)?;
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
