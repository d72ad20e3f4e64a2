//! The designer's part of the store: which task family to derive ([`FamilySpec`]), the result
//! of the derivation pipeline ([`Design`], computed once per request by the reducer), and the
//! derived task as JSON. Plain Rust, tested natively with the rest of the store.

use hasseflow_core::BitMatrix;
use hasseflow_core::derive::{
    self, Aggregate, AutoregressiveOptions, BlockOptions, ButterflyOptions, Derivation, Family, FamilyError, MaeOptions,
};
use hasseflow_core::format::MAX_LABEL_CHARS;
use hasseflow_core::presets::{Inner, TwoStreamOrder};

/// Largest `n` the designer accepts for a built-in family (the merged task of butterfly `n`
/// has `3n` positions; block generation `2n`).
pub const MAX_DESIGN_N: usize = 256;
/// Most tasks drawn as small multiples; the rest are counted in a note.
pub const MAX_TASKS_DRAWN: usize = 24;

/// Which view the app shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// The mask editor (grid, layers, order view).
    Editor,
    /// The designer: from a task family to its merged mask.
    Designer,
    /// Real models' attention at long contexts (the structured reach engine).
    Models,
}

/// A family to derive: a built-in family with its options, or a user family file.
#[derive(Clone, Debug, PartialEq)]
pub enum FamilySpec {
    /// [`derive::autoregressive`].
    Autoregressive {
        /// Tokens.
        n: usize,
        /// Each task one bidirectional block.
        bidirectional: bool,
        /// Keep the unread last token as padding.
        pad: bool,
    },
    /// [`derive::block_generation`] with the options of THEORY §6.
    Block {
        /// Tokens.
        n: usize,
        /// Block size `s`.
        block: usize,
        /// Clean prompt tokens.
        prompt: usize,
        /// Drop the last clean block (read by no task).
        minimal: bool,
        /// Causal attention inside clean blocks (and the prompt) instead of full.
        clean_causal: bool,
        /// Causal attention inside mask blocks instead of full.
        query_causal: bool,
        /// Interleaved order `[K_0 Q_0 K_1 Q_1 ...]` instead of grouped `[w | m]`.
        interleaved: bool,
    },
    /// [`derive::butterfly`] (bidirectional fully supervised).
    Butterfly {
        /// Tokens.
        n: usize,
        /// Leave out `F_{n-1}` and `B_0`.
        minimal: bool,
        /// `P_k` holds a mask token `m@k` instead of the neighbours' aggregate.
        mask_token: bool,
        /// The aggregate `w'_k` is built from the neighbours within this distance (≥ 1).
        radius: usize,
    },
    /// [`derive::masked_autoencoding`].
    Mae {
        /// Tokens.
        n: usize,
        /// Masked span length.
        span: usize,
        /// Distance between span starts (0: the span).
        stride: usize,
        /// Causal encoder instead of bidirectional.
        causal_encoder: bool,
    },
    /// A `hasseflow-family` JSON file (docs/FAMILY_FORMAT.md).
    File {
        /// File name, for messages.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
}

impl FamilySpec {
    /// The family in a few words (`butterfly n=4`).
    pub fn describe(&self) -> String {
        match self {
            FamilySpec::Autoregressive { n, .. } => format!("autoregressive n={n}"),
            FamilySpec::Block { n, block, .. } => format!("block generation n={n} s={block}"),
            FamilySpec::Butterfly { n, .. } => format!("butterfly n={n}"),
            FamilySpec::Mae { n, span, .. } => format!("MAE n={n} span={span}"),
            FamilySpec::File { name, .. } => format!("family file {name}"),
        }
    }

