//! The Designer's derivation across a module boundary: a request (a built-in family or a family
//! file, and whether the Designer's view or the `derive --json` object is wanted) and its answer
//! ([`DesignView`], the JSON text, or the refusal in one line), each as one JSON string.
//!
//! The web app's first download leaves the pipeline out (the core without its `derivation`
//! feature: no family builders, Hasse keys or merging are linked). Its Designer module answers
//! with [`answer`], and the app reads the answer back with [`read_view`] or [`read_json`] into
//! exactly what [`Request::derive_here`] and [`Request::json_here`] give where the pipeline is
//! linked in (the CLI, the Python package, the store's native tests).

use serde::{Deserialize, Serialize};

use super::{BuiltinFamily, DeriveReport, Leak};
use crate::bits::BitMatrix;
use crate::format::{MaskFile, Provenance};
use crate::tuple_wire::{each, tuple_wire};

/// Whether this build links the pipeline (the core's `derivation` feature).
pub const LINKED: bool = cfg!(feature = "derivation");

/// Most tasks a [`DesignView`] carries as drawn (the Designer's small multiples); the rest are
/// named only.
pub const TASKS_DRAWN: usize = 24;

/// The longest request text read: a family file as large as the reader takes, in hex (so a file
/// is refused by the reader, with the reader's words, wherever it is derived).
#[cfg(feature = "derivation")]
const MAX_REQUEST_BYTES: usize = 2 * crate::format::MAX_INPUT_BYTES + (1 << 20);

/// The longest answer text read (a merged task of 768 positions is 74 KB a mask in hex; 24 drawn
/// tasks of up to 768 positions each, and the names of many more).
const MAX_ANSWER_BYTES: usize = 64 << 20;

/// What to derive, and what to answer with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// A built-in family with its options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<BuiltinFamily>,
    /// Else a family file's bytes (`docs/FAMILY_FORMAT.md`), in hex.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file: String,
    /// Answer with the `derive --json` object ([`super::Derivation::to_json`], pretty, one line
    /// break at the end: the Designer's export) instead of the [`DesignView`].
    #[serde(default)]
    pub json: bool,
}

impl Request {
    /// The view of built-in family `b`.
    pub fn builtin(b: BuiltinFamily) -> Self {
        Request { builtin: Some(b), file: String::new(), json: false }
    }

    /// The view of the family file `bytes`.
    pub fn file(bytes: &[u8]) -> Self {
        Request { builtin: None, file: crate::hex::hex(bytes), json: false }
    }

    /// The same family, answered with the `derive --json` object.
    pub fn for_json(mut self) -> Self {
        self.json = true;
        self
    }

    /// The request as one JSON string.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Derives it here when this build links the pipeline ([`LINKED`]): the view, or the
    /// refusal in one line; `None` without it: ask the lazily loaded module ([`answer`]).
    pub fn derive_here(&self) -> Option<Result<DesignView, String>> {
        #[cfg(feature = "derivation")]
        return Some(self.view());
        #[cfg(not(feature = "derivation"))]
        None
    }

    /// The `derive --json` text here when this build links the pipeline, as [`Self::derive_here`].
    pub fn json_here(&self) -> Option<Result<String, String>> {
        #[cfg(feature = "derivation")]
        return Some(self.json_text());
        #[cfg(not(feature = "derivation"))]
        None
    }

    /// The view of the family's derivation; its dense mask's file carries the preset a built-in
    /// family reproduces, where it does.
    #[cfg(feature = "derivation")]
    fn view(&self) -> Result<DesignView, String> {
        let d = self.derivation()?;
        let provenance = self.builtin.and_then(|b| b.provenance(d.dense()));
        Ok(DesignView::of(&d, provenance))
    }

    /// The family's `derive --json` object, pretty, with a line break at the end.
    #[cfg(feature = "derivation")]
    fn json_text(&self) -> Result<String, String> {
        let mut s = serde_json::to_string_pretty(&self.derivation()?.to_json()).unwrap_or_default();
        s.push('\n');
        Ok(s)
    }

