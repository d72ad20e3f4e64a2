//! What the interpreter knows about memory that values share: the views of each tensor's base
//! (used by [`super::views`]), the sets the text made with whether their order is CPython's
//! (used by [`super::pyset`]), and the tuples that are torch's (values, indices) results. Plain
//! data, below the runtime that holds it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use super::tensor::Tensor;
use super::value::{Shared, Value};

/// A view's flat positions in its base.
pub(super) type Map = Rc<Vec<usize>>;

pub(super) struct Entry {
    view: Weak<RefCell<Tensor>>,
    base: Shared<Tensor>,
    /// The base's flat position of each element; `None` when torch may have copied instead.
    map: Option<Rc<Vec<usize>>>,
}

/// What the registry knows of one tensor: its base, if it is a view, and its views, if it is a
/// base (one map for both, so that wasm carries one hash table's code).
#[derive(Default)]
struct Slot {
    entry: Option<Entry>,
    views: Vec<Weak<RefCell<Tensor>>>,
}

/// Every live view and its base.
#[derive(Default)]
pub(super) struct Registry {
    slots: HashMap<usize, Slot>,
    /// Registrations since the last sweep of dead views.
    since_sweep: usize,
}

/// A tensor's identity: the address of its cell.
pub(super) fn id(t: &Shared<Tensor>) -> usize {
    Rc::as_ptr(t) as *const () as usize
}

impl Registry {
    /// Records a view of `base` (never itself a view) with its map.
    pub(super) fn insert(&mut self, view: &Shared<Tensor>, base: Shared<Tensor>, map: Option<Map>) {
        self.since_sweep += 1;
        if self.since_sweep > 4096 && self.since_sweep > self.slots.len() {
            self.sweep();
        }
        self.slots.entry(id(&base)).or_default().views.push(Rc::downgrade(view));
        self.slots.entry(id(view)).or_default().entry = Some(Entry { view: Rc::downgrade(view), base, map });
    }

    fn sweep(&mut self) {
        self.slots.retain(|_, s| {
            s.entry = s.entry.take().filter(|e| e.view.strong_count() > 0);
            s.views.retain(|w| w.strong_count() > 0);
            s.entry.is_some() || !s.views.is_empty()
        });
        self.since_sweep = 0;
    }

    /// The base of a view and the view's map into it (`None` map: uncertain).
    pub(super) fn entry(&self, t: &Shared<Tensor>) -> Option<(&Shared<Tensor>, Option<&Map>)> {
        let e = self.slots.get(&id(t))?.entry.as_ref()?;
        (e.view.strong_count() > 0).then_some((&e.base, e.map.as_ref()))
    }

    /// The tensor that owns a tensor's memory (itself when it is no view).
    pub(super) fn base_of(&self, t: &Shared<Tensor>) -> Shared<Tensor> {
        self.entry(t).map_or_else(|| t.clone(), |(b, _)| b.clone())
    }

    /// Every live view of a base.
    pub(super) fn views_of(&self, base: &Shared<Tensor>) -> Vec<Shared<Tensor>> {
        self.slots.get(&id(base)).map(|s| s.views.iter().filter_map(Weak::upgrade).collect()).unwrap_or_default()
    }

    /// Whether the tensor's elements lie in its memory in order with no gaps (`None`: unknown).
    pub(super) fn is_contiguous(&self, t: &Shared<Tensor>) -> Option<bool> {
        match self.entry(t) {
            None => Some(true),
            Some((_, None)) => None,
            Some((_, Some(m))) => Some(m.windows(2).all(|w| w[1] == w[0] + 1)),
        }
    }
}

type WeakList = std::rc::Weak<std::cell::RefCell<Vec<Value>>>;

/// Sets made so far: (address, the list that holds the set, whether its order is CPython's).
#[derive(Default)]
pub(super) struct Sets {
    made: Vec<(usize, WeakList, bool)>,
    /// Nonzero while a consumer that ignores order (`sorted`, `len`, `in`, `min`, ...) runs.
    pub(super) order_free: u32,
}

impl Sets {
    /// Records a set the text made and whether its order is CPython's.
    pub(super) fn push(&mut self, cell: &Shared<Vec<Value>>, ordered: bool) {
        if self.made.len() >= 4096 && self.made.len().is_power_of_two() {
            self.made.retain(|(_, w, _)| w.strong_count() > 0);
        }
        self.made.push((Rc::as_ptr(cell) as *const () as usize, Rc::downgrade(cell), ordered));
    }
    /// Whether a value is a set the text made.
    pub(super) fn is_set(&self, v: &Value) -> bool {
        !self.made.is_empty() && self.find(v).is_some()
    }
    pub(super) fn find(&self, v: &Value) -> Option<bool> {
        let Value::List(l) = v else { return None };
        let id = Rc::as_ptr(l) as *const () as usize;
        self.made.iter().find(|(i, w, _)| *i == id && w.strong_count() > 0).map(|(_, _, o)| *o)
    }
}

/// torch's (values, indices) results made so far (`sort`, `topk`, `max(dim)`, `min(dim)`): tuples
/// that also answer `.values` and `.indices`, as `torch.return_types` do; and torch's shapes
/// (`torch.Size`: `x.shape`, `x.size()`, `torch.Size(...)`), tuples that also answer `.numel()`.
/// Any other tuple, one built from them included (`tuple(r)`, `r[:]`), is a plain tuple.
#[derive(Default)]
pub(super) struct Pairs {
    /// Each tuple's address, a weak reference to it, and whether it is a shape.
    made: Vec<(usize, Weak<Vec<Value>>, bool)>,
}

impl Pairs {
    /// A (values, indices) result.
    pub(super) fn pair(&mut self, values: Value, indices: Value) -> Value {
        self.mark(vec![values, indices], false)
    }
    /// A `torch.Size` of these dimensions.
    pub(super) fn size(&mut self, dims: impl Iterator<Item = usize>) -> Value {
        self.mark(dims.map(|d| Value::Int(d as i64)).collect(), true)
    }
    fn mark(&mut self, items: Vec<Value>, size: bool) -> Value {
        if self.made.len() >= 4096 && self.made.len().is_power_of_two() {
            self.made.retain(|(_, w, _)| w.strong_count() > 0);
        }
        let tuple = Rc::new(items);
        // The weak reference keeps the allocation: no other tuple takes its address meanwhile.
        self.made.push((Rc::as_ptr(&tuple) as *const () as usize, Rc::downgrade(&tuple), size));
        Value::Tuple(tuple)
    }
    /// Whether a tuple is a shape (`torch.Size`).
    pub(super) fn is_size(&self, tuple: &Rc<Vec<Value>>) -> bool {
        self.kind(tuple) == Some(true)
    }
    fn kind(&self, tuple: &Rc<Vec<Value>>) -> Option<bool> {
        let id = Rc::as_ptr(tuple) as *const () as usize;
        self.made.iter().find(|(i, w, _)| *i == id && w.strong_count() > 0).map(|m| m.2)
    }
    /// Whether a tuple is a (values, indices) result.
    pub(super) fn is_pair(&self, tuple: &Rc<Vec<Value>>) -> bool {
        self.kind(tuple) == Some(false)
    }
}