    /// Builds the family with the core's constructors or parser.
    ///
    /// # Errors
    /// The core's [`FamilyError`], or `n` above [`MAX_DESIGN_N`].
    pub fn build(&self) -> Result<Family, FamilyError> {
        let n = match self {
            FamilySpec::Autoregressive { n, .. }
            | FamilySpec::Block { n, .. }
            | FamilySpec::Butterfly { n, .. }
            | FamilySpec::Mae { n, .. } => *n,
            FamilySpec::File { .. } => 0,
        };
        if n > MAX_DESIGN_N {
            return Err(FamilyError::Invalid {
                at: self.describe(),
                what: format!("the designer handles n up to {MAX_DESIGN_N} (the CLI has no such limit)"),
            });
        }
        match self {
            FamilySpec::Autoregressive { n, bidirectional, pad } => {
                derive::autoregressive(AutoregressiveOptions { n: *n, bidirectional: *bidirectional, pad: *pad })
            }
            FamilySpec::Block { n, block, prompt, minimal, clean_causal, query_causal, interleaved } => {
                let inner = |causal: bool| if causal { Inner::Causal } else { Inner::Full };
                derive::block_generation(BlockOptions {
                    prompt: *prompt,
                    minimal: *minimal,
                    clean: inner(*clean_causal),
                    query: inner(*query_causal),
                    order: if *interleaved { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped },
                    ..BlockOptions::new(*n, *block)
                })
            }
            FamilySpec::Butterfly { n, minimal, mask_token, radius } => derive::butterfly(ButterflyOptions {
                n: *n,
                minimal: *minimal,
                aggregate: if *mask_token { Aggregate::Mask } else { Aggregate::Neighbours(*radius) },
            }),
            FamilySpec::Mae { n, span, stride, causal_encoder } => derive::masked_autoencoding(MaeOptions {
                n: *n,
                span: *span,
                stride: *stride,
                causal_encoder: *causal_encoder,
            }),
            FamilySpec::File { bytes, .. } => derive::parse_family(bytes),
        }
    }
}

/// Largest family file whose text the designer's autosave keeps.
pub const MAX_SAVED_FAMILY_BYTES: usize = 512 * 1024;

impl FamilySpec {
    /// The spec as a small JSON object, for the designer's autosave (`None` for a family file
    /// that is not UTF-8 or is over [`MAX_SAVED_FAMILY_BYTES`]).
    pub fn to_json(&self) -> Option<String> {
        use serde_json::json;
        let v = match self {
            FamilySpec::Autoregressive { n, bidirectional, pad } => {
                json!({"family": "autoregressive", "n": n, "bidirectional": bidirectional, "pad": pad})
            }
            FamilySpec::Block { n, block, prompt, minimal, clean_causal, query_causal, interleaved } => json!({
                "family": "block", "n": n, "block": block, "prompt": prompt, "minimal": minimal,
                "clean_causal": clean_causal, "query_causal": query_causal, "interleaved": interleaved
            }),
            FamilySpec::Butterfly { n, minimal, mask_token, radius } => json!({
                "family": "butterfly", "n": n, "minimal": minimal, "mask_token": mask_token, "radius": radius
            }),
            FamilySpec::Mae { n, span, stride, causal_encoder } => json!({
                "family": "mae", "n": n, "span": span, "stride": stride, "causal_encoder": causal_encoder
            }),
            FamilySpec::File { name, bytes } => {
                let text = std::str::from_utf8(bytes).ok().filter(|_| bytes.len() <= MAX_SAVED_FAMILY_BYTES)?;
                json!({"family": "file", "name": name, "text": text})
            }
        };
        Some(v.to_string())
    }

    /// Reads what [`FamilySpec::to_json`] wrote.
    ///
    /// # Errors
    /// A sentence naming the missing or mistyped field.
    pub fn from_json(text: &str) -> Result<FamilySpec, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON ({e})"))?;
        let num = |k: &str| {
            v.get(k).and_then(serde_json::Value::as_u64).map(|x| x as usize).ok_or_else(|| format!("{k} is missing"))
        };
        let flag = |k: &str| v.get(k).and_then(serde_json::Value::as_bool).ok_or_else(|| format!("{k} is missing"));
        let text_of = |k: &str| v.get(k).and_then(serde_json::Value::as_str).ok_or_else(|| format!("{k} is missing"));
        Ok(match text_of("family")? {
            "autoregressive" => {
                FamilySpec::Autoregressive { n: num("n")?, bidirectional: flag("bidirectional")?, pad: flag("pad")? }
            }
            "block" => FamilySpec::Block {
                n: num("n")?,
                block: num("block")?,
                prompt: num("prompt")?,
                minimal: flag("minimal")?,
                clean_causal: flag("clean_causal")?,
                query_causal: flag("query_causal")?,
                interleaved: flag("interleaved")?,
            },
            "butterfly" => FamilySpec::Butterfly {
                n: num("n")?,
                minimal: flag("minimal")?,
                mask_token: flag("mask_token")?,
                radius: num("radius")?,
            },
            "mae" => FamilySpec::Mae {
                n: num("n")?,
                span: num("span")?,
                stride: num("stride")?,
                causal_encoder: flag("causal_encoder")?,
            },
            "file" => {
                FamilySpec::File { name: text_of("name")?.to_string(), bytes: text_of("text")?.as_bytes().to_vec() }
            }
            other => return Err(format!("unknown family {other:?}")),
        })
    }
}