    /// The family built and derived, or the refusal in one line.
    #[cfg(feature = "derivation")]
    fn derivation(&self) -> Result<super::Derivation, String> {
        let family = match (&self.builtin, self.file.as_str()) {
            (Some(b), "") => b.build(),
            (None, hex) => {
                let bytes = crate::hex::unhex(hex).ok_or("the family file's bytes are not hex")?;
                super::parse_family(&bytes)
            }
            (Some(_), _) => return Err("a request holds a built-in family or a file, not both".into()),
        };
        family.and_then(|f| super::derive(&f)).map_err(|e| e.to_string())
    }
}

/// One task as the Designer draws it: its inputs and labels row, its mask and its Hasse diagram,
/// each node coloured by the merged node it becomes.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskView {
    /// Input text of each position.
    pub inputs: Vec<String>,
    /// Label text of each position (`None`: unlabelled).
    pub labels: Vec<Option<String>>,
    /// The task's mask.
    pub mask: BitMatrix,
    /// Its diagram's classes (positions of each node).
    pub classes: Vec<Vec<usize>>,
    /// Its diagram's covering pairs `(lower, upper)`, indexed as `classes`.
    pub hasse: Vec<(usize, usize)>,
    /// The merged node each of its nodes becomes.
    pub merged: Vec<usize>,
}

/// What the Designer shows of a derivation: the report, the tasks, the minimal merged task's
/// diagram with the tasks each node serves, the dense and sparse masks, and the mask file that
/// Open in editor loads.
#[derive(Clone, Debug, PartialEq)]
pub struct DesignView {
    /// The figures and checks.
    pub report: DeriveReport,
    /// Every task's name, padding tasks included, in the family's order.
    pub task_names: Vec<String>,
    /// The first [`TASKS_DRAWN`] tasks, as drawn.
    pub tasks: Vec<TaskView>,
    /// Input text of each merged position.
    pub positions: Vec<String>,
    /// Label text of each merged position.
    pub labels: Vec<Option<String>>,
    /// Positions of each merged node.
    pub members: Vec<Vec<usize>>,
    /// The merged diagram's covering pairs, indexed as `members`.
    pub edges: Vec<(usize, usize)>,
    /// The tasks each merged node serves (has a node in), ascending.
    pub served: Vec<Vec<usize>>,
    /// The dense mask `M*`.
    pub dense: BitMatrix,
    /// The sparse mask.
    pub sparse: BitMatrix,
    /// The position labels of the derived mask file (the inputs, each cut to the file's limit:
    /// cut where the pipeline runs, so that the page's module holds no code for it).
    pub file_labels: Vec<String>,
    /// The preset a built-in family's dense mask reproduces.
    pub provenance: Option<Provenance>,
}

impl DesignView {
    /// The view of `d`, whose dense mask's file carries `provenance`.
    pub fn of(d: &super::Derivation, provenance: Option<Provenance>) -> DesignView {
        let f = d.family();
        let text = |i| f.input(i).to_string();
        let tasks = f
            .tasks()
            .iter()
            .zip(d.diagrams())
            .zip(d.node_class())
            .take(TASKS_DRAWN)
            .map(|((t, diagram), merged)| TaskView {
                inputs: t.inputs.iter().map(|&i| text(i)).collect(),
                labels: t.labels.iter().map(|l| l.map(text)).collect(),
                mask: t.mask.clone(),
                classes: diagram.analysis().classes().to_vec(),
                hasse: diagram.analysis().hasse_edges().to_vec(),
                merged: merged.clone(),
            })
            .collect();
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
        // The position texts once: shown as they are, and cut for the mask file.
        let positions = d.position_texts();
        DesignView {
            report: d.report().clone(),
            task_names: f.tasks().iter().map(|t| t.name.clone()).collect(),
            tasks,
            file_labels: super::report::file_labels(&positions),
            positions,
            labels: d.label_texts(),
            members,
            edges: d.edges().to_vec(),
            served,
            dense: d.dense().clone(),
            sparse: d.sparse().clone(),
            provenance,
        }
    }

