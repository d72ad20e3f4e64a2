//! What comes into the editor and what goes out: presets, imported files and pasted text (the
//! core's `import_mask_at`), share links, the autosave; exports and the share-link fragments. A
//! refused input changes nothing but the message (and, for pasted text refused at a place, the
//! [`PasteRefusal`] the paste box shows).

use std::collections::BTreeMap;
use std::rc::Rc;

use hasseflow_core::format::{FormatError, InputError, MaskFile, parse_mask_file};
use hasseflow_core::interop::{self, ExportKind};
use hasseflow_core::model;
use hasseflow_core::presets::{build_preset, preset_labels, preset_provenance};

use super::{Action, AppState, DesignerAction, Document, FamilySpec, LinkError, MAX_EDIT_N, ModelsAction, View};
use hasseflow_core::share;

/// What comes into the editor: presets, files, pasted text, share links, the autosave (reduced
/// here).
#[derive(Clone, Debug, PartialEq)]
pub enum ImportAction {
    /// Build a catalog preset.
    LoadPreset {
        /// Preset name.
        name: String,
        /// Tokens.
        n: usize,
        /// Parameters as text.
        params: BTreeMap<String, String>,
    },
    /// Import a file's bytes.
    ImportFile {
        /// File name, for messages.
        name: String,
        /// Contents.
        bytes: Vec<u8>,
    },
    /// Import pasted text (a `mask_mod`, mask JSON or a grid); a `mask_mod` is evaluated at `n`,
    /// batch `batch` and head `head` (`create_mask(...)[batch, head]`). A `mask_mod` refused at a
    /// place is kept as [`super::EditorState::paste_refusal`] for the paste box to show.
    ImportText {
        /// What it was, for messages.
        name: String,
        /// The text.
        text: String,
        /// The size to evaluate a `mask_mod` at (or to build a FlashAttention window at).
        n: usize,
        /// The batch index `b` a `mask_mod` is evaluated at.
        batch: u64,
        /// The head index `h` a `mask_mod` is evaluated at.
        head: u64,
    },
    /// The lazily loaded reader's answer to [`super::EditorState::reading`] number `id`
    /// (`core::interop::wire`'s JSON), or why the reader could not be loaded. A stale answer (not
    /// the pending read's) is dropped.
    Answered {
        /// The pending read it answers.
        id: u64,
        /// The answer, or the loading failure.
        answer: Result<String, String>,
    },
    /// Load a share link's fragment (without `#`).
    LoadShared(String),
    /// Restore the autosaved JSON (no undo step; a broken save is reported and ignored).
    Restore(String),
}

impl AppState {
    /// Presets, imports, share links and the autosave.
    pub(super) fn apply_import(&mut self, action: ImportAction) {
        match action {
            ImportAction::LoadPreset { name, n, params } => match build_preset(&name, n, &params, MAX_EDIT_N) {
                Err(e) => self.error(format!("{e}. Nothing was changed.")),
                Ok(mask) => {
                    let size = mask.n();
                    // Two-stream, Butterfly and XLNet name their positions (w/m, F/B/P, h/g).
                    let labels = preset_labels(&name, n, &params, MAX_EDIT_N).ok().flatten().map(Rc::new);
                    self.commit(Document {
                        mask: Rc::new(mask),
                        labels,
                        provenance: Some(preset_provenance(&name, n, &params)),
                        stack: None,
                    });
                    self.info(format!("preset {name}: {size} positions."));
                }
            },
            // A file: FlashMask files and mask_mods with `N = ...` record their size, a FlashAttention
            // window or a mask_mod without one takes the editor's. Pasted text: the size typed beside it.
            ImportAction::ImportFile { name, bytes } => {
                let size = interop::SizeHint::Fallback(self.n());
                if !self.read_later(&name, &bytes, size, (0, 0), false) {
                    self.import(&name, &bytes, size, (0, 0));
                }
            }
            ImportAction::ImportText { name, text, n, batch, head } => {
                self.editor.paste_refusal = None;
                let size = interop::SizeHint::Given(n);
                if !self.read_later(&name, text.as_bytes(), size, (batch, head), true) {
                    let refused = self.import(&name, text.as_bytes(), size, (batch, head));
                    self.paste_refused(&text, refused);
                }
            }
            ImportAction::Answered { id, answer } => {
                let Some(read) = self.editor.reading.take_if(|r| r.id == id) else { return };
                let r = &read.request;
                match answer {
                    Err(e) => self.error(format!(
                        "could not import {}: the {} did not load ({e}). Nothing was changed.",
                        read.name,
                        read.reader()
                    )),
                    Ok(answer) => {
                        let refused = self.imported(&read.name, interop::wire::read_answer(&answer), (r.batch, r.head));
                        if read.pasted {
                            self.paste_refused(&r.text, refused);
                        }
                    }
                }
            }
            ImportAction::LoadShared(fragment)
                if fragment.strip_prefix('#').unwrap_or(&fragment).starts_with(share::DESIGN_PREFIX) =>
            {
                let data = fragment.strip_prefix('#').unwrap_or(&fragment)[share::DESIGN_PREFIX.len()..].to_string();
                let spec = match share::decode_design(&data) {
                    Err(e) => Err(e.to_string()),
                    Ok(json) => FamilySpec::from_json(&json).map_err(|e| e.to_string()),
                };
                match spec {
                    Err(e) => self.error(format!("the design link is damaged: {e}. Nothing was changed.")),
                    Ok(spec) => {
                        self.view = View::Designer;
                        self.apply(Action::Designer(DesignerAction::Derive(spec)));
                    }
                }
            }
            ImportAction::LoadShared(fragment)
                if fragment.strip_prefix('#').unwrap_or(&fragment).starts_with(share::MODEL_PREFIX) =>
            {
                match share::decode_model(&fragment.strip_prefix('#').unwrap_or(&fragment)[share::MODEL_PREFIX.len()..])
                {
                    Err(e) => self.error(format!("the model link is damaged: {e}. Nothing was changed.")),
                    Ok(link) => self.open_model_link(link),
                }
            }
            ImportAction::LoadShared(fragment) => match share::decode(&fragment, MAX_EDIT_N) {
                Err(e) => self.error(format!("the share link is damaged: {e}. Nothing was changed.")),
                Ok(shared) => {
                    self.load_file(MaskFile { labels: shared.labels, ..MaskFile::new(shared.mask) }, "share link");
                }
            },
            ImportAction::Restore(json) => match parse_mask_file(json.as_bytes()) {
                Ok(file) if file.mask.n() <= MAX_EDIT_N => {
                    self.set_live(Document::from_file(file));
                    self.info("restored your autosaved mask.".into());
                }
                Ok(_) => self.error("the autosaved mask is too large for the editor; it was ignored.".into()),
                Err(e) => self.error(format!("the autosaved mask is unreadable ({e}); it was ignored.")),
            },
        }
    }

