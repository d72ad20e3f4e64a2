//! The `derive` subcommand: a built-in family's options (the core's [`BuiltinFamily`]) or a family
//! file → the core's derivation (THEORY §5-6), printed as text or JSON, the merged mask optionally
//! written out (the core's mask file of the derivation).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches};
use hasseflow_core::derive::{self, BuiltinFamily, FAMILIES, FamilyParam, family_entry};
use hasseflow_core::format::{self, Encoding};
use hasseflow_core::presets::ParamKind;
use serde_json::{Value, json};

use crate::{param_line, parse_params, print_out, read_limited};

#[derive(clap::Args)]
pub(crate) struct DeriveArgs {
    /// autoregressive, block, butterfly, mae, or a family file (JSON; - for standard input).
    family: String,
    #[command(flatten)]
    params: FamilyFlags,
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

/// The built-in families' parameters as they were given: one flag per parameter name of the
/// core's table ([`FAMILIES`]; `causal_encoder` is `--causal-encoder`), and `--param KEY=VALUE`.
pub(crate) struct FamilyFlags {
    /// (parameter, value) of each flag given.
    flags: Vec<(&'static str, String)>,
    /// The `--param` texts.
    params: Vec<String>,
}

/// Every parameter name of the table once, in table order.
fn flag_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Vec::new();
    for p in FAMILIES.iter().flat_map(|e| e.params) {
        if !names.contains(&p.spec.name) {
            names.push(p.spec.name);
        }
    }
    names
}

/// The flag of parameter `name`, its help naming the families that take it.
fn flag_arg(name: &'static str) -> Arg {
    let takers: Vec<(&str, &FamilyParam)> = FAMILIES
        .iter()
        .flat_map(|e| e.params.iter().filter(|p| p.spec.name == name).map(move |p| (e.name, p)))
        .collect();
    let help = if takers.windows(2).all(|w| w[0].1.spec.help == w[1].1.spec.help) {
        let families = takers.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", ");
        format!("{families}: {}", takers.first().map_or("", |(_, p)| p.spec.help))
    } else {
        takers.iter().map(|(f, p)| format!("{f}: {}", p.spec.help)).collect::<Vec<_>>().join("; ")
    };
    let arg = Arg::new(name).long(name.replace('_', "-")).help(help);
    match takers.first().map(|(_, p)| p.spec.kind) {
        Some(ParamKind::Bool) => {
            arg.num_args(0..=1).require_equals(true).default_missing_value("true").value_name("BOOL")
        }
        Some(ParamKind::Choice(options)) => arg.value_parser(PossibleValuesParser::new(options)),
        Some(ParamKind::Int { .. }) => arg.value_name("N"),
        _ => arg,
    }
}

/// The families and their parameters, from the table: `derive --help`'s closing text.
fn families_text() -> String {
    let mut out = String::from("Built-in families and their parameters (flags, or --param KEY=VALUE):\n");
    for entry in FAMILIES {
        out.push_str(&format!("{:<22} {}\n", entry.name, entry.title));
        for p in entry.params {
            out.push_str(&param_line(&p.spec, if p.required { "(required)" } else { p.spec.default }));
        }
    }
    out
}

impl clap::Args for FamilyFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let flags = flag_names().into_iter().map(flag_arg);
        cmd.args(flags)
            .arg(
                Arg::new("param")
                    .long("param")
                    .value_name("KEY=VALUE")
                    .action(ArgAction::Append)
                    .help("A built-in family's parameter by its name (repeatable): --param block=2"),
            )
            .after_help(families_text())
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl clap::FromArgMatches for FamilyFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let flags =
            flag_names().into_iter().filter_map(|name| m.get_one::<String>(name).map(|v| (name, v.clone()))).collect();
        let params = m.get_many::<String>("param").map(|v| v.cloned().collect()).unwrap_or_default();
        Ok(FamilyFlags { flags, params })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl FamilyFlags {
    /// The parameters given, flags and `--param`s together.
    fn given(&self) -> Result<BTreeMap<String, String>> {
        let mut given = parse_params(&self.params)?;
        for (name, value) in &self.flags {
            if given.insert((*name).to_string(), value.clone()).is_some() {
                bail!("parameter '{name}' given twice (--{} and --param)", name.replace('_', "-"));
            }
        }
        Ok(given)
    }
}

/// The built-in family the arguments name, with their parameters (`None`: a family file).
fn builtin(a: &DeriveArgs) -> Result<Option<BuiltinFamily>> {
    let given = a.params.given()?;
    if family_entry(&a.family).is_none() {
        if let Some(name) = given.keys().next() {
            bail!("a family file takes no family parameters ('{name}' given)");
        }
        return Ok(None);
    }
    Ok(Some(BuiltinFamily::from_params(&a.family, &given)?))
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