    /// The derived dense mask as a mask file: labels and provenance as `hasseflow derive
    /// --mask-out` writes them.
    pub fn mask_file(&self) -> MaskFile {
        MaskFile {
            labels: Some(self.file_labels.clone()),
            provenance: self.provenance.clone(),
            ..MaskFile::new(self.dense.clone())
        }
    }
}

tuple_wire!(Leak as LeakWire { task: Option<usize>, position: usize, label: String, via_position: usize, via: String });

tuple_wire!(DeriveReport as ReportWire {
    family: String,
    tasks: usize,
    nodes_before: usize,
    nodes_after: usize,
    padding_nodes: usize,
    positions: usize,
    entries_dense: usize,
    entries_sparse: usize,
    density_dense: f64,
    sample_tokens: usize,
    target_tokens: usize,
    supervision_density: f64,
    labelled_positions: usize,
    loss_position_share: f64,
    depth_dense: usize,
    depth_sparse: usize,
    task_leaks: Vec<LeakWire> => each, each,
    leaks: Vec<LeakWire> => each, each,
    minimal: bool,
    criterion_violations: Vec<String>,
    consistent: bool,
    inconsistent: Vec<String>,
    diagram_matches: bool,
    multi_label_positions: usize,
    undecided: usize,
});

tuple_wire!(TaskView as TaskWire {
    inputs: Vec<String>,
    labels: Vec<Option<String>>,
    #[serde(with = "crate::hex::packed")]
    mask: BitMatrix,
    classes: Vec<Vec<usize>>,
    hasse: Vec<(usize, usize)>,
    merged: Vec<usize>,
});

tuple_wire!(DesignView as DesignWire {
    report: ReportWire => ReportWire::from, DeriveReport::from,
    task_names: Vec<String>,
    tasks: Vec<TaskWire> => each, each,
    positions: Vec<String>,
    labels: Vec<Option<String>>,
    members: Vec<Vec<usize>>,
    edges: Vec<(usize, usize)>,
    served: Vec<Vec<usize>>,
    #[serde(with = "crate::hex::packed")]
    dense: BitMatrix,
    #[serde(with = "crate::hex::packed")]
    sparse: BitMatrix,
    file_labels: Vec<String>,
    provenance: Option<Provenance>,
});

/// An answer on the wire.
#[derive(Serialize, Deserialize)]
enum Answer {
    /// The Designer's view.
    View(Box<DesignWire>),
    /// The `derive --json` text.
    Json(String),
    /// The family or the pipeline's refusal, in one line.
    Refused(String),
}

/// Answers a request (JSON of [`Request`]): the view, the JSON text, or why not (a request that
/// is not one included), as JSON that [`read_view`] or [`read_json`] reads.
#[cfg(feature = "derivation")]
pub fn answer(request: &str) -> String {
    let answer = match read_request(request) {
        Err(e) => Answer::Refused(e),
        Ok(r) if r.json => r.json_text().map_or_else(Answer::Refused, Answer::Json),
        Ok(r) => r.view().map_or_else(Answer::Refused, |v| Answer::View(Box::new(v.into()))),
    };
    serde_json::to_string(&answer).unwrap_or_default()
}

/// The request `text` holds, or why not (bounded before it is parsed).
#[cfg(feature = "derivation")]
fn read_request(text: &str) -> Result<Request, String> {
    if text.len() > MAX_REQUEST_BYTES {
        return Err(format!("a derivation request of {} bytes, at most {MAX_REQUEST_BYTES}", text.len()));
    }
    serde_json::from_str(text).map_err(|e| format!("not a derivation request: {e}"))
}

