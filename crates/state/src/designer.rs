//! The designer's part of the store: which task family to derive ([`FamilySpec`]), the result
//! of the derivation pipeline ([`Design`], computed once per request by the reducer), and the
//! derived task as JSON. Plain Rust, tested natively with the rest of the store.

use std::rc::Rc;

use hasseflow_core::BitMatrix;
use hasseflow_core::derive::{BuiltinFamily, DesignView, wire};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Action, AppState, View};
use hasseflow_core::share;

/// Largest `n` the designer accepts for a built-in family (the merged task of butterfly `n`
/// has `3n` positions; block generation `2n`).
pub const MAX_DESIGN_N: usize = 256;
/// Most tasks drawn as small multiples; the rest are counted in a note.
pub const MAX_TASKS_DRAWN: usize = wire::TASKS_DRAWN;

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

    /// The derivation request for this family (`core::derive::wire`), answered where the
    /// pipeline is linked in or by the lazily loaded Designer module.
    ///
    /// # Errors
    /// `n` above [`MAX_DESIGN_N`], in words.
    pub fn request(&self) -> Result<wire::Request, String> {
        match self {
            FamilySpec::Builtin(b) if b.n() > MAX_DESIGN_N => Err(format!(
                "{}: the designer handles n up to {MAX_DESIGN_N} (the CLI has no such limit)",
                self.describe()
            )),
            FamilySpec::Builtin(b) => Ok(wire::Request::builtin(*b)),
            FamilySpec::File { bytes, .. } => Ok(wire::Request::file(bytes)),
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

/// One derivation and what the views draw from it, as the core's pipeline gives it
/// ([`DesignView`]: derived here where it is linked in, else by the lazily loaded Designer module).
#[derive(Debug)]
pub struct Design {
    /// What was derived.
    pub spec: FamilySpec,
    /// What the Designer draws: report, tasks, merged task, masks.
    pub view: DesignView,
    /// Milliseconds from the request to the derivation (injected clock; a first derivation in
    /// the web app includes fetching the module).
    pub millis: f64,
    /// The designer link's fragment ([`FamilySpec::link`]), serialised once here rather than on
    /// every render.
    pub link: Result<String, LinkError>,
}

impl Design {
    /// The dense mask `M*`.
    pub fn dense(&self) -> &BitMatrix {
        &self.view.dense
    }

    /// A short name of task `t`: its name when at most 8 characters, else `#t`.
    pub fn task_short(&self, t: usize) -> String {
        let name = self.view.task_names.get(t).map_or("", String::as_str);
        if name.chars().count() <= 8 { name.to_string() } else { format!("#{t}") }
    }

    /// The merged node's tasks in words (short task names, at most four, then a count).
    pub fn served_text(&self, node: usize) -> String {
        let s = &self.view.served[node];
        let total = self.view.task_names.len();
        if s.len() == total && total > 1 {
            return format!("all {total} tasks");
        }
        let mut parts: Vec<String> = s.iter().take(4).map(|&t| self.task_short(t)).collect();
        if s.len() > 4 {
            parts.push(format!("+{}", s.len() - 4));
        }
        parts.join(",")
    }

    /// The request for the derived task as one JSON object: the same object `hasseflow derive
    /// --json` prints (the report's fields plus `mask`, `sparse_mask`, `positions` (inputs),
    /// `labels`, `n`, `nodes`, `edges`). One core function builds it for both, so they cannot
    /// drift apart; the shell asks the Designer module and downloads its answer.
    pub fn export_request(&self) -> String {
        self.spec.request().map(|r| r.for_json().to_json()).unwrap_or_default()
    }
}

/// A derivation waiting for the lazily loaded Designer module (`core::derive::wire`), which the
/// web app fetches when the Designer first derives; answered with [`DesignerAction::Answered`].
#[derive(Clone, Debug, PartialEq)]
pub struct PendingDesign {
    /// Tells this derivation's answer from a stale one.
    pub id: u64,
    /// What is derived.
    pub spec: FamilySpec,
    /// The request's JSON.
    pub request: String,
    /// When it was asked (the injected clock).
    pub started: f64,
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
    /// Whether the pipeline is linked in (`derive::wire::LINKED`: the CLI's and the tests'
    /// core). Without it (the web app's first download) a derivation waits in
    /// [`DesignerState::deriving`].
    pub linked: bool,
    /// The derivation waiting for the lazily loaded module; the shell asks it while the
    /// Designer is shown ([`AppState::design_request`]).
    pub deriving: Option<Rc<PendingDesign>>,
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
    /// The lazily loaded module's answer to [`DesignerState::deriving`] number `id`: the
    /// answer's JSON (`derive::wire`), or why the module did not load.
    Answered {
        /// The derivation it answers (a stale one is dropped).
        id: u64,
        /// The module's answer, or why it could not be asked.
        answer: Result<String, String>,
    },
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
                let started = (self.clock)();
                // A newer request replaces one still waiting: its answer is dropped as stale.
                self.designer.deriving = None;
                let request = match spec.request() {
                    Err(e) => return self.derived(spec, Err(e), started),
                    Ok(r) => r,
                };
                let here = if self.designer.linked { request.derive_here() } else { None };
                match here {
                    Some(view) => self.derived(spec, view, started),
                    None => {
                        let (id, request) = (self.actions, request.to_json());
                        self.designer.deriving = Some(Rc::new(PendingDesign { id, spec, request, started }));
                    }
                }
            }
            DesignerAction::Answered { id, answer } => {
                let Some(pending) = self.designer.deriving.take_if(|p| p.id == id) else { return };
                let view = answer
                    .map_err(|e| format!("the Designer's module did not load ({e})"))
                    .and_then(|a| wire::read_view(&a));
                self.derived(pending.spec.clone(), view, pending.started);
            }
            DesignerAction::HoverMerged(c) => {
                let d = &self.designer;
                self.designer.hover = c.filter(|&c| d.design.as_ref().is_some_and(|d| c < d.view.members.len()));
            }
            DesignerAction::OpenDerived => {
                let Some(design) = self.designer.design.clone() else {
                    self.error("derive a family first.".into());
                    return;
                };
                // The core's mask file: labels and provenance as `derive --mask-out` writes them.
                let file = design.view.mask_file();
                if self.load_file(file, &format!("derived mask of {}", design.spec.describe())) {
                    self.view = View::Editor;
                }
            }
        }
    }

    /// A derivation's outcome: the new design, with a message, or the refusal, leaving the last
    /// design as it was.
    fn derived(&mut self, spec: FamilySpec, view: Result<DesignView, String>, started: f64) {
        let what = spec.describe();
        let view = match view {
            Err(e) => return self.error(format!("could not derive {what}: {e}. Nothing was changed.")),
            Ok(v) => v,
        };
        let r = &view.report;
        self.info(format!("derived {what}: {} nodes -> {}, {} positions.", r.nodes_before, r.nodes_after, r.positions));
        let millis = (self.clock)() - started;
        self.designer.design = Some(Rc::new(Design { link: spec.link(), spec, view, millis }));
        self.designer.hover = None;
        self.designer.seq += 1;
    }

    /// The derivation the shell should ask the lazily loaded module now: one is waiting and the
    /// Designer is shown (a visitor who never opens it never loads the module).
    pub fn design_request(&self) -> Option<Rc<PendingDesign>> {
        self.designer.deriving.clone().filter(|_| self.view == View::Designer)
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
