//! Training tasks and families: what each position holds (tokens, mask tokens, aggregated
//! tokens), what it predicts, and the mask of one task (THEORY §5).
//!
//! Inputs are interned once per [`Family`] into [`InputId`]s, so every later step compares
//! integers. The text form of an input (used by the family file and in reports):
//!
//! | text | meaning |
//! |---|---|
//! | `w_3` or `w@3` | token `w` at position-id 3 ([`Input::Token`]) |
//! | `m@3` | a mask token at position-id 3 ([`Input::Mask`]) |
//! | `w'_2[w_1,w_3]` | aggregated token `w'` at position-id 2 built from `w_1` and `w_3` |
//!
//! Token names are made of ASCII letters, digits, `-` and `.`; the position-id is a decimal
//! integer. `m@t` is always the mask token (a token named `m` is written `m_3`).

use std::collections::HashMap;
use std::fmt;

use crate::bits::BitMatrix;

/// A clean token: a name (the vocabulary item, `w`) and a position-id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token {
    /// Token name (`w`).
    pub name: String,
    /// Position-id.
    pub pos: usize,
}

impl Token {
    /// `name_pos`.
    pub fn new(name: impl Into<String>, pos: usize) -> Self {
        Token { name: name.into(), pos }
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}_{}", self.name, self.pos)
    }
}

/// What one position holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Input {
    /// A clean token `w_t`.
    Token(Token),
    /// A mask token `m@t` (carries only its position-id).
    Mask(usize),
    /// An aggregated token `w'_t` at position-id `pos`, built from the tokens `from` (sorted,
    /// without duplicates), e.g. the mean of `w_{t-1}` and `w_{t+1}`.
    Aggregated {
        /// Name (`w` gives `w'`).
        name: String,
        /// Position-id.
        pos: usize,
        /// The tokens it is built from.
        from: Vec<Token>,
    },
}

impl Input {
    /// The position-id.
    pub fn pos(&self) -> usize {
        match self {
            Input::Token(t) => t.pos,
            Input::Mask(p) => *p,
            Input::Aggregated { pos, .. } => *pos,
        }
    }

    /// An aggregated token; `from` is sorted and deduplicated.
    pub fn aggregated(name: impl Into<String>, pos: usize, mut from: Vec<Token>) -> Self {
        from.sort_unstable();
        from.dedup();
        Input::Aggregated { name: name.into(), pos, from }
    }

    /// Whether this input carries the value of `token` (is it, or is built from it).
    pub fn carries(&self, token: &Token) -> bool {
        match self {
            Input::Token(t) => t == token,
            Input::Mask(_) => false,
            Input::Aggregated { from, .. } => from.contains(token),
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Token(t) => t.fmt(f),
            Input::Mask(p) => write!(f, "m@{p}"),
            Input::Aggregated { name, pos, from } => {
                write!(f, "{name}'_{pos}[")?;
                for (i, t) in from.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    t.fmt(f)?;
                }
                f.write_str("]")
            }
        }
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}

fn parse_pos(text: &str) -> Result<usize, String> {
    if text.is_empty() || !text.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("position-id '{text}' is not a non-negative integer"));
    }
    text.parse().map_err(|_| format!("position-id '{text}' is too large"))
}

/// Parses a token `name_t` or `name@t`.
///
/// # Errors
/// A message saying what is wrong.
pub fn parse_token(text: &str) -> Result<Token, String> {
    let text = text.trim();
    if text.starts_with("m@") {
        return Err(format!("'{text}' is a mask token; a token here is NAME_POS such as w_3"));
    }
    let (name, pos) = text
        .rsplit_once('_')
        .or_else(|| text.rsplit_once('@'))
        .ok_or_else(|| format!("'{text}' is not a token: expected NAME_POS such as w_3"))?;
    if !valid_name(name) {
        return Err(format!("'{text}': token name '{name}' must be ASCII letters, digits, '-' or '.'"));
    }
    Ok(Token { name: name.into(), pos: parse_pos(pos)? })
}

