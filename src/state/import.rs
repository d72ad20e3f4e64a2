//! What comes into the editor and what goes out: presets, imported files and pasted text (the
//! core's `import_mask`), share links, the autosave; exports and the share-link fragments. A
//! refused input changes nothing but the message.

use std::rc::Rc;

use hasseflow_core::format::{FormatError, InputError, MaskFile, parse_mask_file};
use hasseflow_core::interop::{self, ExportKind};
use hasseflow_core::presets::{build_preset, preset_labels, preset_provenance};

use super::{Action, AppState, Document, FamilySpec, LinkError, MAX_EDIT_N, View};
use crate::share;

impl AppState {
    /// Presets, imports, share links and the autosave.
    pub(super) fn apply_import(&mut self, action: Action) {
        match action {
            Action::LoadPreset { name, n, params } => match build_preset(&name, n, &params, MAX_EDIT_N) {
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
            Action::Import { name, bytes } => self.import(&name, &bytes, interop::SizeHint::Fallback(self.n())),
            Action::ImportText { name, text, n } => self.import(&name, text.as_bytes(), interop::SizeHint::Given(n)),
            Action::LoadShared(fragment)
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
                        self.apply(Action::Derive(spec));
                    }
                }
            }
            Action::LoadShared(fragment) => match share::decode(&fragment, MAX_EDIT_N) {
                Err(e) => self.error(format!("the share link is damaged: {e}. Nothing was changed.")),
                Ok(shared) => {
                    self.load_file(MaskFile { labels: shared.labels, ..MaskFile::new(shared.mask) }, "share link");
                }
            },
            Action::Restore(json) => match parse_mask_file(json.as_bytes()) {
                Ok(file) if file.mask.n() <= MAX_EDIT_N => {
                    self.set_live(Document::from_file(file));
                    self.info("restored your autosaved mask.".into());
                }
                Ok(_) => self.error("the autosaved mask is too large for the editor; it was ignored.".into()),
                Err(e) => self.error(format!("the autosaved mask is unreadable ({e}); it was ignored.")),
            },
            _ => {}
        }
    }

    /// The bytes of one export of the document, from `core::interop::export` (block size: the
    /// overlay's).
    ///
    /// # Errors
    /// The core's export error.
    pub fn export_bytes(&self, kind: ExportKind) -> Result<Vec<u8>, interop::ExportError> {
        interop::export(&self.doc.to_file(), kind, self.effective_block_size())
    }

    /// The designer link's fragment of the shown derivation (built-in families only: a family
    /// file may be large, and is shared as a file), computed once with the derivation.
    ///
    /// # Errors
    /// No derivation yet, or a family file.
    pub fn design_fragment(&self) -> Result<String, LinkError> {
        self.design.as_ref().map_or(Err(LinkError::NothingDerived), |d| d.link.clone())
    }

    /// The share-link fragment of the current mask and its labels.
    pub fn share_fragment(&self) -> String {
        share::encode(&self.doc.mask, self.doc.labels.as_deref().map(Vec::as_slice))
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

    /// Reads any input the core's importer knows; a refused one changes nothing.
    fn import(&mut self, name: &str, bytes: &[u8], size: interop::SizeHint) {
        match interop::import_mask(bytes, size) {
            Err(interop::ImportError::Format(e)) => {
                self.error(format!("could not import {name}: {}. Nothing was changed.", explain(&e)))
            }
            Err(e) => self.error(format!("could not import {name}: {e}. Nothing was changed.")),
            Ok((file, source)) => {
                let what = match source {
                    interop::Source::Kernel { sized: true } => {
                        format!("imported the FlashAttention window {name} at the editor's size")
                    }
                    interop::Source::Kernel { sized: false } => format!("imported the kernel parameters {name}"),
                    interop::Source::MaskMod { name: f, n, .. } => {
                        format!("imported mask_mod `{f}` from {name} at n = {n}")
                    }
                    interop::Source::Npy | interop::Source::MaskFile => format!("imported {name}"),
                };
                self.load_file(file, &what);
            }
        }
    }
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
