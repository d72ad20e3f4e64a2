//! [`KeyedRun`]: the one record of the shell's keyed runs (Flow, Models): which key the shown
//! status belongs to, its progress or failure, and how many reports arrived for a key that was no
//! longer current (dropped, never shown).

/// The status of the runs of one view, keyed by what they compute (`K`); `S` is the view's
/// status (its `Default` is idle).
#[derive(Clone, Debug, PartialEq)]
pub struct KeyedRun<K, S> {
    /// The key `status` belongs to.
    pub key: Option<K>,
    /// Progress or failure of the run for `key`.
    pub status: S,
    /// Reports dropped because their key was no longer current.
    pub dropped: u64,
}

impl<K, S: Default> Default for KeyedRun<K, S> {
    fn default() -> Self {
        KeyedRun { key: None, status: S::default(), dropped: 0 }
    }
}

impl<K: Copy + PartialEq, S: Clone + Default> KeyedRun<K, S> {
    /// The status of the run for `key` (idle for any other key, or none).
    pub fn status_for(&self, key: Option<K>) -> S {
        if key.is_some() && self.key == key { self.status.clone() } else { S::default() }
    }

    /// Records `status` for `key` when it is `current`; otherwise counts the report as dropped.
    /// Returns whether it was recorded.
    pub fn report(&mut self, key: K, current: Option<K>, status: S) -> bool {
        if Some(key) != current {
            self.dropped += 1;
            return false;
        }
        self.key = Some(key);
        self.status = status;
        true
    }

    /// Forgets the status (a retry: the run starts afresh).
    pub fn retry(&mut self) {
        self.key = None;
        self.status = S::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_for_another_key_is_dropped_and_the_status_is_per_key() {
        let mut run: KeyedRun<u32, Option<&str>> = KeyedRun::default();
        assert!(run.report(1, Some(1), Some("running")));
        assert_eq!(run.status_for(Some(1)), Some("running"));
        assert_eq!(run.status_for(Some(2)), None, "another key is idle");
        assert_eq!(run.status_for(None), None);
        assert!(!run.report(1, Some(2), Some("late")), "the key changed");
        assert!(!run.report(3, None, Some("late")));
        assert_eq!((run.dropped, run.status_for(Some(1))), (2, Some("running")));
        run.retry();
        assert_eq!((run.key, run.status, run.dropped), (None, None, 2));
    }
}
