//! What the app shows: the view, the layer and its animation, hover, the order view, the
//! block-sparsity overlay and the message line ([`ViewAction`]).

use super::{AppState, Level, Message, OrderView, SideView};

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

/// What is shown (reduced here): nothing here changes the document.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewAction {
    /// Show layer `L` (clamped to `0..=L*+1`).
    SetLayer(usize),
    /// Step the layer by one up or down.
    StepLayer(i32),
    /// Start or stop the animation.
    TogglePlay,
    /// One animation tick.
    Tick,
    /// Hover a cell (or leave the grid).
    HoverCell(Option<(usize, usize)>),
    /// Hover a class (or leave it).
    HoverClass(Option<usize>),
    /// Switch the order view.
    SetOrderView(OrderView),
    /// Show a message (from IO in the shell: clipboard, downloads).
    Notify(Level, String),
    /// Hide the message.
    Dismiss,
    /// Show or hide the block-sparsity overlay.
    SetShowBlocks(bool),
    /// Set the block size of the overlay, statistics and exports (1..=n; 0 or more is clamped).
    SetBlockSize(usize),
    /// Show the editor, the designer or the Models view.
    SetView(View),
    /// Show the order view or the Flow view beside the grid.
    SetSideView(SideView),
}

impl AppState {
    /// What is shown.
    pub(super) fn apply_view(&mut self, action: ViewAction) {
        match action {
            ViewAction::SetLayer(l) => self.editor.layer = l.min(self.max_layer()),
            ViewAction::StepLayer(d) => {
                self.editor.playing = false;
                let l = self.editor.layer as i64 + i64::from(d);
                self.editor.layer = l.clamp(0, self.max_layer() as i64) as usize;
            }
            ViewAction::TogglePlay => {
                self.editor.playing = !self.editor.playing;
                if self.editor.playing && self.editor.layer >= self.max_layer() {
                    self.editor.layer = 0;
                }
            }
            ViewAction::Tick => {
                if self.editor.playing {
                    if self.editor.layer >= self.max_layer() {
                        self.editor.playing = false;
                    } else {
                        self.editor.layer += 1;
                    }
                }
            }
            ViewAction::HoverCell(c) => self.editor.hover_cell = c,
            ViewAction::HoverClass(c) => self.editor.hover_class = c,
            ViewAction::SetOrderView(v) => self.editor.order_view = v,
            ViewAction::Notify(level, text) => self.message = Some(Message { level, text }),
            ViewAction::Dismiss => self.message = None,
            ViewAction::SetShowBlocks(on) => self.editor.show_blocks = on,
            ViewAction::SetBlockSize(b) => self.set_block_size(b),
            ViewAction::SetView(v) => self.set_view(v),
            ViewAction::SetSideView(v) => {
                self.side = v;
                self.editor.layer = self.editor.layer.min(self.max_layer());
            }
        }
    }
}
