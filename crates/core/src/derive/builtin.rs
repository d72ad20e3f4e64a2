//! [`BuiltinFamily`]: a built-in task family with its options, as one value that the CLI builds
//! from its flags, the app edits in its form and saves in autosaves and designer links (serde),
//! and both turn into a family and, once derived, into a mask file.
//!
//! # JSON
//! Internally tagged by `"family"`; the other fields are those of the options struct
//! ([`AutoregressiveOptions`], [`BlockOptions`], [`ButterflyOptions`], [`MaeOptions`]), and every
//! field but `n`, `block` (block) and `span` (mae) may be left out (its default of `new`):
//!
//! ```json
//! {"family": "autoregressive", "n": 5, "bidirectional": false, "pad": false}
//! {"family": "block", "n": 6, "block": 2, "clean": "full", "query": "causal", "prompt": 0,
//!  "minimal": false, "order": "interleaved"}
//! {"family": "butterfly", "n": 4, "minimal": false, "aggregate": {"neighbours": 1}}
//! {"family": "mae", "n": 8, "span": 2, "stride": 0, "causal_encoder": false}
//! ```
//! (`"aggregate": "mask"` for mask tokens). Unknown fields are refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::families::{
    Aggregate, AutoregressiveOptions, BlockOptions, ButterflyOptions, MaeOptions, autoregressive, block_generation,
    butterfly, masked_autoencoding,
};
use super::merge::Derivation;
use super::task::{Family, FamilyError};
use crate::bits::BitMatrix;
use crate::format::{MaskFile, Provenance};
use crate::interop::provenance_if_matches;
use crate::presets::{
    Args, BadValue, Inner, ParamKind, ParamSpec, ParamTable, TwoStreamOrder, param_names, unknown_param,
};

/// A built-in task family with its options (THEORY §6; MAE from the paper's future work).
///
/// # Examples
/// ```
/// use hasseflow_core::derive::{derive, BlockOptions, BuiltinFamily};
/// let spec: BuiltinFamily = serde_json::from_str(r#"{"family": "block", "n": 8, "block": 2}"#).unwrap();
/// assert_eq!(spec, BuiltinFamily::Block(BlockOptions::new(8, 2)));
/// let d = derive(&spec.build().unwrap()).unwrap();
/// let file = spec.mask_file(&d, false);
/// assert_eq!(file.provenance.unwrap().preset, "block-two-stream");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "family", rename_all = "lowercase")]
pub enum BuiltinFamily {
    /// [`autoregressive`].
    Autoregressive(AutoregressiveOptions),
    /// [`block_generation`].
    Block(BlockOptions),
    /// [`butterfly`] (bidirectional fully supervised).
    Butterfly(ButterflyOptions),
    /// [`masked_autoencoding`].
    Mae(MaeOptions),
}

/// One parameter of a built-in family: its [`ParamSpec`] (the name is the key of
/// [`BuiltinFamily::from_params`] and the CLI's `--name`; kind and bounds; default; help) and how
/// the Designer's form shows it.
#[derive(Clone, Copy, Debug)]
pub struct FamilyParam {
    /// Name, kind and bounds, default, help.
    pub spec: ParamSpec,
    /// Must be given ([`BuiltinFamily::from_params`], the CLI); its default is then only where a
    /// form starts.
    pub required: bool,
    /// The form's words for it (`block s`, `causal inside clean blocks`).
    pub label: &'static str,
    /// Shown (and read) only while the parameter named first has the value second.
    pub shown_if: Option<(&'static str, &'static str)>,
}

impl ParamTable for &'static [FamilyParam] {
    fn param(&self, i: usize) -> Option<&'static ParamSpec> {
        self.get(i).map(|p| &p.spec)
    }
}

