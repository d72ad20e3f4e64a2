//! Named text parameters read by their [`ParamSpec`]: the one place that parses a parameter's
//! text by its kind and checks its bounds, for the preset catalog and the built-in task families
//! (`crate::derive::builtin`) alike.

use std::collections::BTreeMap;

use super::{ParamKind, ParamSpec};

impl ParamSpec {
    /// `text` as this parameter's non-negative integer, at least its minimum.
    ///
    /// # Errors
    /// What is wrong, in a few words (`must be at least 1`).
    pub fn parse_int(&self, text: &str) -> Result<usize, String> {
        let min = match self.kind {
            ParamKind::Int { min } => min,
            _ => 0,
        };
        let x: usize = text.trim().parse().map_err(|_| "not a non-negative integer".to_string())?;
        if x < min {
            return Err(format!("must be at least {min}"));
        }
        Ok(x)
    }

    /// `text` as a probability in `[0, 1]`.
    ///
    /// # Errors
    /// What is wrong, in a few words.
    pub fn parse_fraction(&self, text: &str) -> Result<f64, String> {
        let x = parse_decimal(text.trim())
            .ok_or_else(|| "not a decimal number of at most 15 digits (e.g. 0.25)".to_string())?;
        if !(0.0..=1.0).contains(&x) {
            return Err("must be between 0 and 1".into());
        }
        Ok(x)
    }

    /// `text` as a flag: `true`, `1`, `yes` or `false`, `0`, `no`.
    ///
    /// # Errors
    /// Any other text.
    pub fn parse_flag(&self, text: &str) -> Result<bool, String> {
        match text.trim() {
            "true" | "1" | "yes" => Ok(true),
            "false" | "0" | "no" => Ok(false),
            _ => Err("expected true or false".into()),
        }
    }

    /// `text` as comma-separated non-negative integers (empty items skipped).
    ///
    /// # Errors
    /// The first item that is not one.
    pub fn parse_list(&self, text: &str) -> Result<Vec<usize>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<usize>().map_err(|_| format!("'{s}' is not a non-negative integer")))
            .collect()
    }

    /// `text` as one of this choice parameter's words.
    ///
    /// # Errors
    /// Any other word, or a parameter that is not a choice.
    pub fn parse_choice(&self, text: &str) -> Result<&'static str, String> {
        let ParamKind::Choice(options) = self.kind else { return Err("not a choice parameter".into()) };
        options
            .iter()
            .find(|o| **o == text.trim())
            .copied()
            .ok_or_else(|| format!("expected one of {}", options.join(", ")))
    }

    /// Checks `text` by this parameter's kind, whatever the kind.
    ///
    /// # Errors
    /// What is wrong, as the kind's parser says it.
    pub fn check(&self, text: &str) -> Result<(), String> {
        match self.kind {
            ParamKind::Int { .. } => self.parse_int(text).map(drop),
            ParamKind::Fraction => self.parse_fraction(text).map(drop),
            ParamKind::Bool => self.parse_flag(text).map(drop),
            ParamKind::IntList => self.parse_list(text).map(drop),
            ParamKind::Choice(_) => self.parse_choice(text).map(drop),
        }
    }
}

/// A parameter value that does not parse or is out of range: whose (`owner`, a preset or a
/// family), which, the text, and why. Each catalog turns it into its own error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadValue {
    pub(crate) owner: &'static str,
    pub(crate) param: String,
    pub(crate) value: String,
    pub(crate) reason: String,
}

/// A table of declared parameters (a preset's, a built-in family's), read through this trait
/// object, so the readers below are compiled once rather than once per table type.
pub(crate) trait ParamTable {
    /// The `i`th declared parameter, in the table's order (`None` past the last).
    fn param(&self, i: usize) -> Option<&'static ParamSpec>;
}

impl ParamTable for &'static [ParamSpec] {
    fn param(&self, i: usize) -> Option<&'static ParamSpec> {
        self.get(i)
    }
}

/// `params`' parameters, in order.
fn specs(params: &dyn ParamTable) -> impl Iterator<Item = &'static ParamSpec> + '_ {
    (0..).map_while(|i| params.param(i))
}

