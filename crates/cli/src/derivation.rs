//! The `derive` subcommand: a built-in family's options (the core's [`BuiltinFamily`]) or a family
//! file → the core's derivation (THEORY §5-6), printed as text or JSON, the merged mask optionally
//! written out (the core's mask file of the derivation).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use hasseflow_core::derive::{
    self, Aggregate, AutoregressiveOptions, BlockOptions, BuiltinFamily, ButterflyOptions, MaeOptions,
};
use hasseflow_core::format::{self, Encoding};
use hasseflow_core::presets::{Inner, TwoStreamOrder};
use serde_json::{Value, json};

use crate::{print_out, read_limited};

#[derive(clap::Args)]
pub(crate) struct DeriveArgs {
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
pub(crate) enum InnerArg {
    /// Every token of the block reads every other.
    Full,
    /// A token reads the tokens of its block up to itself.
    Causal,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum AggregateArg {
    /// w'_k built from the neighbours within --radius.
    Neighbours,
    /// A plain mask token m@k.
    Mask,
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

/// The built-in family the arguments name, with their options (`None`: a family file).
fn builtin(a: &DeriveArgs) -> Result<Option<BuiltinFamily>> {
    check_derive_options(a)?;
    let n = || a.n.context("give the number of tokens with --n N");
    let inner = |i: InnerArg| match i {
        InnerArg::Full => Inner::Full,
        InnerArg::Causal => Inner::Causal,
    };
    Ok(Some(match a.family.as_str() {
        "autoregressive" => {
            BuiltinFamily::Autoregressive(AutoregressiveOptions { n: n()?, bidirectional: a.bidirectional, pad: a.pad })
        }
        "block" => BuiltinFamily::Block(BlockOptions {
            n: n()?,
            block: a.block.context("give the block size with --block S")?,
            clean: inner(a.clean),
            query: inner(a.query),
            prompt: a.prompt,
            minimal: a.minimal,
            order: if a.interleaved { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped },
        }),
        "butterfly" => BuiltinFamily::Butterfly(ButterflyOptions {
            n: n()?,
            minimal: a.minimal,
            aggregate: match a.aggregate {
                AggregateArg::Neighbours => Aggregate::Neighbours(a.radius),
                AggregateArg::Mask => Aggregate::Mask,
            },
        }),
        "mae" => BuiltinFamily::Mae(MaeOptions {
            n: n()?,
            span: a.span.context("give the masked span length with --span S")?,
            stride: a.stride,
            causal_encoder: a.causal_encoder,
        }),
        _ => return Ok(None),
    }))
}

pub(crate) fn derive_command(a: &DeriveArgs) -> Result<()> {
    let spec = builtin(a)?;
    let family = match &spec {
        Some(spec) => spec.build()?,
        None => {
            let bytes = read_limited(&a.family, format::MAX_INPUT_BYTES)?;
            let name = if a.family == "-" { "<stdin>" } else { &a.family };
            derive::parse_family(&bytes).with_context(|| format!("{name}: invalid family"))?
        }
    };
    let d = derive::derive(&family)?;
    if let Some(path) = &a.mask_out {
        // Labels = inputs (cut to the mask file's limit); a built-in family's dense mask also
        // records the preset it rebuilds, so exports (FlexAttention) can use its closed form.
        let file = match &spec {
            Some(spec) => spec.mask_file(&d, a.sparse),
            None => d.mask_file(a.sparse),
        };
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