/// One built-in family in [`FAMILIES`]: its name, its parameters and its builder.
#[derive(Clone, Copy, Debug)]
pub struct FamilyEntry {
    /// The JSON tag and the CLI's `derive` argument (`block`).
    pub name: &'static str,
    /// What the Designer's menu calls it (`block generation`).
    pub title: &'static str,
    /// Its parameters, `n` first, in the form's order.
    pub params: &'static [FamilyParam],
    /// The family from its checked parameters.
    read: fn(&FamilyArgs<'_>) -> Result<BuiltinFamily, BadValue>,
    /// The family from its JSON object without the tag: the options struct's serde form, read by
    /// [`read_fields`] with the derived `Deserialize`'s results and errors.
    json: fn(JsonObject) -> Result<BuiltinFamily, serde_json::Error>,
}

/// A built-in family's parameters, read by their table entries.
type FamilyArgs<'a> = Args<'a>;

/// A JSON object, as serde_json holds one.
type JsonObject = serde_json::Map<String, serde_json::Value>;

impl From<BadValue> for FamilyError {
    fn from(b: BadValue) -> Self {
        FamilyError::Parameter {
            family: b.owner.into(),
            what: format!("parameter '{}' = '{}': {}", b.param, b.value, b.reason),
        }
    }
}

const fn param(spec: ParamSpec, label: &'static str) -> FamilyParam {
    FamilyParam { spec, required: false, label, shown_if: None }
}
const fn int(
    name: &'static str,
    min: usize,
    default: &'static str,
    help: &'static str,
    label: &'static str,
) -> FamilyParam {
    param(ParamSpec { name, kind: ParamKind::Int { min }, default, help }, label)
}
const fn required(name: &'static str, default: &'static str, help: &'static str, label: &'static str) -> FamilyParam {
    FamilyParam { required: true, ..int(name, 1, default, help, label) }
}
const fn flag(name: &'static str, help: &'static str, label: &'static str) -> FamilyParam {
    param(ParamSpec { name, kind: ParamKind::Bool, default: "false", help }, label)
}
const fn choice(
    name: &'static str,
    options: &'static [&'static str],
    help: &'static str,
    label: &'static str,
) -> FamilyParam {
    param(ParamSpec { name, kind: ParamKind::Choice(options), default: options[0], help }, label)
}
const N: FamilyParam = required("n", "4", "tokens n", "n");
const INNER: &[&str] = &["full", "causal"];
const AGGREGATE: &[&str] = &["neighbours", "mask"];

/// The built-in families, in display order: each one's name, parameters and builder. Adding a
/// family is one entry here, its options and builder (`families.rs`) and its [`BuiltinFamily`]
/// variant.
pub const FAMILIES: &[FamilyEntry] = &[
    FamilyEntry {
        name: "autoregressive",
        title: "autoregressive",
        params: &[
            N,
            flag(
                "bidirectional",
                "each task as one bidirectional block instead of the inference chain",
                "bidirectional tasks",
            ),
            flag("pad", "keep w_{n-1} as a padding position (n positions)", "pad"),
        ],
        read: |a| {
            let (n, bidirectional, pad) = (a.int("n")?, a.flag("bidirectional")?, a.flag("pad")?);
            Ok(BuiltinFamily::Autoregressive(AutoregressiveOptions { n, bidirectional, pad }))
        },
        json: |o| {
            let mut x = AutoregressiveOptions { n: 0, bidirectional: false, pad: false };
            read_fields(o, &["n", "bidirectional", "pad"], 1, &mut |i, v| {
                match i {
                    0 => x.n = usize::deserialize(v)?,
                    1 => x.bidirectional = bool::deserialize(v)?,
                    _ => x.pad = bool::deserialize(v)?,
                }
                Ok(())
            })?;
            Ok(BuiltinFamily::Autoregressive(x))
        },
    },
    FamilyEntry {
        name: "block",
        title: "block generation",
        params: &[
            N,
            required("block", "2", "block size s", "block s"),
            int("prompt", 0, "0", "clean prompt tokens read by everything", "prompt"),
            choice("clean", INNER, "attention inside clean blocks (and the prompt)", "causal inside clean blocks"),
            choice("query", INNER, "attention inside mask blocks", "causal inside mask blocks"),
            flag("interleaved", "interleaved order [K0 Q0 K1 Q1 ...] instead of grouped [w | m]", "interleaved order"),
            flag("minimal", "drop the last clean block, which no task reads (2n - s positions)", "minimal layout"),
        ],
        read: |a| {
            Ok(BuiltinFamily::Block(BlockOptions {
                n: a.int("n")?,
                block: a.int("block")?,
                clean: Inner::from_word(a.choice("clean")?),
                query: Inner::from_word(a.choice("query")?),
                prompt: a.int("prompt")?,
                minimal: a.flag("minimal")?,
                order: if a.flag("interleaved")? { TwoStreamOrder::Interleaved } else { TwoStreamOrder::Grouped },
            }))
        },
        json: |o| {
            let mut x = BlockOptions {
                n: 0,
                block: 0,
                clean: Inner::default(),
                query: Inner::default(),
                prompt: 0,
                minimal: false,
                order: TwoStreamOrder::default(),
            };
            read_fields(o, &["n", "block", "clean", "query", "prompt", "minimal", "order"], 2, &mut |i, v| {
                match i {
                    0 => x.n = usize::deserialize(v)?,
                    1 => x.block = usize::deserialize(v)?,
                    2 => x.clean = Inner::deserialize(v)?,
                    3 => x.query = Inner::deserialize(v)?,
                    4 => x.prompt = usize::deserialize(v)?,
                    5 => x.minimal = bool::deserialize(v)?,
                    _ => x.order = TwoStreamOrder::deserialize(v)?,
                }
                Ok(())
            })?;
            Ok(BuiltinFamily::Block(x))
        },
    },
    FamilyEntry {
        name: "butterfly",
        title: "bidirectional fully supervised (butterfly)",
        params: &[
            N,
            flag("minimal", "leave out F_{n-1} and B_0, which nobody reads (3n-2 positions)", "minimal layout"),
            choice(
                "aggregate",
                AGGREGATE,
                "what the predictor P_k holds: w'_k from its neighbours, or m@k",
                "P_k holds m@k",
            ),
            FamilyParam {
                shown_if: Some(("aggregate", "neighbours")),
                ..int("radius", 1, "1", "neighbours on each side aggregated into w'_k", "aggregate radius")
            },
        ],
        read: |a| {
            let aggregate = if a.choice("aggregate")? == "mask" {
                Aggregate::Mask
            } else {
                Aggregate::Neighbours(a.int("radius")?)
            };
            Ok(BuiltinFamily::Butterfly(ButterflyOptions { n: a.int("n")?, minimal: a.flag("minimal")?, aggregate }))
        },
        json: |o| {
            let mut x = ButterflyOptions { n: 0, minimal: false, aggregate: Aggregate::default() };
            read_fields(o, &["n", "minimal", "aggregate"], 1, &mut |i, v| {
                match i {
                    0 => x.n = usize::deserialize(v)?,
                    1 => x.minimal = bool::deserialize(v)?,
                    _ => x.aggregate = Aggregate::deserialize(v)?,
                }
                Ok(())
            })?;
            Ok(BuiltinFamily::Butterfly(x))
        },
    },
    FamilyEntry {
        name: "mae",
        title: "masked autoencoding (MAE)",
        params: &[
            N,
            required("span", "2", "masked span length", "span"),
            int("stride", 0, "0", "distance between span starts (0: the span length)", "stride"),
            flag("causal_encoder", "causal encoder over the visible tokens", "causal encoder"),
        ],
        read: |a| {
            let (n, span, stride, causal_encoder) =
                (a.int("n")?, a.int("span")?, a.int("stride")?, a.flag("causal_encoder")?);
            Ok(BuiltinFamily::Mae(MaeOptions { n, span, stride, causal_encoder }))
        },
        json: |o| {
            let mut x = MaeOptions { n: 0, span: 0, stride: 0, causal_encoder: false };
            read_fields(o, &["n", "span", "stride", "causal_encoder"], 2, &mut |i, v| {
                match i {
                    0 => x.n = usize::deserialize(v)?,
                    1 => x.span = usize::deserialize(v)?,
                    2 => x.stride = usize::deserialize(v)?,
                    _ => x.causal_encoder = bool::deserialize(v)?,
                }
                Ok(())
            })?;
            Ok(BuiltinFamily::Mae(x))
        },
    },
];

