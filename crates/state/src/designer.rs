//! The designer's part of the store: which task family to derive ([`FamilySpec`]), the result
//! of the derivation pipeline ([`Design`], computed once per request by the reducer), and the
//! derived task as JSON. Plain Rust, tested natively with the rest of the store.

use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_core::derive::{self, BuiltinFamily, Derivation, Family, FamilyError};
use hasseflow_core::format::MaskFile;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Action, AppState, View};
use hasseflow_core::share;

/// Largest `n` the designer accepts for a built-in family (the merged task of butterfly `n`
/// has `3n` positions; block generation `2n`).
pub const MAX_DESIGN_N: usize = 256;
/// Most tasks drawn as small multiples; the rest are counted in a note.
pub const MAX_TASKS_DRAWN: usize = 24;

/// A family to derive: a built-in family with its options (the core's [`BuiltinFamily`]), or a
/// user family file.
#[derive(Clone, Debug, PartialEq)]
pub enum FamilySpec {
    /// A built-in family.
    Builtin(BuiltinFamily),
    /// A `hasseflow-family` JSON file (docs/FAMILY_FORMAT.md).
    File {
        /// File name, for messages.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
}

impl From<BuiltinFamily> for FamilySpec {
    fn from(b: BuiltinFamily) -> Self {
        FamilySpec::Builtin(b)
    }
}

/// Largest family file whose text the designer's autosave keeps.
pub const MAX_SAVED_FAMILY_BYTES: usize = 512 * 1024;

/// A family file as the autosave keeps it: `{"family": "file", "name": ..., "text": ...}` (a plain
/// struct, not a tagged enum: [`FamilySpec::from_json`] reads the tag first, and serde's tagged
/// enums cost a buffering deserializer in the wasm).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedFile {
    family: String,
    name: String,
    text: String,
}

impl FamilySpec {
    /// The family in a few words (`butterfly n=4`).
    pub fn describe(&self) -> String {
        match self {
            FamilySpec::Builtin(b) => b.describe(),
            FamilySpec::File { name, .. } => format!("family file {name}"),
        }
    }

    /// Builds the family with the core's constructors or parser.
    ///
    /// # Errors
    /// The core's [`FamilyError`], or `n` above [`MAX_DESIGN_N`].
    pub fn build(&self) -> Result<Family, FamilyError> {
        match self {
            FamilySpec::Builtin(b) if b.n() > MAX_DESIGN_N => Err(FamilyError::Invalid {
                at: self.describe(),
                what: format!("the designer handles n up to {MAX_DESIGN_N} (the CLI has no such limit)"),
            }),
            FamilySpec::Builtin(b) => b.build(),
            FamilySpec::File { bytes, .. } => derive::parse_family(bytes),
        }
    }

    /// The dense mask of `d` (a derivation of this family) as a mask file: the core's, labels and
    /// provenance as `hasseflow derive --mask-out` writes them.
    pub fn mask_file(&self, d: &Derivation) -> MaskFile {
        match self {
            FamilySpec::Builtin(b) => b.mask_file(d, false),
            FamilySpec::File { .. } => d.mask_file(false),
        }
    }

    /// The spec as a small JSON object, for the designer's autosave and links: a built-in family
    /// as the core serialises it, a file as `{"family": "file", "name", "text"}` (`None` for a
    /// family file that is not UTF-8 or is over [`MAX_SAVED_FAMILY_BYTES`]).
    pub fn to_json(&self) -> Option<String> {
        match self {
            FamilySpec::Builtin(b) => serde_json::to_string(b).ok(),
            FamilySpec::File { name, bytes } => {
                let text = std::str::from_utf8(bytes).ok().filter(|_| bytes.len() <= MAX_SAVED_FAMILY_BYTES)?;
                serde_json::to_string(&SavedFile { family: "file".into(), name: name.clone(), text: text.into() }).ok()
            }
        }
    }

    /// Reads what [`FamilySpec::to_json`] wrote, and the flat shape of built-in families that
    /// earlier versions wrote (see [`upgrade_flat_shape`]), so old autosaves and links still load.
    ///
    /// # Errors
    /// [`SavedFamilyError`]: not JSON, or the missing, mistyped or unknown field by name.
    pub fn from_json(text: &str) -> Result<FamilySpec, SavedFamilyError> {
        let invalid = |e: serde_json::Error| SavedFamilyError::Invalid(e.to_string());
        let mut v: Value = serde_json::from_str(text).map_err(|e| SavedFamilyError::NotJson(e.to_string()))?;
        // The object itself as the deserializer, not a `Value` holding it (the same fields and
        // errors): the struct's array form is then not compiled in.
        if let Value::Object(object) = &mut v
            && object.get("family").and_then(Value::as_str) == Some("file")
        {
            let SavedFile { name, text, .. } = SavedFile::deserialize(std::mem::take(object)).map_err(invalid)?;
            return Ok(FamilySpec::File { name, bytes: text.into_bytes() });
        }
        upgrade_flat_shape(&mut v);
        serde_json::from_value(v).map(FamilySpec::Builtin).map_err(invalid)
    }

    /// The designer link's fragment (built-in families only: a family file may be large, and is
    /// shared as a file).
    ///
    /// # Errors
    /// [`LinkError::FamilyFile`] for a family file.
    pub fn link(&self) -> Result<String, LinkError> {
        match self {
            FamilySpec::File { .. } => Err(LinkError::FamilyFile),
            spec => spec.to_json().map(|j| share::encode_design(&j)).ok_or(LinkError::NotSaved),
        }
    }
}

/// Why a saved family (an autosave or a designer link) cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SavedFamilyError {
    /// Not JSON at all.
    #[error("not JSON ({0})")]
    NotJson(String),
    /// JSON, but not a family: serde's sentence naming the field.
    #[error("{0}")]
    Invalid(String),
}