    /// One export of the document, as `core::interop::export` reads it (block size: the
    /// overlay's): asked of the lazily loaded module in the web app, answered here elsewhere.
    pub fn export_request(&self, kind: ExportKind) -> interop::wire::ExportRequest {
        interop::wire::ExportRequest::new(&self.editor.doc.to_file(), kind, self.effective_block_size())
    }

    /// [`AppState::export_request`] exported here, when this build links the codecs (the CLI's
    /// and the tests' core); `None` in the web app, which asks the lazily loaded module.
    pub fn export_bytes(&self, kind: ExportKind) -> Option<Result<Vec<u8>, String>> {
        self.export_request(kind).export_here()
    }

    /// The designer link's fragment of the shown derivation (built-in families only: a family
    /// file may be large, and is shared as a file), computed once with the derivation.
    ///
    /// # Errors
    /// No derivation yet, or a family file.
    pub fn design_fragment(&self) -> Result<String, LinkError> {
        self.designer.design.as_ref().map_or(Err(LinkError::NothingDerived), |d| d.link.clone())
    }

    /// Opens a Models link: its model (gallery or config), its context, its layer, in the Models
    /// view. A refused model or context leaves the view as it was, with the reducer's message.
    fn open_model_link(&mut self, link: share::ModelLink) {
        let list = |v: Vec<String>| v.join(",");
        let mut then = vec![ModelsAction::SetContext {
            n: link.n.to_string(),
            docs: list(link.documents.iter().map(u64::to_string).collect()),
            encoder: link.encoder.map(|e| e.to_string()).unwrap_or_default(),
            images: list(link.images.iter().map(|[s, l]| format!("{s}:{l}")).collect()),
        }];
        then.extend(link.layer.map(ModelsAction::SetLayer));
        let (request, config) = match (link.gallery, link.config) {
            (Some(name), None) => (model::wire::Request::gallery(&name), None),
            (None, Some(text)) => {
                let name = link.name.unwrap_or_else(|| "linked config".to_string());
                (model::wire::Request::config(&name, text.as_bytes()), Some(name))
            }
            _ => {
                return self.error("the model link is damaged: it names no model, or two. Nothing was changed.".into());
            }
        };
        // The view changes only for a model the reader is asked for; the context and layer apply
        // once it is read (now, or when the lazily loaded reader answers).
        if request.is_ok() {
            self.view = View::Models;
        }
        self.read_model(request, config.as_deref(), then);
    }

    /// The share-link fragment of the current mask and its labels.
    pub fn share_fragment(&self) -> String {
        share::encode(&self.editor.doc.mask, self.editor.doc.labels.as_deref().map(Vec::as_slice))
    }