/// The table entry of the built-in family called `name`.
pub fn family_entry(name: &str) -> Option<&'static FamilyEntry> {
    FAMILIES.iter().find(|e| e.name == name)
}

fn family_names() -> String {
    FAMILIES.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
}

/// Reads an options struct's JSON object (the tag taken out) as its derived `Deserialize`
/// (`deny_unknown_fields`, `#[serde(default)]` on all but the first `required` fields) does, with
/// the same results and errors: the keys in the object's order, each a field of `fields` (the
/// struct's, in order) or the error naming it, its value stored by `set(index, value)` (which
/// reads it with the field type's `Deserialize`); then the first required field that is missing.
/// By hand: each derived impl was about 1 KB of wasm (its own key matcher and loop), this is one.
fn read_fields(
    object: JsonObject,
    fields: &'static [&'static str],
    required: usize,
    set: &mut dyn FnMut(usize, serde_json::Value) -> Result<(), serde_json::Error>,
) -> Result<(), serde_json::Error> {
    use serde::de::Error;
    let mut seen = vec![false; fields.len()];
    for (key, value) in object {
        let Some(i) = fields.iter().position(|f| *f == key) else {
            return Err(serde_json::Error::unknown_field(&key, fields));
        };
        set(i, value)?;
        seen[i] = true;
    }
    match seen[..required].iter().position(|s| !s) {
        Some(i) => Err(serde_json::Error::missing_field(fields[i])),
        None => Ok(()),
    }
}

/// By hand rather than derived: serde's derived internally tagged form buffers the input in its
/// `Content` type first, about 10 KB of wasm for one small object. This reads the object, takes
/// the tag out and hands the rest to the family's options struct ([`FamilyEntry`]), with the same
/// errors.
impl<'de> Deserialize<'de> for BuiltinFamily {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut object = serde_json::Map::deserialize(deserializer)?;
        let tag = object.remove("family").ok_or_else(|| D::Error::missing_field("family"))?;
        let Some(name) = tag.as_str() else {
            return Err(D::Error::custom(format!("\"family\" must be a string, not {tag}")));
        };
        let entry = family_entry(name)
            .ok_or_else(|| D::Error::custom(format!("unknown variant `{name}`, expected one of {}", family_names())))?;
        (entry.json)(object).map_err(D::Error::custom)
    }
}