/// Parses the text form of an input (see the module documentation).
///
/// # Errors
/// A message saying what is wrong.
///
/// # Examples
/// ```
/// use hasseflow_core::derive::{parse_input, Input, Token};
/// assert_eq!(parse_input("m@4").unwrap(), Input::Mask(4));
/// assert_eq!(parse_input("w_2").unwrap(), Input::Token(Token::new("w", 2)));
/// let agg = parse_input("w'_2[w_3,w_1]").unwrap();
/// assert_eq!(agg.to_string(), "w'_2[w_1,w_3]");
/// assert!(parse_input("w_x").is_err());
/// ```
pub fn parse_input(text: &str) -> Result<Input, String> {
    let text = text.trim();
    if let Some(pos) = text.strip_prefix("m@") {
        return Ok(Input::Mask(parse_pos(pos)?));
    }
    if let Some((head, rest)) = text.split_once('[') {
        let inner = rest
            .strip_suffix(']')
            .ok_or_else(|| format!("'{text}': an aggregated token ends with ']' after its tokens"))?;
        let (name, pos) = head
            .split_once("'_")
            .or_else(|| head.split_once("'@"))
            .ok_or_else(|| format!("'{text}': an aggregated token is written NAME'_POS[TOKENS], e.g. w'_2[w_1,w_3]"))?;
        if !valid_name(name) {
            return Err(format!("'{text}': name '{name}' must be ASCII letters, digits, '-' or '.'"));
        }
        let from = inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(parse_token)
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Input::aggregated(name, parse_pos(pos)?, from));
    }
    if text.contains('\'') {
        return Err(format!("'{text}': an aggregated token lists its tokens, e.g. w'_2[w_1,w_3]"));
    }
    parse_token(text).map(Input::Token)
}

/// Index of an interned [`Input`] in its [`Family`].
pub type InputId = u32;

/// A problem with a family: a bad family file, a task that does not fit together, or a bad family
/// parameter. Every message says where and what.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FamilyError {
    /// Too large or not UTF-8.
    #[error(transparent)]
    Input(#[from] crate::format::InputError),
    /// Not JSON, or JSON of the wrong shape.
    #[error("malformed family JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A value that is well-formed JSON but invalid.
    #[error("{at}: {what}")]
    Invalid {
        /// Where (`tasks[2].inputs[1]`, `task 3 (T3)`).
        at: String,
        /// What is wrong.
        what: String,
    },
    /// A built-in family asked for with parameters it cannot take.
    #[error("family '{family}': {what}")]
    Parameter {
        /// Family name.
        family: String,
        /// What is wrong.
        what: String,
    },
}

/// Largest number of positions in one task and in a derived mask.
pub const MAX_TASK_POSITIONS: usize = crate::format::MAX_N;

/// Most bytes the masks of one family's tasks may take together (a derivation holds them all,
/// then copies and merges them: its peak is a few times this).
pub const MAX_FAMILY_MASK_BYTES: usize = 64 << 20;

/// One training task `(inputs, labels, mask)` of a [`Family`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Task {
    /// A name for reports (`T3`).
    pub name: String,
    /// What each position holds.
    pub inputs: Vec<InputId>,
    /// What each position predicts (an interned [`Input::Token`]), if anything.
    pub labels: Vec<Option<InputId>>,
    /// Layout group of each position: merged nodes are laid out by ascending group first
    /// (e.g. 0 = forward stream, 1 = backward stream, 2 = predictors). Not part of equivalence.
    pub groups: Vec<u32>,
    /// The task's mask (`M[q][k] = 1`: `q` reads `k`).
    pub mask: BitMatrix,
    /// A padding task: its nodes are kept in the merged layout (e.g. the last content block of
    /// the padded Block Two-Stream layout) but they are not counted as task nodes and carry no
    /// labels.
    pub padding: bool,
}