    /// Opens `file` as the new document (one undo step); `what` names it in the message. Refused
    /// (`false`, nothing changed) when the mask is larger than the editor handles.
    pub(super) fn load_file(&mut self, file: MaskFile, what: &str) -> bool {
        let n = file.mask.n();
        if n > MAX_EDIT_N {
            self.error(format!(
                "{what}: the mask has n = {n}; the editor handles up to {MAX_EDIT_N}. Nothing was changed."
            ));
            return false;
        }
        let stack = match &file.stack {
            Some((st, _)) => {
                format!(" with a {}-layer stack (kept in exports; the Flow view can run it)", st.layers().len())
            }
            None => String::new(),
        };
        self.commit(Document::from_file(file));
        self.info(format!("{what}: loaded a {n} x {n} mask{stack}."));
        true
    }

    /// Keeps a pasted text's refusal at a place for the paste box.
    fn paste_refused(&mut self, text: &str, refused: Option<interop::ImportError>) {
        if let Some(interop::ImportError::MaskMod(interop::MaskModError::At { line, col, what })) = refused {
            self.editor.paste_refusal = Some(Rc::new(PasteRefusal::new(text, line, col, what, self.actions)));
        }
    }

    /// Without the reader linked in, a `mask_mod` waits in [`super::EditorState::reading`] for the
    /// lazily loaded one (a newer import replaces an unanswered one): whether it does.
    fn read_later(
        &mut self,
        name: &str,
        bytes: &[u8],
        size: interop::SizeHint,
        (batch, head): (u64, u64),
        pasted: bool,
    ) -> bool {
        // Any newer import replaces an unanswered one.
        self.editor.reading = None;
        if self.reader_linked || !interop::wire::needs_lazy_reader(bytes) {
            return false;
        }
        // The bytes as the linked importer reads them, byte for byte.
        let request = Rc::new(interop::wire::Request::of_bytes(bytes, size, batch, head));
        let read = PendingRead { id: self.actions, name: name.to_string(), request, pasted };
        self.info(format!("reading {name}: loading the {}…", read.reader()));
        self.editor.reading = Some(Rc::new(read));
        true
    }

    /// Reads any input the core's importer knows (a `mask_mod` at `(b, h)`); a refused one changes
    /// nothing and is returned. A successful one clears the paste box's refusal.
    fn import(
        &mut self,
        name: &str,
        bytes: &[u8],
        size: interop::SizeHint,
        (batch, head): (u64, u64),
    ) -> Option<interop::ImportError> {
        self.imported(name, interop::import_mask_at(bytes, size, batch, head), (batch, head))
    }

    /// Applies an import's result: a refused one changes nothing and is returned; a successful one
    /// opens the mask and clears the paste box's refusal.
    fn imported(
        &mut self,
        name: &str,
        result: Result<(MaskFile, interop::Source), interop::ImportError>,
        (batch, head): (u64, u64),
    ) -> Option<interop::ImportError> {
        match result {
            Err(e) => {
                match &e {
                    interop::ImportError::Format(f) => {
                        self.error(format!("could not import {name}: {}. Nothing was changed.", explain(f)))
                    }
                    e => self.error(format!("could not import {name}: {e}. Nothing was changed.")),
                }
                Some(e)
            }
            Ok((file, source)) => {
                let (what, notes) = match source {
                    interop::Source::Kernel { sized: true } => {
                        (format!("imported the FlashAttention window {name} at the editor's size"), String::new())
                    }
                    interop::Source::Kernel { sized: false } => {
                        (format!("imported the kernel parameters {name}"), String::new())
                    }
                    interop::Source::MaskMod { name: f, n, report } => (
                        format!("imported mask_mod `{f}` from {name} at n = {n}"),
                        mask_mod_notes(&report, batch, head),
                    ),
                    interop::Source::Npy | interop::Source::MaskFile => (format!("imported {name}"), String::new()),
                };
                if self.load_file(file, &what) {
                    self.editor.paste_refusal = None;
                    if let Some(m) = self.message.as_mut() {
                        m.text.push_str(&notes);
                    }
                }
                None
            }
        }
    }
}

/// A `mask_mod` import waiting for the reader the app loads on first use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRead {
    /// Tells this read's answer from a stale one.
    pub id: u64,
    /// What it was, for messages.
    pub name: String,
    /// What the reader is asked.
    pub request: Rc<interop::wire::Request>,
    /// Pasted (a refusal at a place goes to the paste box), not a file.
    pub pasted: bool,
}

impl PendingRead {
    /// The reader it waits for, in messages: the `mask_mod` reader, or the reader of `.npy`
    /// arrays and kernel parameters (the same module).
    pub fn reader(&self) -> &'static str {
        if interop::is_mask_mod(self.request.text.as_bytes()) { "mask_mod reader" } else { "reader" }
    }
}