/// What each options struct answers, so that [`BuiltinFamily`] dispatches once
/// ([`BuiltinFamily::options`]).
trait Options {
    fn name(&self) -> &'static str;
    fn n(&self) -> usize;
    fn describe(&self) -> String;
    /// The parameters [`FamilyEntry::read`] reads back into these options.
    fn params(&self) -> Vec<(&'static str, String)>;
}

impl Options for AutoregressiveOptions {
    fn name(&self) -> &'static str {
        "autoregressive"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn describe(&self) -> String {
        format!("autoregressive n={}", self.n)
    }
    fn params(&self) -> Vec<(&'static str, String)> {
        vec![
            ("n", self.n.to_string()),
            ("bidirectional", self.bidirectional.to_string()),
            ("pad", self.pad.to_string()),
        ]
    }
}

impl Options for BlockOptions {
    fn name(&self) -> &'static str {
        "block"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn describe(&self) -> String {
        format!("block generation n={} s={}", self.n, self.block)
    }
    fn params(&self) -> Vec<(&'static str, String)> {
        vec![
            ("n", self.n.to_string()),
            ("block", self.block.to_string()),
            ("prompt", self.prompt.to_string()),
            ("clean", self.clean.word().into()),
            ("query", self.query.word().into()),
            ("interleaved", (self.order == TwoStreamOrder::Interleaved).to_string()),
            ("minimal", self.minimal.to_string()),
        ]
    }
}

impl Options for ButterflyOptions {
    fn name(&self) -> &'static str {
        "butterfly"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn describe(&self) -> String {
        format!("butterfly n={}", self.n)
    }
    fn params(&self) -> Vec<(&'static str, String)> {
        let mut p = vec![("n", self.n.to_string()), ("minimal", self.minimal.to_string())];
        match self.aggregate {
            Aggregate::Mask => p.push(("aggregate", "mask".into())),
            Aggregate::Neighbours(r) => p.extend([("aggregate", "neighbours".into()), ("radius", r.to_string())]),
        }
        p
    }
}

impl Options for MaeOptions {
    fn name(&self) -> &'static str {
        "mae"
    }
    fn n(&self) -> usize {
        self.n
    }
    fn describe(&self) -> String {
        format!("MAE n={} span={}", self.n, self.span)
    }
    fn params(&self) -> Vec<(&'static str, String)> {
        vec![
            ("n", self.n.to_string()),
            ("span", self.span.to_string()),
            ("stride", self.stride.to_string()),
            ("causal_encoder", self.causal_encoder.to_string()),
        ]
    }
}

impl BuiltinFamily {
    /// The built-in family `family` ([`FAMILIES`]) with the parameters `params` as text (missing
    /// ones take their defaults): what the CLI's flags and the Designer's form give.
    ///
    /// # Errors
    /// [`FamilyError::Parameter`], one line naming the problem: an unknown family or parameter, a
    /// required one missing, a value that does not parse or is out of bounds. (What the family's
    /// builder refuses, such as `span > n`, [`Self::build`] tells.)
    ///
    /// # Examples
    /// ```
    /// use std::collections::BTreeMap;
    /// use hasseflow_core::derive::{BlockOptions, BuiltinFamily};
    /// let params = BTreeMap::from([("n".to_string(), "6".to_string()), ("block".to_string(), "2".to_string())]);
    /// let spec = BuiltinFamily::from_params("block", &params).unwrap();
    /// assert_eq!(spec, BuiltinFamily::Block(BlockOptions::new(6, 2)));
    /// assert_eq!(BuiltinFamily::from_params("block", &spec.params()), Ok(spec));
    /// ```
    pub fn from_params(family: &str, params: &BTreeMap<String, String>) -> Result<BuiltinFamily, FamilyError> {
        let problem = |what: String| FamilyError::Parameter { family: family.into(), what };
        let entry = family_entry(family)
            .ok_or_else(|| problem(format!("not a built-in family (they are: {})", family_names())))?;
        if let Some(bad) = unknown_param(&entry.params, params) {
            return Err(problem(format!("does not take '{bad}' (it takes: {})", param_names(&entry.params))));
        }
        if let Some(p) = entry.params.iter().find(|p| p.required && !params.contains_key(p.spec.name)) {
            return Err(problem(format!("parameter '{}' is required ({})", p.spec.name, p.spec.help)));
        }
        let a = FamilyArgs { owner: entry.name, params: &entry.params, given: params };
        // Every given value is checked, also one its builder does not read (a hidden radius).
        for (name, value) in params {
            let (spec, _) = a.raw(name);
            spec.check(value).map_err(|reason| a.bad(name, value, reason))?;
        }
        Ok((entry.read)(&a)?)
    }