/// The declared parameter called `name`.
fn find(params: &dyn ParamTable, name: &str) -> Option<&'static ParamSpec> {
    specs(params).find(|p| p.name == name)
}

/// The first of `given`'s names that `params` does not declare.
pub(crate) fn unknown_param<'a>(params: &dyn ParamTable, given: &'a BTreeMap<String, String>) -> Option<&'a String> {
    given.keys().find(|k| find(params, k).is_none())
}

/// `params`' names, comma-separated (`no parameters` for none): what an unknown name is told.
pub(crate) fn param_names(params: &dyn ParamTable) -> String {
    let names: Vec<_> = specs(params).map(|p| p.name).collect();
    if names.is_empty() {
        return "no parameters".into();
    }
    names.join(", ")
}

/// Typed access to named text parameters, defaults filled in: `owner`'s declared `params` and the
/// texts `given` for them.
pub(crate) struct Args<'a> {
    pub(crate) owner: &'static str,
    pub(crate) params: &'a dyn ParamTable,
    pub(crate) given: &'a BTreeMap<String, String>,
}

impl Args<'_> {
    /// The declared parameter `name` and its text (given, or the default).
    pub(crate) fn raw(&self, name: &str) -> (&'static ParamSpec, String) {
        let p = find(self.params, name).expect("parameter declared in its table");
        (p, self.given.get(name).cloned().unwrap_or_else(|| p.default.to_string()))
    }

    pub(crate) fn bad(&self, name: &str, value: &str, reason: impl Into<String>) -> BadValue {
        BadValue { owner: self.owner, param: name.into(), value: value.into(), reason: reason.into() }
    }

    fn read<T>(&self, name: &str, parse: impl Fn(&ParamSpec, &str) -> Result<T, String>) -> Result<T, BadValue> {
        let (p, v) = self.raw(name);
        parse(p, &v).map_err(|reason| self.bad(name, &v, reason))
    }

    pub(crate) fn int(&self, name: &str) -> Result<usize, BadValue> {
        self.read(name, ParamSpec::parse_int)
    }

    pub(crate) fn fraction(&self, name: &str) -> Result<f64, BadValue> {
        self.read(name, ParamSpec::parse_fraction)
    }

    pub(crate) fn flag(&self, name: &str) -> Result<bool, BadValue> {
        self.read(name, ParamSpec::parse_flag)
    }

    pub(crate) fn list(&self, name: &str) -> Result<Vec<usize>, BadValue> {
        self.read(name, ParamSpec::parse_list)
    }

    pub(crate) fn choice(&self, name: &str) -> Result<&'static str, BadValue> {
        self.read(name, ParamSpec::parse_choice)
    }
}

/// A decimal number such as `0.25`, `.5`, `1` or `2.5e-3`, exactly as `str::parse::<f64>` reads
/// it, for up to 15 significant digits and a decimal exponent within ±22; `None` for anything
/// else. Both the digits and the power of ten are then exact doubles, so one division or
/// multiplication rounds correctly (Clinger's fast path). Written out because std's parser carries
/// a 10 KB table of powers of five into the wasm for the one parameter that needs a fraction.
pub(super) fn parse_decimal(text: &str) -> Option<f64> {
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(at) => (&text[..at], text[at + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.len() + fraction.len() == 0 || !(whole.bytes().chain(fraction.bytes())).all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Trailing zeros after the point change nothing.
    let fraction = fraction.trim_end_matches('0');
    let digits = whole.bytes().chain(fraction.bytes()).skip_while(|&b| b == b'0');
    let (mut value, mut count) = (0u64, 0usize);
    for b in digits {
        value = value * 10 + u64::from(b - b'0');
        count += 1;
        if count > 15 {
            return None;
        }
    }
    let power = exponent.checked_sub(i32::try_from(fraction.len()).ok()?)?;
    const POWERS: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ];
    let scale = *POWERS.get(usize::try_from(power.unsigned_abs()).ok()?)?;
    // `value` has at most 15 digits, so it is below 2^53 and exact as a double.
    #[allow(clippy::cast_precision_loss)]
    let value = value as f64;
    Some(if power < 0 { value / scale } else { value * scale })
}