/// Why there is no designer link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    /// Nothing derived yet.
    #[error("derive a family first")]
    NothingDerived,
    /// A family file is shared as the file, which may be large.
    #[error("a family file is shared as the file itself, not by link")]
    FamilyFile,
    /// The family could not be serialised.
    #[error("this family cannot be saved")]
    NotSaved,
}

/// Rewrites the flat shape earlier versions of the app saved for a built-in family
/// (`clean_causal`, `query_causal` and `interleaved` flags; butterfly's `mask_token` and
/// `radius`) into the core's ([`BuiltinFamily`]'s `clean`, `query`, `order`, `aggregate`). Other
/// JSON is left as it is.
fn upgrade_flat_shape(v: &mut Value) {
    let Some(map) = v.as_object_mut() else { return };
    // A flag that is not a boolean stays, and the core refuses it by name.
    let mut flag = |old: &str, new: &str, words: [&str; 2]| {
        if let Some(on) = map.get(old).and_then(Value::as_bool) {
            map.remove(old);
            map.insert(new.into(), Value::from(words[usize::from(on)]));
        }
    };
    flag("clean_causal", "clean", ["full", "causal"]);
    flag("query_causal", "query", ["full", "causal"]);
    flag("interleaved", "order", ["grouped", "interleaved"]);
    if let Some(mask) = map.remove("mask_token") {
        let radius = map.remove("radius").unwrap_or(Value::from(1));
        let aggregate =
            if mask.as_bool() == Some(true) { Value::from("mask") } else { json!({ "neighbours": radius }) };
        map.insert("aggregate".into(), aggregate);
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
    /// Milliseconds building the family and deriving took (injected clock).
    pub millis: f64,
    /// The designer link's fragment ([`FamilySpec::link`]), serialised once here rather than on
    /// every render.
    pub link: Result<String, LinkError>,
}

impl Design {
    /// Builds and derives `spec`, timing it with `clock`.
    ///
    /// # Errors
    /// The family's or the pipeline's [`FamilyError`].
    pub fn compute(spec: FamilySpec, clock: fn() -> f64) -> Result<Design, FamilyError> {
        let start = clock();
        let family = spec.build()?;
        let d = derive::derive(&family)?;
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
        Ok(Design {
            link: spec.link(),
            spec,
            positions: d.position_texts(),
            labels: d.label_texts(),
            task_inputs,
            task_labels,
            served,
            members,
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

/// The designer's part of the store.
#[derive(Clone, Debug, Default)]
pub struct DesignerState {
    /// The latest successful derivation.
    pub design: Option<Rc<Design>>,
    /// The hovered merged node (its equivalents light up in every task).
    pub hover: Option<usize>,
    /// Successful derivations so far (tells one result from the next, even an identical one).
    pub seq: u64,
    /// An autosaved family, derived when the designer is first opened.
    pub pending: Option<FamilySpec>,
}

/// The designer's actions (reduced here).
#[derive(Clone, Debug, PartialEq)]
pub enum DesignerAction {
    /// Derive a family's minimal merged task (a refused family leaves the last design as it was).
    Derive(FamilySpec),
    /// Restore the designer's autosaved family (JSON of [`FamilySpec::to_json`]); it is derived
    /// when the designer opens. A broken save is reported and ignored.
    Restore(String),
    /// Hover a merged node (or leave it).
    HoverMerged(Option<usize>),
    /// Load the derived dense mask, with its position labels, into the editor (one undo step).
    OpenDerived,
}

impl AppState {
    /// The designer's actions.
    pub(super) fn apply_designer(&mut self, action: DesignerAction) {
        match action {
            DesignerAction::Restore(json) => match FamilySpec::from_json(&json) {
                Ok(spec) => self.designer.pending = Some(spec),
                Err(e) => self.error(format!("the autosaved design is unreadable ({e}); it was ignored.")),
            },
            DesignerAction::Derive(spec) => {
                let what = spec.describe();
                match Design::compute(spec, self.clock) {
                    Err(e) => self.error(format!("could not derive {what}: {e}. Nothing was changed.")),
                    Ok(design) => {
                        let r = design.derivation.report();
                        self.info(format!(
                            "derived {what}: {} nodes -> {}, {} positions.",
                            r.nodes_before, r.nodes_after, r.positions
                        ));
                        self.designer.design = Some(Rc::new(design));
                        self.designer.hover = None;
                        self.designer.seq += 1;
                    }
                }
            }
            DesignerAction::HoverMerged(c) => {
                let d = &self.designer;
                self.designer.hover = c.filter(|&c| d.design.as_ref().is_some_and(|d| c < d.members.len()));
            }
            DesignerAction::OpenDerived => {
                let Some(design) = self.designer.design.clone() else {
                    self.error("derive a family first.".into());
                    return;
                };
                // The core's mask file: labels and provenance as `derive --mask-out` writes them.
                let file = design.spec.mask_file(&design.derivation);
                if self.load_file(file, &format!("derived mask of {}", design.spec.describe())) {
                    self.view = View::Editor;
                }
            }
        }
    }

    /// Shows `view`; the designer, opened for the first time, derives the autosaved family. A
    /// message belongs to the view it was shown in: switching to another view drops it (an action
    /// that itself moves to another view, like opening a derived mask, keeps its own).
    pub(super) fn set_view(&mut self, view: View) {
        if view != self.view {
            self.message = None;
        }
        self.view = view;
        if view == View::Designer
            && self.designer.design.is_none()
            && let Some(spec) = self.designer.pending.take()
        {
            self.apply(Action::Designer(DesignerAction::Derive(spec)));
        }
    }
}