/// The answer `text` holds, or why not.
fn read_answer(text: &str) -> Result<Answer, String> {
    if text.len() > MAX_ANSWER_BYTES {
        return Err(format!("a derivation answer of {} bytes, at most {MAX_ANSWER_BYTES}", text.len()));
    }
    serde_json::from_str(text).map_err(|e| format!("a damaged derivation answer: {e}"))
}

/// The view [`answer`] gave, or its refusal in one line (also for a damaged answer, or one that
/// holds JSON text).
pub fn read_view(text: &str) -> Result<DesignView, String> {
    match read_answer(text)? {
        Answer::View(v) => Ok((*v).into()),
        Answer::Refused(e) => Err(e),
        Answer::Json(_) => Err("a derivation answer with JSON text, not the view".into()),
    }
}

/// The `derive --json` text [`answer`] gave, or its refusal in one line.
pub fn read_json(text: &str) -> Result<String, String> {
    match read_answer(text)? {
        Answer::Json(s) => Ok(s),
        Answer::Refused(e) => Err(e),
        Answer::View(_) => Err("a derivation answer with the view, not JSON text".into()),
    }
}

#[cfg(all(test, feature = "derivation"))]
mod tests {
    use super::*;
    use crate::derive::{BlockOptions, ButterflyOptions, MaeOptions, derive};

    /// Every field of `a` and `b` but the report's ratios, which JSON carries to within an ulp.
    fn same_view(a: &DesignView, b: &DesignView) {
        let ratios = |v: &DesignView| {
            let r = &v.report;
            [r.density_dense, r.supervision_density, r.loss_position_share]
        };
        for (x, y) in ratios(a).into_iter().zip(ratios(b)) {
            assert!((x - y).abs() <= 1e-15 * x.abs().max(1.0), "{x} against {y}");
        }
        let plain = |v: &DesignView| {
            let mut v = v.clone();
            (v.report.density_dense, v.report.supervision_density, v.report.loss_position_share) = (0.0, 0.0, 0.0);
            v
        };
        assert_eq!(plain(a), plain(b));
    }

