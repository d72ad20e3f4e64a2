//! [`tuple_wire!`]: a struct on the wires of the lazily loaded modules as a JSON array of its
//! fields. serde reads a tuple struct with no field names to match, so the first download's
//! decoder of an answer is about half the size of a named struct's (issue 31).

/// Applies `$f` to `$v`, or gives `$v` as it is.
macro_rules! convert {
    ($v:expr) => {
        $v
    };
    ($v:expr, $f:expr) => {
        ($f)($v)
    };
}

/// `$wire`: the fields of `$name` in order, as a tuple struct, and the conversions both ways
/// (each field as it is, or through the two functions given after `=>`). serde writes a tuple
/// struct as a JSON array and reads it with no field names to match, so the page's decoder of an
/// answer is about half the size of a named struct's (the first download's size, issue 31). The
/// struct literal names every field, so a field left out does not compile.
macro_rules! tuple_wire {
    ($name:ident as $wire:ident { $($(#[$m:meta])* $field:ident: $ty:ty $(=> $to:expr, $from:expr)?),* $(,)? }) => {
        #[doc = concat!("[`", stringify!($name), "`] on the wire: its fields in order, as a JSON array.")]
        #[derive(Serialize, Deserialize)]
        struct $wire($($(#[$m])* $ty),*);

        impl From<$name> for $wire {
            fn from(v: $name) -> Self {
                $wire($($crate::tuple_wire::convert!(v.$field $(, $to)?)),*)
            }
        }

        impl From<$wire> for $name {
            fn from(w: $wire) -> Self {
                let $wire($($field),*) = w;
                $name { $($field: $crate::tuple_wire::convert!($field $(, $from)?)),* }
            }
        }
    };
}

/// A list of `T` as a list of `W`.
pub(crate) fn each<T, W: From<T>>(list: Vec<T>) -> Vec<W> {
    list.into_iter().map(W::from).collect()
}

pub(crate) use {convert, tuple_wire};