    /// The family's parameters as text, every one its builder reads: [`Self::from_params`] gives
    /// the family back.
    pub fn params(&self) -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        map.extend(self.options().params().into_iter().map(|(k, v)| (k.to_string(), v)));
        map
    }

    /// Its options, to dispatch on once.
    fn options(&self) -> &dyn Options {
        match self {
            BuiltinFamily::Autoregressive(o) => o,
            BuiltinFamily::Block(o) => o,
            BuiltinFamily::Butterfly(o) => o,
            BuiltinFamily::Mae(o) => o,
        }
    }

    /// Its table entry.
    pub fn entry(&self) -> &'static FamilyEntry {
        family_entry(self.name()).expect("every family has its table entry")
    }

    /// The family's name: its JSON tag and the CLI's `derive` argument (`block`).
    pub fn name(&self) -> &'static str {
        self.options().name()
    }

    /// Tokens `n`.
    pub fn n(&self) -> usize {
        self.options().n()
    }

    /// The family in a few words (`block generation n=6 s=2`).
    pub fn describe(&self) -> String {
        self.options().describe()
    }

    /// Builds the family.
    ///
    /// # Errors
    /// The constructor's [`FamilyError::Parameter`] (see each constructor).
    pub fn build(&self) -> Result<Family, FamilyError> {
        // A match, not a method of `Options`: the trait's vtable (which `describe` and `n` go
        // through) would keep every builder in the web app's first download.
        match *self {
            BuiltinFamily::Autoregressive(o) => autoregressive(o),
            BuiltinFamily::Block(o) => block_generation(o),
            BuiltinFamily::Butterfly(o) => butterfly(o),
            BuiltinFamily::Mae(o) => masked_autoencoding(o),
        }
    }

    /// The preset whose mask this family's dense mask `mask` is, checked by rebuilding it
    /// ([`provenance_if_matches`]): causal (autoregressive chains), block two-stream, butterfly.
    /// `None` for MAE, bidirectional autoregressive tasks, or a mask that is not the preset's.
    ///
    /// Complexity: one preset build, `O(positions²)`.
    pub fn provenance(&self, mask: &BitMatrix) -> Option<Provenance> {
        let param = |k: &str, v: serde_json::Value| (k.to_string(), v);
        let (preset, n, list) = match self {
            BuiltinFamily::Autoregressive(o) if !o.bidirectional => ("causal", mask.n(), vec![]),
            BuiltinFamily::Block(o) => {
                let p = o.preset();
                let list = vec![
                    param("s", p.block.into()),
                    param("clean", serde_json::to_value(p.clean).ok()?),
                    param("query", serde_json::to_value(p.query).ok()?),
                    param("prompt", p.prompt.into()),
                    param("drop_last", p.drop_last.into()),
                    param("order", serde_json::to_value(p.order).ok()?),
                ];
                ("block-two-stream", p.n, list)
            }
            BuiltinFamily::Butterfly(o) => ("butterfly", o.n, vec![param("minimal", o.preset().minimal.into())]),
            BuiltinFamily::Autoregressive(_) | BuiltinFamily::Mae(_) => return None,
        };
        // `extend`, not `BTreeMap::from`: that sorts (a sort per array length in the wasm).
        let mut params = BTreeMap::new();
        params.extend(list);
        provenance_if_matches(mask, Provenance { preset: preset.into(), n, params })
    }

    /// The mask file of `d`, a derivation of this family: [`Derivation::mask_file`] plus, for the
    /// dense mask, the [`Self::provenance`] it verifiably has (so exports such as FlexAttention
    /// can use the preset's closed form). What `hasseflow derive --mask-out` writes and what the
    /// app's designer opens in the editor.
    pub fn mask_file(&self, d: &Derivation, sparse: bool) -> MaskFile {
        let mut file = d.mask_file(sparse);
        if !sparse {
            file.provenance = self.provenance(d.dense());
        }
        file
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::derive;

    #[test]
    fn json_round_trips_and_missing_options_take_their_defaults() {
        let specs = [
            BuiltinFamily::Autoregressive(AutoregressiveOptions { pad: true, ..AutoregressiveOptions::new(5) }),
            BuiltinFamily::Block(BlockOptions {
                clean: Inner::Causal,
                prompt: 1,
                minimal: true,
                order: TwoStreamOrder::Interleaved,
                ..BlockOptions::new(6, 2)
            }),
            BuiltinFamily::Butterfly(ButterflyOptions { aggregate: Aggregate::Mask, ..ButterflyOptions::new(4) }),
            BuiltinFamily::Butterfly(ButterflyOptions {
                aggregate: Aggregate::Neighbours(3),
                ..ButterflyOptions::new(4)
            }),
            BuiltinFamily::Mae(MaeOptions { stride: 3, causal_encoder: true, ..MaeOptions::new(8, 2) }),
        ];
        for spec in specs {
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(serde_json::from_str::<BuiltinFamily>(&json).unwrap(), spec, "{json}");
            assert!(json.starts_with(&format!("{{\"family\":\"{}\"", spec.name())), "{json}");
        }
        let v = serde_json::to_value(specs[1]).unwrap();
        assert_eq!(
            (v["clean"].as_str(), v["query"].as_str(), v["order"].as_str()),
            (Some("causal"), Some("full"), Some("interleaved"))
        );
        assert_eq!(serde_json::to_value(specs[3]).unwrap()["aggregate"], serde_json::json!({"neighbours": 3}));
        assert_eq!(serde_json::to_value(specs[2]).unwrap()["aggregate"], "mask");
        let read = |s: &str| serde_json::from_str::<BuiltinFamily>(s);
        for (json, want) in [
            (r#"{"family":"autoregressive","n":5}"#, BuiltinFamily::Autoregressive(AutoregressiveOptions::new(5))),
            (r#"{"family":"block","n":6,"block":3}"#, BuiltinFamily::Block(BlockOptions::new(6, 3))),
            (r#"{"family":"butterfly","n":4}"#, BuiltinFamily::Butterfly(ButterflyOptions::new(4))),
            (r#"{"family":"mae","n":8,"span":2}"#, BuiltinFamily::Mae(MaeOptions::new(8, 2))),
        ] {
            assert_eq!(read(json).unwrap(), want, "{json}");
        }
        let err = |s: &str| read(s).unwrap_err().to_string();
        assert!(err(r#"{"family":"block","n":6}"#).contains("missing field `block`"));
        assert!(err(r#"{"family":"mae","n":6}"#).contains("missing field `span`"));
        assert!(err(r#"{"n":6}"#).contains("missing field `family`"));
        assert!(err(r#"{"family":"xlnet","n":6}"#).contains("unknown variant `xlnet`"));
        assert!(err(r#"{"family":3,"n":6}"#).contains("\"family\" must be a string"));
        assert!(err(r#"["block",6]"#).contains("expected a map"), "{}", err(r#"["block",6]"#));
        assert!(err(r#"{"family":"butterfly","n":4,"mask_token":true}"#).contains("unknown field `mask_token`"));
        assert!(err(r#"{"family":"block","n":6,"block":2,"clean":"sideways"}"#).contains("unknown variant `sideways`"));
    }

    /// The family `name` read from `v` by its options struct's derived `Deserialize`: what
    /// [`read_fields`] stands in for.
    fn derived(name: &str, v: serde_json::Value) -> Result<BuiltinFamily, String> {
        let e = |e: serde_json::Error| e.to_string();
        match name {
            "autoregressive" => serde_json::from_value(v).map(BuiltinFamily::Autoregressive).map_err(e),
            "block" => serde_json::from_value(v).map(BuiltinFamily::Block).map_err(e),
            "butterfly" => serde_json::from_value(v).map(BuiltinFamily::Butterfly).map_err(e),
            _ => serde_json::from_value(v).map(BuiltinFamily::Mae).map_err(e),
        }
    }

    #[test]
    fn hand_read_json_matches_the_derived_deserialize_results_and_errors() {
        use serde_json::{Value, json};
        let objects = [
            json!({}),
            json!({"n": 6}),
            json!({"n": 6, "block": 2}),
            json!({"block": 2}),
            json!({"n": 8, "span": 2}),
            json!({"span": 2}),
            json!({"n": 6, "block": 2, "clean": "causal", "query": "causal", "prompt": 1, "minimal": true,
                   "order": "interleaved"}),
            json!({"n": 6, "block": 2, "clean": "sideways"}),
            json!({"n": 6, "block": "2"}),
            json!({"n": -1, "block": 2}),
            json!({"n": null}),
            json!({"n": 4, "bidirectional": true, "pad": true}),
            json!({"n": 4, "pad": 1}),
            json!({"n": 4, "minimal": true, "aggregate": "mask"}),
            json!({"n": 4, "aggregate": {"neighbours": 3}}),
            json!({"n": 4, "aggregate": {"neighbours": "x"}}),
            json!({"n": 4, "aggregate": "sideways"}),
            json!({"n": 4, "mask_token": true}),
            json!({"zzz": 1, "n": "x"}),
            json!({"a": 1, "n": "x"}),
            json!({"n": 8, "span": 2, "stride": 3, "causal_encoder": true}),
            json!({"n": 8, "span": 2, "stride": 1.5}),
        ];
        for entry in FAMILIES {
            for v in &objects {
                let Value::Object(o) = v.clone() else { unreachable!() };
                let ours = (entry.json)(o).map_err(|e| e.to_string());
                assert_eq!(ours, derived(entry.name, v.clone()), "{} {v}", entry.name);
            }
        }
    }

    /// Fuzz: random objects (every family's field names, unknown and near-miss keys; numbers at
    /// and past the bounds, wrong types, choice words, nested objects and arrays past serde_json's
    /// depth limit) read by hand and by the derived impls give the same result or the same error,
    /// and the tagged form through the whole reader is a result or a one-line refusal.
    #[test]
    fn fuzzed_family_json_reads_as_the_derived_impls_and_never_panics() {
        use crate::rng::SplitMix64;
        use serde_json::{Map, Value, json};
        let keys = [
            "n",
            "block",
            "clean",
            "query",
            "prompt",
            "minimal",
            "order",
            "bidirectional",
            "pad",
            "aggregate",
            "span",
            "stride",
            "causal_encoder",
            "family",
            "",
            "N",
            "n ",
            "neighbours",
            "mask_token",
        ];
        let words = ["causal", "full", "bidirectional", "grouped", "interleaved", "mask", "sideways", ""];
        fn value(rng: &mut SplitMix64, words: &[&str], depth: usize) -> Value {
            match rng.below(if depth > 2 { 12 } else { 14 }) {
                0 => json!(rng.below(70)),
                1 => json!(-1),
                2 => json!([u64::MAX, 1u64 << 53, u32::MAX as u64, i64::MAX as u64][rng.below(4)]),
                3 => json!(i64::MIN),
                4 => json!([0.5, 1e300, -0.0, 2.0][rng.below(4)]),
                5 => Value::Null,
                6 => json!(rng.below(2) == 1),
                7 | 8 => json!(words[rng.below(words.len())]),
                9 => json!("x".repeat(rng.below(300))),
                10 => json!([]),
                11 => {
                    let d = 1 + rng.below(300);
                    serde_json::from_str(&format!("{}0{}", "[".repeat(d), "]".repeat(d))).unwrap_or(Value::Null)
                }
                12 => json!({ "neighbours": value(rng, words, depth + 1) }),
                _ => json!({ words[rng.below(words.len())]: value(rng, words, depth + 1) }),
            }
        }
        let mut rng = SplitMix64::new(22);
        for case in 0..3000 {
            let mut o = Map::new();
            for _ in 0..rng.below(7) {
                o.insert(keys[rng.below(keys.len())].to_string(), value(&mut rng, &words, 0));
            }
            o.remove("family");
            let entry = &FAMILIES[case % FAMILIES.len()];
            let v = Value::Object(o.clone());
            assert_eq!((entry.json)(o.clone()).map_err(|e| e.to_string()), derived(entry.name, v.clone()), "{v}");
            o.insert("family".into(), json!(entry.name));
            match serde_json::from_value::<BuiltinFamily>(Value::Object(o)) {
                Ok(f) => assert_eq!(f.name(), entry.name),
                Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
            }
        }
    }

    /// A parameter map from pairs.
    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn params_round_trip_through_from_params_for_every_family() {
        let mut specs = Vec::new();
        for n in [2, 5] {
            for (bidirectional, pad) in [(false, false), (true, false), (false, true), (true, true)] {
                specs.push(BuiltinFamily::Autoregressive(AutoregressiveOptions { n, bidirectional, pad }));
            }
            for (clean, query, minimal, order) in [
                (Inner::Full, Inner::Full, false, TwoStreamOrder::Grouped),
                (Inner::Causal, Inner::Full, true, TwoStreamOrder::Interleaved),
                (Inner::Full, Inner::Causal, false, TwoStreamOrder::Interleaved),
            ] {
                specs.push(BuiltinFamily::Block(BlockOptions {
                    n,
                    block: 2,
                    clean,
                    query,
                    prompt: n - 2,
                    minimal,
                    order,
                }));
            }
            for aggregate in [Aggregate::Mask, Aggregate::Neighbours(1), Aggregate::Neighbours(3)] {
                specs.push(BuiltinFamily::Butterfly(ButterflyOptions { n, minimal: n == 5, aggregate }));
            }
            specs.push(BuiltinFamily::Mae(MaeOptions { n, span: 2, stride: n - 2, causal_encoder: n == 5 }));
        }
        for spec in specs {
            let params = spec.params();
            assert_eq!(BuiltinFamily::from_params(spec.name(), &params), Ok(spec), "{params:?}");
            // Every parameter it writes is one of its table's.
            let entry = spec.entry();
            assert!(params.keys().all(|k| entry.params.iter().any(|p| p.spec.name == k)), "{params:?}");
        }
        // Each table entry builds from its defaults (required ones given: where the Designer's
        // form starts) and names itself.
        for entry in FAMILIES {
            let given = entry.params.iter().filter(|p| p.required).map(|p| (p.spec.name, p.spec.default));
            let spec = BuiltinFamily::from_params(entry.name, &map(&given.collect::<Vec<_>>())).unwrap();
            assert_eq!(spec.name(), entry.name);
            assert!(spec.build().is_ok(), "{}", entry.name);
        }
    }

    #[test]
    fn from_params_refuses_bad_parameters_in_one_line_naming_them() {
        let err = |family: &str, pairs: &[(&str, &str)]| {
            BuiltinFamily::from_params(family, &map(pairs)).unwrap_err().to_string()
        };
        assert_eq!(
            err("xlnet", &[("n", "4")]),
            "family 'xlnet': not a built-in family (they are: autoregressive, block, butterfly, mae)"
        );
        assert_eq!(
            err("autoregressive", &[("n", "4"), ("block", "2")]),
            "family 'autoregressive': does not take 'block' (it takes: n, bidirectional, pad)"
        );
        assert_eq!(err("block", &[("n", "6")]), "family 'block': parameter 'block' is required (block size s)");
        assert_eq!(err("mae", &[("span", "2")]), "family 'mae': parameter 'n' is required (tokens n)");
        assert_eq!(
            err("block", &[("n", "6"), ("block", "2"), ("clean", "sideways")]),
            "family 'block': parameter 'clean' = 'sideways': expected one of full, causal"
        );
        assert_eq!(
            err("butterfly", &[("n", "4"), ("aggregate", "mask"), ("radius", "x")]),
            "family 'butterfly': parameter 'radius' = 'x': not a non-negative integer",
            "a hidden parameter is checked too"
        );
        // Every parameter's bounds, from the table: an integer below its minimum (or not a
        // number), a flag that is not one, a word that is not a choice.
        for entry in FAMILIES {
            for p in entry.params {
                let bad = match p.spec.kind {
                    ParamKind::Int { min: 0 } => "-1".to_string(),
                    ParamKind::Int { min } => (min - 1).to_string(),
                    ParamKind::Bool => "maybe".into(),
                    ParamKind::Choice(_) => "sideways".into(),
                    ParamKind::Fraction | ParamKind::IntList => unreachable!("no family takes one"),
                };
                let mut given: BTreeMap<String, String> = entry
                    .params
                    .iter()
                    .filter(|p| p.required)
                    .map(|p| (p.spec.name.into(), p.spec.default.into()))
                    .collect();
                given.insert(p.spec.name.into(), bad.clone());
                let e = BuiltinFamily::from_params(entry.name, &given).unwrap_err().to_string();
                let want = format!("family '{}': parameter '{}' = '{bad}': ", entry.name, p.spec.name);
                assert!(e.starts_with(&want) && !e.contains('\n'), "{e}");
            }
        }
    }

    #[test]
    fn names_and_descriptions() {
        let all = [
            BuiltinFamily::Autoregressive(AutoregressiveOptions::new(6)),
            BuiltinFamily::Block(BlockOptions::new(6, 2)),
            BuiltinFamily::Butterfly(ButterflyOptions::new(6)),
            BuiltinFamily::Mae(MaeOptions::new(6, 2)),
        ];
        assert_eq!(all.map(|f| f.name()), ["autoregressive", "block", "butterfly", "mae"]);
        assert_eq!(all.map(|f| f.name()), [0, 1, 2, 3].map(|i| FAMILIES[i].name), "the table's order");
        assert_eq!(
            all.map(|f| f.describe()),
            ["autoregressive n=6", "block generation n=6 s=2", "butterfly n=6", "MAE n=6 span=2"]
        );
        assert!(all.iter().all(|f| f.n() == 6 && f.entry().name == f.name()));
    }

    #[test]
    fn mask_files_record_the_preset_they_rebuild_and_only_that() {
        let file = |spec: BuiltinFamily, sparse: bool| spec.mask_file(&derive(&spec.build().unwrap()).unwrap(), sparse);
        let block = file(BuiltinFamily::Block(BlockOptions::new(8, 2)), false);
        let p = block.provenance.expect("block n=8 s=2 is block-two-stream");
        assert_eq!((p.preset.as_str(), p.n), ("block-two-stream", 8));
        assert_eq!(p.params["s"], 2);
        assert_eq!((p.params["clean"].as_str(), p.params["order"].as_str()), (Some("full"), Some("grouped")));
        assert_eq!(block.labels.as_ref().map(Vec::len), Some(16));
        assert!(file(BuiltinFamily::Block(BlockOptions::new(8, 2)), true).provenance.is_none(), "sparse: none");
        let bf = file(BuiltinFamily::Butterfly(ButterflyOptions::new(4)), false);
        let p = bf.provenance.expect("butterfly n=4");
        assert_eq!((p.preset.as_str(), p.n, &p.params["minimal"]), ("butterfly", 4, &serde_json::json!(false)));
        let ar = file(BuiltinFamily::Autoregressive(AutoregressiveOptions::new(5)), false);
        assert_eq!(ar.provenance.map(|p| (p.preset, p.n)), Some(("causal".to_string(), 4)));
        let bidi = AutoregressiveOptions { bidirectional: true, ..AutoregressiveOptions::new(5) };
        assert!(file(BuiltinFamily::Autoregressive(bidi), false).provenance.is_none());
        assert!(file(BuiltinFamily::Mae(MaeOptions::new(6, 2)), false).provenance.is_none());
    }
}