/// What the message adds about an imported `mask_mod`: the indices it reads (the mask shown is
/// one of several) and the statements the import skipped.
fn mask_mod_notes(report: &interop::MaskModReport, batch: u64, head: u64) -> String {
    let mut notes = String::new();
    let reads = match (report.uses_batch, report.uses_head) {
        (true, true) => Some(("b and h", format!("b = {batch}, h = {head}"), "batches and heads")),
        (true, false) => Some(("b", format!("b = {batch}"), "batches")),
        (false, true) => Some(("h", format!("h = {head}"), "heads")),
        (false, false) => None,
    };
    if let Some((which, at, others)) = reads {
        notes.push_str(&format!(" It reads {which}: shown at {at}; other {others} give other masks."));
    }
    if let Some((line, _, why)) = report.skipped.first() {
        let count = report.skipped.len();
        let statements = if count == 1 { "statement" } else { "statements" };
        notes.push_str(&format!(" Skipped {count} {statements}; the first, line {line}: {why}."));
    }
    notes
}

/// Most characters of a refused line the paste box shows (its width in the left column).
pub const REFUSAL_WIDTH: usize = 34;

/// Where a pasted text was refused, ready to show like a Python traceback: the line as pasted
/// (dedented, clipped around the place), a caret under the column, and the place as a range of
/// the text for the box to select.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PasteRefusal {
    /// 1-based line, as the core reports it.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    /// What was refused and why.
    pub what: String,
    /// The refused line: leading blanks removed, tabs as spaces, at most [`REFUSAL_WIDTH`]
    /// characters around the column (`…` where cut).
    pub source: String,
    /// Blanks up to the column in `source`, then `^`.
    pub caret: String,
    /// The place as a range of the pasted text in UTF-16 units (what `setSelectionRange` takes):
    /// the refused character, or an empty range at the end of a line.
    pub select: (u32, u32),
    /// Tells one refusal from the next, even an identical one (the box selects the place again).
    pub seq: u64,
}

impl PasteRefusal {
    /// The refusal at `line`, `col` of `text`, counted as the core's reader counts them (lines
    /// end at `\n`, `\r\n` or `\r`; a leading byte-order mark is not a column).
    pub fn new(text: &str, line: usize, col: usize, what: String, seq: u64) -> PasteRefusal {
        let body = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut start16 = usize::from(body.len() != text.len());
        let mut rest = body;
        for _ in 1..line {
            let Some(end) = rest.find(['\n', '\r']) else {
                start16 += utf16_len(rest);
                rest = "";
                break;
            };
            let eol = if rest[end..].starts_with("\r\n") { 2 } else { 1 };
            start16 += utf16_len(&rest[..end]) + eol;
            rest = &rest[end + eol..];
        }
        let chars: Vec<char> = rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())].chars().collect();
        let at = (col.max(1) - 1).min(chars.len());
        let from = start16 + chars[..at].iter().map(|c| c.len_utf16()).sum::<usize>();
        let to = from + chars.get(at).map_or(0, |c| c.len_utf16());
        let (source, caret) = clip_line(&chars, at);
        let select = (u32::try_from(from).unwrap_or(u32::MAX), u32::try_from(to).unwrap_or(u32::MAX));
        PasteRefusal { line, col, what, source, caret, select, seq }
    }
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The line shown and its caret line: dedented, tabs as spaces, cut to [`REFUSAL_WIDTH`] with
/// the caret kept in view.
fn clip_line(chars: &[char], at: usize) -> (String, String) {
    let indent = chars.iter().take_while(|c| c.is_whitespace()).count().min(at);
    let line: Vec<char> = chars[indent..].iter().map(|&c| if c.is_whitespace() { ' ' } else { c }).collect();
    let mut caret = at - indent;
    // Enough of the line after the caret to read what is refused.
    const AFTER: usize = 10;
    let mut shown: Vec<char> = Vec::new();
    if line.len() > REFUSAL_WIDTH && caret + AFTER > REFUSAL_WIDTH {
        let from = (caret + AFTER + 1).saturating_sub(REFUSAL_WIDTH).min(caret);
        shown.push('…');
        shown.extend(&line[from..]);
        caret = caret - from + 1;
    } else {
        shown.extend(&line);
    }
    if shown.len() > REFUSAL_WIDTH {
        shown.truncate(REFUSAL_WIDTH - 1);
        shown.push('…');
    }
    (shown.into_iter().collect(), format!("{}^", " ".repeat(caret)))
}

/// A format error in words, with a hint for the common mistakes.
fn explain(e: &FormatError) -> String {
    match e {
        FormatError::Input(InputError::TooLarge { .. }) => {
            format!("{e} (the editor handles masks up to {MAX_EDIT_N} x {MAX_EDIT_N})")
        }
        _ => e.to_string(),
    }
}
