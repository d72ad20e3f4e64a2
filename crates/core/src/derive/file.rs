//! The user family file (`hasseflow-family` v1, JSON; described in docs/FAMILY_FORMAT.md):
//! tasks given either as a mask with inputs and labels, or as a labelled DAG of nodes.
//! Parsing is strict and never panics: every failure is a [`FamilyError`] naming where and what.

use std::collections::HashMap;

use serde::Deserialize;

use super::task::{Family, FamilyError, Task, parse_input, parse_token};
use crate::analysis::Analysis;
use crate::bits::BitMatrix;
use crate::format::{json_error_parts, text_input};

/// Value of the `format` field of a family file.
pub const FAMILY_FORMAT_TAG: &str = "hasseflow-family";
/// Largest number of positions over all tasks of a family file.
pub const MAX_FAMILY_POSITIONS: usize = 1 << 24;
/// The family file version this build reads.
pub const FAMILY_FORMAT_VERSION: u64 = 1;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFamily {
    format: String,
    version: u64,
    #[serde(default)]
    name: Option<String>,
    tasks: Vec<RawTask>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    inputs: Option<Vec<String>>,
    #[serde(default)]
    labels: Option<Vec<Option<String>>>,
    #[serde(default)]
    mask: Option<Vec<String>>,
    #[serde(default)]
    groups: Option<Vec<u32>>,
    #[serde(default)]
    nodes: Option<Vec<RawNode>>,
    #[serde(default)]
    padding: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    id: String,
    inputs: Vec<String>,
    #[serde(default)]
    labels: Option<Vec<Option<String>>>,
    #[serde(default)]
    reads: Vec<String>,
    #[serde(default)]
    group: u32,
}

fn invalid(at: impl Into<String>, what: impl Into<String>) -> FamilyError {
    FamilyError::Invalid { at: at.into(), what: what.into() }
}

/// Parses a family file.
///
/// # Errors
/// Any [`FamilyError`]: oversized or non-UTF-8 input, malformed JSON (line and column), a wrong
/// `format` or `version`, and for each task the field and index at fault (bad input text, wrong
/// lengths, bad mask characters, unknown or repeated node ids, cycles).
///
/// # Examples
/// ```
/// use hasseflow_core::derive::{parse_family, derive};
/// let text = r#"{"format": "hasseflow-family", "version": 1, "tasks": [
///   {"inputs": ["w_0"], "labels": ["w_1"], "mask": ["1"]},
///   {"nodes": [{"id": "a", "inputs": ["w_0"]},
///              {"id": "b", "inputs": ["w_1"], "labels": ["w_2"], "reads": ["a"]}]}]}"#;
/// let family = parse_family(text.as_bytes()).unwrap();
/// let d = derive(&family).unwrap();
/// assert_eq!((d.report().nodes_before, d.report().nodes_after), (3, 2));
/// let err = parse_family(br#"{"format": "hasseflow-family", "version": 1, "tasks": [{"inputs": ["w_x"], "mask": ["1"]}]}"#);
/// assert!(err.unwrap_err().to_string().starts_with("tasks[0].inputs[0]"));
/// ```
pub fn parse_family(input: &[u8]) -> Result<Family, FamilyError> {
    let text = text_input(input)?;
    let raw: RawFamily = serde_json::from_str(text).map_err(|e| {
        let (line, column, message) = json_error_parts(&e);
        FamilyError::Json { line, column, message }
    })?;
    if raw.format != FAMILY_FORMAT_TAG {
        return Err(invalid("format", format!("is \"{}\", expected \"{FAMILY_FORMAT_TAG}\"", raw.format)));
    }
    if raw.version != FAMILY_FORMAT_VERSION {
        return Err(invalid("version", format!("version {} is not supported (this build reads 1)", raw.version)));
    }
    if raw.tasks.is_empty() {
        return Err(invalid("tasks", "a family needs at least one task"));
    }
    let mut family = Family::new(raw.name.unwrap_or_else(|| "user family".into()));
    let mut total = 0usize;
    for (i, t) in raw.tasks.into_iter().enumerate() {
        let at = format!("tasks[{i}]");
        let name = t.name.clone().unwrap_or_else(|| format!("T{i}"));
        let task = match (&t.nodes, &t.mask) {
            (Some(_), Some(_)) => {
                return Err(invalid(at, "give either \"mask\" (with \"inputs\") or \"nodes\", not both"));
            }
            (None, None) => return Err(invalid(at, "give either \"mask\" (with \"inputs\") or \"nodes\"")),
            (None, Some(_)) => mask_task(&mut family, &at, name, t)?,
            (Some(_), None) => dag_task(&mut family, &at, name, t)?,
        };
        total += task.mask.n();
        if total > MAX_FAMILY_POSITIONS {
            return Err(invalid(at, format!("more than {MAX_FAMILY_POSITIONS} positions in the family")));
        }
        family.push(task).map_err(|e| match e {
            FamilyError::Invalid { what, .. } => invalid(format!("tasks[{i}]"), what),
            other => other,
        })?;
    }
    Ok(family)
}

fn labels_of(
    family: &mut Family,
    at: &str,
    labels: Option<Vec<Option<String>>>,
    n: usize,
) -> Result<Vec<Option<u32>>, FamilyError> {
    let Some(labels) = labels else { return Ok(vec![None; n]) };
    if labels.len() != n {
        return Err(invalid(format!("{at}.labels"), format!("{} labels for {n} inputs", labels.len())));
    }
    labels
        .iter()
        .enumerate()
        .map(|(p, l)| match l {
            None => Ok(None),
            Some(text) => parse_token(text)
                .map(|tok| Some(family.intern(super::Input::Token(tok))))
                .map_err(|what| invalid(format!("{at}.labels[{p}]"), what)),
        })
        .collect()
}