/// One derivation and what the views draw from it, computed once by the reducer.
#[derive(Debug)]
pub struct Design {
    /// What was derived.
    pub spec: FamilySpec,
    /// The pipeline's result (per-task diagrams, merged task, masks, report).
    pub derivation: Derivation,
    /// Input text of every position of every task.
    pub task_inputs: Vec<Vec<String>>,
    /// Label text of every position of every task (`None`: unlabelled).
    pub task_labels: Vec<Vec<Option<String>>>,
    /// The tasks each merged node serves (has a node in).
    pub served: Vec<Vec<usize>>,
    /// Input text of each merged position (the position labels in the editor).
    pub positions: Vec<String>,
    /// Label text of each merged position.
    pub labels: Vec<Option<String>>,
    /// Members (positions) of each merged node.
    pub members: Vec<Vec<usize>>,
    /// `L*` of the dense and of the sparse mask.
    pub depth: (usize, usize),
    /// Milliseconds building the family and deriving took (injected clock).
    pub millis: f64,
}

impl Design {
    /// Builds and derives `spec`, timing it with `clock`.
    ///
    /// # Errors
    /// The family's or the pipeline's error, in words.
    pub fn compute(spec: FamilySpec, clock: fn() -> f64) -> Result<Design, String> {
        let start = clock();
        let family = spec.build().map_err(|e| e.to_string())?;
        let d = derive::derive(&family).map_err(|e| e.to_string())?;
        let f = d.family();
        let text = |i| f.input(i).to_string();
        let task_inputs = f.tasks().iter().map(|t| t.inputs.iter().map(|&i| text(i)).collect()).collect();
        let task_labels = f.tasks().iter().map(|t| t.labels.iter().map(|l| l.map(text)).collect()).collect();
        let mut served = vec![Vec::new(); d.nodes().len()];
        for (t, classes) in d.node_class().iter().enumerate() {
            for &c in classes {
                if served[c].last() != Some(&t) {
                    served[c].push(t);
                }
            }
        }
        let mut members = vec![Vec::new(); d.nodes().len()];
        for (p, &c) in d.position_node().iter().enumerate() {
            members[c].push(p);
        }
        let depth = (d.report().depth_dense, d.report().depth_sparse);
        Ok(Design {
            spec,
            positions: d.position_texts(),
            labels: d.label_texts(),
            task_inputs,
            task_labels,
            served,
            members,
            depth,
            derivation: d,
            millis: clock() - start,
        })
    }

    /// The dense mask `M*`.
    pub fn dense(&self) -> &BitMatrix {
        self.derivation.dense()
    }

    /// A short name of task `t`: its name when at most 8 characters, else `#t`.
    pub fn task_short(&self, t: usize) -> String {
        let name = &self.derivation.family().tasks()[t].name;
        if name.chars().count() <= 8 { name.clone() } else { format!("#{t}") }
    }

    /// The merged node's tasks in words (short task names, at most four, then a count).
    pub fn served_text(&self, node: usize) -> String {
        let s = &self.served[node];
        let total = self.derivation.family().tasks().len();
        if s.len() == total && total > 1 {
            return format!("all {total} tasks");
        }
        let mut parts: Vec<String> = s.iter().take(4).map(|&t| self.task_short(t)).collect();
        if s.len() > 4 {
            parts.push(format!("+{}", s.len() - 4));
        }
        parts.join(",")
    }

    /// Position labels for the editor: the inputs, shortened to the mask file's label limit.
    pub fn editor_labels(&self) -> Vec<String> {
        self.positions
            .iter()
            .map(|l| {
                if l.chars().count() > MAX_LABEL_CHARS {
                    l.chars().take(MAX_LABEL_CHARS - 1).chain(['…']).collect()
                } else {
                    l.clone()
                }
            })
            .collect()
    }

    /// The derived task as one JSON object: the same object `hasseflow derive --json` prints (the
    /// report's fields plus `mask`, `sparse_mask`, `positions` (inputs), `labels`, `n`, `nodes`,
    /// `edges`).
    pub fn to_json(&self) -> String {
        // One core function builds the object for both, so they cannot drift apart.
        let mut s = serde_json::to_string_pretty(&self.derivation.to_json()).unwrap_or_default();
        s.push('\n');
        s
    }
}