    /// What crosses the wire is what the pipeline gives here: the view of each built-in family
    /// and of a family file (field for field against the derivation itself), the `derive --json`
    /// text, and the refusals (a family the builder refuses, a malformed file, a damaged request).
    #[test]
    fn the_wire_gives_what_the_pipeline_gives() {
        let families = [
            BuiltinFamily::Butterfly(ButterflyOptions::new(4)),
            BuiltinFamily::Block(BlockOptions::new(6, 2)),
            BuiltinFamily::Mae(MaeOptions::new(6, 2)),
            // More tasks than are drawn.
            BuiltinFamily::Butterfly(ButterflyOptions::new(30)),
        ];
        for b in families {
            let request = Request::builtin(b);
            let here = request.derive_here().expect("linked").expect("derives");
            same_view(&read_view(&answer(&request.to_json())).expect("a view"), &here);
            // Against the derivation itself.
            let d = derive(&b.build().expect("builds")).expect("derives");
            assert_eq!(here.mask_file(), b.mask_file(&d, false));
            assert_eq!((&here.dense, &here.sparse, &here.edges), (d.dense(), d.sparse(), &d.edges().to_vec()));
            assert_eq!(here.task_names.len(), d.family().tasks().len());
            assert_eq!(here.tasks.len(), d.family().tasks().len().min(TASKS_DRAWN));
            for (t, view) in here.tasks.iter().enumerate() {
                let task = &d.family().tasks()[t];
                assert_eq!((&view.mask, view.inputs.len()), (&task.mask, task.inputs.len()));
                assert_eq!(view.classes, d.diagrams()[t].analysis().classes());
                assert_eq!(view.merged, d.node_class()[t]);
                for &c in &view.merged {
                    assert!(here.served[c].contains(&t), "merged node {c} serves task {t}");
                }
            }
            let members: usize = here.members.iter().map(Vec::len).sum();
            assert_eq!(members, d.dense().n());
            let json = read_json(&answer(&request.clone().for_json().to_json())).expect("the JSON");
            assert_eq!(json, request.json_here().expect("linked").expect("derives"));
            let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
            assert_eq!(value, d.to_json());
            // Each reader refuses the other's answer.
            assert!(read_json(&answer(&request.to_json())).is_err());
        }
        // A family file, and its refusals.
        let file = include_bytes!("../../../../tests/data/family_example.json");
        let here = Request::file(file).derive_here().expect("linked").expect("derives");
        same_view(&read_view(&answer(&Request::file(file).to_json())).expect("a view"), &here);
        assert_eq!(here.provenance, None, "a family file names no preset");
        // A token past the mask file's label limit: the view's file cuts it as the derivation's.
        let long = format!("{}_0", "w".repeat(crate::format::MAX_LABEL_CHARS + 5));
        let text = format!(
            r#"{{"format": "hasseflow-family", "version": 1, "tasks": [{{"name": "t", "inputs": ["{long}", "w_1"], "labels": [null, "w_2"], "mask": ["1.", "11"]}}]}}"#
        );
        let here = Request::file(text.as_bytes()).derive_here().expect("linked").expect("derives");
        let d = derive(&crate::derive::file::parse_family(text.as_bytes()).expect("reads")).expect("derives");
        let labels = here.mask_file().labels.expect("labels");
        assert_eq!(Some(labels.clone()), d.mask_file(false).labels);
        assert!(
            labels.iter().any(|l| l.ends_with('…') && l.chars().count() == crate::format::MAX_LABEL_CHARS),
            "{labels:?}"
        );
        assert!(here.positions.contains(&long), "the view keeps the whole text");
        for bad in [&b"{"[..], b"\xff\xfe", br#"{"format": "hasseflow-family", "version": 9}"#] {
            let e = read_view(&answer(&Request::file(bad).to_json())).expect_err("refused");
            assert_eq!(Err(e.clone()), Request::file(bad).derive_here().expect("linked"));
            assert!(!e.contains('\n'), "{e}");
        }
        // A file over the reader's limit: the reader's refusal, across the wire too.
        let huge = vec![b' '; crate::format::MAX_INPUT_BYTES + 1];
        let here = Request::file(&huge).derive_here().expect("linked").expect_err("too large");
        assert_eq!(read_view(&answer(&Request::file(&huge).to_json())), Err(here));
        let empty = BuiltinFamily::Butterfly(ButterflyOptions::new(0));
        assert!(read_view(&answer(&Request::builtin(empty).to_json())).is_err());
        for bad in ["", "{", r#"{"builtin": 3}"#, r#"{"file": "zz"}"#, r#"{"json": true, "what": 1}"#] {
            let e = read_view(&answer(bad)).expect_err(bad);
            assert!(!e.is_empty() && !e.contains('\n'), "{bad}: {e}");
        }
        let both = Request { file: "00".into(), ..Request::builtin(families[0]) };
        assert!(read_view(&answer(&both.to_json())).is_err());
    }

    /// A damaged answer is refused in one line, never a panic: every truncation of a real one, and
    /// masks whose side and bytes disagree.
    #[test]
    fn damaged_answers_are_refused() {
        let text = answer(&Request::builtin(BuiltinFamily::Butterfly(ButterflyOptions::new(3))).to_json());
        assert!(read_view(&text).is_ok());
        for cut in (0..text.len()).step_by(7).filter(|&i| text.is_char_boundary(i)) {
            let e = read_view(&text[..cut]).expect_err("a truncated answer");
            assert!(!e.contains('\n'), "{e}");
        }
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        for n in [0u64, 2, 1 << 40, u64::MAX] {
            let mut w = v.clone();
            w["View"][8][0] = n.into();
            let e = read_view(&w.to_string()).expect_err("a wrong side");
            assert!(e.contains("mask of n"), "{e}");
        }
    }
}
