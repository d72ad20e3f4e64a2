//! The one store as the components see it: [`AppState`] reduced by Yew's `use_reducer`,
//! [`Store`], the reducer's handle as a component property, and [`use_groups`], the callbacks of
//! the groups of actions that panels take instead of the whole [`Action`] enum.

use std::rc::Rc;

use yew::prelude::*;

use crate::state::{Action, AppState, DesignerAction, EditAction, FlowAction, ImportAction, ModelsAction, ViewAction};

/// [`AppState`] as Yew's reducer state (the store crate knows no Yew, so the shell wraps it);
/// it reads as the state it holds.
#[derive(Clone)]
pub struct Reduced(pub AppState);

impl Reducible for Reduced {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        let mut next = Rc::unwrap_or_clone(self);
        next.0.apply(action);
        Rc::new(next)
    }
}

impl std::ops::Deref for Reduced {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.0
    }
}

/// The store as a component property: the reducer's handle (a callback reads the state when it
/// runs), equal to another while no action has been applied in between, so a page component
/// renders when the state changed and not otherwise.
#[derive(Clone)]
pub struct Store(UseReducerHandle<Reduced>, u64);

impl Store {
    /// The store of `handle`, equal to another while no action is applied.
    pub fn new(handle: &UseReducerHandle<Reduced>) -> Self {
        Store(handle.clone(), handle.actions)
    }
}

impl std::ops::Deref for Store {
    type Target = AppState;
    fn deref(&self) -> &AppState {
        &self.0
    }
}

impl PartialEq for Store {
    fn eq(&self, other: &Self) -> bool {
        self.1 == other.1
    }
}

/// The store's dispatcher narrowed to each group of actions: a panel that only edits takes a
/// `Callback<EditAction>`.
pub struct Groups {
    /// `Action::Edit`.
    pub edit: Callback<EditAction>,
    /// `Action::Import`.
    pub import: Callback<ImportAction>,
    /// `Action::Designer`.
    pub designer: Callback<DesignerAction>,
    /// `Action::Flow`.
    pub flow: Callback<FlowAction>,
    /// `Action::Models`.
    pub models: Callback<ModelsAction>,
    /// `Action::View`.
    pub view: Callback<ViewAction>,
}

/// [`Groups`] of `dispatch`, made once per component, so the panels' properties stay equal across
/// renders. All groups in one memo rather than one generic hook per group: one copy of the hook's
/// code in the wasm instead of one per action type.
#[hook]
pub fn use_groups(dispatch: &Callback<Action>) -> Rc<Groups> {
    let d = dispatch.clone();
    use_memo((), move |_| Groups {
        edit: d.reform(Action::Edit),
        import: d.reform(Action::Import),
        designer: d.reform(Action::Designer),
        flow: d.reform(Action::Flow),
        models: d.reform(Action::Models),
        view: d.reform(Action::View),
    })
}