fn check_n(at: &str, n: usize) -> Result<(), FamilyError> {
    if n == 0 {
        return Err(invalid(at, "a task needs at least one position"));
    }
    if n > super::MAX_TASK_POSITIONS {
        return Err(invalid(at, format!("{n} positions; the limit is {}", super::MAX_TASK_POSITIONS)));
    }
    Ok(())
}

fn mask_task(family: &mut Family, at: &str, name: String, t: RawTask) -> Result<Task, FamilyError> {
    let inputs_text = t.inputs.ok_or_else(|| invalid(at, "a task with \"mask\" needs \"inputs\""))?;
    let rows = t.mask.unwrap_or_default();
    let n = inputs_text.len();
    check_n(at, n)?;
    let inputs = inputs_text
        .iter()
        .enumerate()
        .map(|(p, s)| {
            parse_input(s).map(|i| family.intern(i)).map_err(|what| invalid(format!("{at}.inputs[{p}]"), what))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if rows.len() != n {
        return Err(invalid(format!("{at}.mask"), format!("{} rows for {n} inputs", rows.len())));
    }
    let mut mask = BitMatrix::zeros(n);
    for (q, row) in rows.iter().enumerate() {
        let count = row.chars().count();
        if count != n {
            return Err(invalid(format!("{at}.mask[{q}]"), format!("{count} columns, expected {n}")));
        }
        for (k, c) in row.chars().enumerate() {
            match c {
                '1' => mask.set(q, k, true),
                '.' | '0' => {}
                other => {
                    return Err(invalid(format!("{at}.mask[{q}]"), format!("column {k}: '{other}' is not 1, 0 or .")));
                }
            }
        }
    }
    let labels = labels_of(family, at, t.labels, n)?;
    let groups = t.groups.unwrap_or_else(|| vec![0; n]);
    if groups.len() != n {
        return Err(invalid(format!("{at}.groups"), format!("{} groups for {n} inputs", groups.len())));
    }
    Ok(Task { name, inputs, labels, groups, mask, padding: t.padding })
}

fn dag_task(family: &mut Family, at: &str, name: String, t: RawTask) -> Result<Task, FamilyError> {
    for (field, present) in
        [("inputs", t.inputs.is_some()), ("labels", t.labels.is_some()), ("groups", t.groups.is_some())]
    {
        if present {
            return Err(invalid(at, format!("\"{field}\" belongs to each node when a task is given by \"nodes\"")));
        }
    }
    let nodes = t.nodes.unwrap_or_default();
    if nodes.is_empty() {
        return Err(invalid(format!("{at}.nodes"), "a task needs at least one node"));
    }
    let mut ids: HashMap<&str, usize> = HashMap::new();
    for (j, node) in nodes.iter().enumerate() {
        if ids.insert(node.id.as_str(), j).is_some() {
            return Err(invalid(format!("{at}.nodes[{j}].id"), format!("node id '{}' is used twice", node.id)));
        }
        if node.inputs.is_empty() {
            return Err(invalid(format!("{at}.nodes[{j}].inputs"), "a node holds at least one input"));
        }
    }
    let n: usize = nodes.iter().map(|x| x.inputs.len()).sum();
    check_n(at, n)?;
    let mut inputs = Vec::with_capacity(n);
    let mut labels = Vec::with_capacity(n);
    let mut groups = Vec::with_capacity(n);
    let mut start = Vec::with_capacity(nodes.len() + 1);
    for (j, node) in nodes.iter().enumerate() {
        let at_node = format!("{at}.nodes[{j}]");
        start.push(inputs.len());
        for (p, s) in node.inputs.iter().enumerate() {
            let input = parse_input(s).map_err(|what| invalid(format!("{at_node}.inputs[{p}]"), what))?;
            inputs.push(family.intern(input));
        }
        labels.extend(labels_of(family, &at_node, node.labels.clone(), node.inputs.len())?);
        groups.extend(std::iter::repeat_n(node.group, node.inputs.len()));
    }
    start.push(n);
    // Sparse wiring: each node a clique, each read edge all pairs; the closure is the task mask.
    let mut wiring = BitMatrix::zeros(n);
    for (j, node) in nodes.iter().enumerate() {
        for q in start[j]..start[j + 1] {
            for k in start[j]..start[j + 1] {
                wiring.set(q, k, true);
            }
        }
        for (r, id) in node.reads.iter().enumerate() {
            let &src = ids
                .get(id.as_str())
                .ok_or_else(|| invalid(format!("{at}.nodes[{j}].reads[{r}]"), format!("unknown node '{id}'")))?;
            for q in start[j]..start[j + 1] {
                for k in start[src]..start[src + 1] {
                    wiring.set(q, k, true);
                }
            }
        }
    }
    let analysis = Analysis::new(&wiring);
    if analysis.classes().len() != nodes.len() {
        let j =
            (0..nodes.len()).find(|&j| analysis.classes()[analysis.class_of()[start[j]]].len() > nodes[j].inputs.len());
        let id = j.map(|j| nodes[j].id.clone()).unwrap_or_default();
        return Err(invalid(format!("{at}.nodes"), format!("the reads form a cycle through node '{id}'")));
    }
    Ok(Task { name, inputs, labels, groups, mask: analysis.closure().clone(), padding: t.padding })
}
