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
    AutoregressiveOptions, BlockOptions, ButterflyOptions, MaeOptions, autoregressive, block_generation, butterfly,
    masked_autoencoding,
};
use super::merge::Derivation;
use super::task::{Family, FamilyError};
use crate::bits::BitMatrix;
use crate::format::{MaskFile, Provenance};
use crate::interop::provenance_if_matches;

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

/// The `"family"` tags, in [`BuiltinFamily::all`]'s order.
const NAMES: [&str; 4] = ["autoregressive", "block", "butterfly", "mae"];

/// By hand rather than derived: serde's derived internally tagged form buffers the input in its
/// `Content` type first, about 10 KB of wasm for one small object. This reads the object, takes
/// the tag out and hands the rest to the options struct, with the same errors.
impl<'de> Deserialize<'de> for BuiltinFamily {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut object = serde_json::Map::deserialize(deserializer)?;
        let tag = object.remove("family").ok_or_else(|| D::Error::missing_field("family"))?;
        let rest = serde_json::Value::Object(object);
        let family = match tag.as_str() {
            Some("autoregressive") => serde_json::from_value(rest).map(BuiltinFamily::Autoregressive),
            Some("block") => serde_json::from_value(rest).map(BuiltinFamily::Block),
            Some("butterfly") => serde_json::from_value(rest).map(BuiltinFamily::Butterfly),
            Some("mae") => serde_json::from_value(rest).map(BuiltinFamily::Mae),
            Some(other) => return Err(D::Error::unknown_variant(other, &NAMES)),
            None => return Err(D::Error::custom(format!("\"family\" must be a string, not {tag}"))),
        };
        family.map_err(D::Error::custom)
    }
}

impl BuiltinFamily {
    /// Every built-in family, in display order, with its default options for `n` tokens (block
    /// size and masked span 2, or `n` when smaller): where a form starts.
    pub fn all(n: usize) -> [BuiltinFamily; 4] {
        let two = n.clamp(1, 2);
        [
            BuiltinFamily::Autoregressive(AutoregressiveOptions::new(n)),
            BuiltinFamily::Block(BlockOptions::new(n, two)),
            BuiltinFamily::Butterfly(ButterflyOptions::new(n)),
            BuiltinFamily::Mae(MaeOptions::new(n, two)),
        ]
    }

    /// The family's name: its JSON tag and the CLI's `derive` argument (`block`).
    pub fn name(&self) -> &'static str {
        match self {
            BuiltinFamily::Autoregressive(_) => "autoregressive",
            BuiltinFamily::Block(_) => "block",
            BuiltinFamily::Butterfly(_) => "butterfly",
            BuiltinFamily::Mae(_) => "mae",
        }
    }

    /// Tokens `n`.
    pub fn n(&self) -> usize {
        match self {
            BuiltinFamily::Autoregressive(o) => o.n,
            BuiltinFamily::Block(o) => o.n,
            BuiltinFamily::Butterfly(o) => o.n,
            BuiltinFamily::Mae(o) => o.n,
        }
    }

    /// Tokens `n`, to edit.
    pub fn n_mut(&mut self) -> &mut usize {
        match self {
            BuiltinFamily::Autoregressive(o) => &mut o.n,
            BuiltinFamily::Block(o) => &mut o.n,
            BuiltinFamily::Butterfly(o) => &mut o.n,
            BuiltinFamily::Mae(o) => &mut o.n,
        }
    }

    /// The family in a few words (`block generation n=6 s=2`).
    pub fn describe(&self) -> String {
        match self {
            BuiltinFamily::Autoregressive(o) => format!("autoregressive n={}", o.n),
            BuiltinFamily::Block(o) => format!("block generation n={} s={}", o.n, o.block),
            BuiltinFamily::Butterfly(o) => format!("butterfly n={}", o.n),
            BuiltinFamily::Mae(o) => format!("MAE n={} span={}", o.n, o.span),
        }
    }

    /// Builds the family.
    ///
    /// # Errors
    /// The constructor's [`FamilyError::Parameter`] (see each constructor).
    pub fn build(&self) -> Result<Family, FamilyError> {
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
    use crate::derive::{Aggregate, derive};
    use crate::presets::{Inner, TwoStreamOrder};

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

    #[test]
    fn names_and_descriptions() {
        let all = BuiltinFamily::all(6);
        assert_eq!(all.map(|f| f.name()), ["autoregressive", "block", "butterfly", "mae"]);
        assert_eq!(
            all.map(|f| f.describe()),
            ["autoregressive n=6", "block generation n=6 s=2", "butterfly n=6", "MAE n=6 span=2"]
        );
        assert!(BuiltinFamily::all(1).iter().all(|f| f.n() == 1));
        let mut f = all[2];
        *f.n_mut() = 9;
        assert_eq!(f, BuiltinFamily::Butterfly(ButterflyOptions::new(9)));
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