/// A family of training tasks over one table of interned inputs.
#[derive(Clone, Debug, Default)]
pub struct Family {
    /// A name for reports.
    pub name: String,
    inputs: Vec<Input>,
    index: HashMap<Input, InputId>,
    tasks: Vec<Task>,
    /// Bytes of the task masks so far (against [`MAX_FAMILY_MASK_BYTES`]).
    mask_bytes: usize,
}

impl Family {
    /// An empty family.
    pub fn new(name: impl Into<String>) -> Self {
        Family { name: name.into(), ..Family::default() }
    }

    /// Interns an input (aggregated tokens also intern the tokens they are built from).
    pub fn intern(&mut self, input: Input) -> InputId {
        if let Some(&id) = self.index.get(&input) {
            return id;
        }
        if let Input::Aggregated { from, .. } = &input {
            for t in from.clone() {
                self.intern(Input::Token(t));
            }
        }
        let id = self.inputs.len() as InputId;
        self.inputs.push(input.clone());
        self.index.insert(input, id);
        id
    }

    /// Interns the token `name_pos`.
    pub fn token(&mut self, name: &str, pos: usize) -> InputId {
        self.intern(Input::Token(Token::new(name, pos)))
    }

    /// The input behind an id.
    ///
    /// # Panics
    /// If `id` was not interned by this family.
    pub fn input(&self, id: InputId) -> &Input {
        &self.inputs[id as usize]
    }

    /// Number of interned inputs.
    pub fn input_count(&self) -> usize {
        self.inputs.len()
    }

    /// The tasks, in order.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// Adds a task after checking that its parts fit together.
    ///
    /// # Errors
    /// [`FamilyError::Invalid`] naming the task when the lengths differ, an id is not interned, a
    /// label is not a token, the task is empty or too large, or a padding task has labels.
    pub fn push(&mut self, task: Task) -> Result<(), FamilyError> {
        let at = format!("task {} ({})", self.tasks.len(), task.name);
        let bad = |what: String| FamilyError::Invalid { at: at.clone(), what };
        let n = task.mask.n();
        if n == 0 {
            return Err(bad("a task needs at least one position".into()));
        }
        if n > MAX_TASK_POSITIONS {
            return Err(bad(format!("{n} positions; the limit is {MAX_TASK_POSITIONS}")));
        }
        let bytes = |n: usize| n * n.div_ceil(64) * 8;
        let total = self.mask_bytes + bytes(n);
        if total > MAX_FAMILY_MASK_BYTES {
            return Err(bad(format!(
                "the task masks take {total} bytes together, over the limit of {MAX_FAMILY_MASK_BYTES} \
                 (fewer or smaller tasks)"
            )));
        }
        for (what, len) in [("inputs", task.inputs.len()), ("labels", task.labels.len()), ("groups", task.groups.len())]
        {
            if len != n {
                return Err(bad(format!("{len} {what} for a mask of {n} positions")));
            }
        }
        if let Some(p) = task.inputs.iter().position(|&i| i as usize >= self.inputs.len()) {
            return Err(bad(format!("position {p}: input id not interned in this family")));
        }
        for (p, label) in task.labels.iter().enumerate() {
            if let Some(l) = *label {
                if !matches!(self.inputs.get(l as usize), Some(Input::Token(_))) {
                    return Err(bad(format!("position {p}: a label must be a token")));
                }
                if task.padding {
                    return Err(bad(format!("position {p}: a padding task carries no labels")));
                }
            }
        }
        self.mask_bytes = total;
        self.tasks.push(task);
        Ok(())
    }

    /// The label token of an id, if it is a token.
    pub(crate) fn token_of(&self, id: InputId) -> Option<&Token> {
        match &self.inputs[id as usize] {
            Input::Token(t) => Some(t),
            _ => None,
        }
    }
}
