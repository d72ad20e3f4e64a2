//! Four `f32` lanes for the CPU flow's attention: wasm's 128-bit SIMD where the build has it
//! (the browser's CPU path: LLVM leaves the 16-lane loops of [`super::cpu`] scalar in wasm), a
//! plain array elsewhere (which x86-64 builds vectorise by themselves). Every operation is the
//! IEEE one per lane, so both give the same bits.

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod imp {
    use core::arch::wasm32::{
        f32x4, f32x4_add, f32x4_extract_lane, f32x4_gt, f32x4_mul, f32x4_splat, v128, v128_bitselect,
    };

    /// Four lanes; [`F4::load`] reads and [`F4::store`] writes the first four of a slice.
    #[derive(Clone, Copy)]
    pub struct F4(v128);

    impl F4 {
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4(f32x4_splat(x))
        }
        #[inline(always)]
        pub fn load(s: &[f32]) -> F4 {
            F4(f32x4(s[0], s[1], s[2], s[3]))
        }
        #[inline(always)]
        pub fn store(self, s: &mut [f32]) {
            s[..4].copy_from_slice(&[
                f32x4_extract_lane::<0>(self.0),
                f32x4_extract_lane::<1>(self.0),
                f32x4_extract_lane::<2>(self.0),
                f32x4_extract_lane::<3>(self.0),
            ]);
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4(f32x4_add(self.0, o.0))
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4(f32x4_mul(self.0, o.0))
        }
        /// Per lane, `o` where `o > self`, else `self` (a NaN in `o` is skipped).
        #[inline(always)]
        pub fn keep_greater(self, o: F4) -> F4 {
            F4(v128_bitselect(o.0, self.0, f32x4_gt(o.0, self.0)))
        }
    }
}

#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
mod imp {
    use super::greater;

    /// Four lanes; [`F4::load`] reads and [`F4::store`] writes the first four of a slice.
    #[derive(Clone, Copy)]
    pub struct F4([f32; 4]);

    impl F4 {
        #[inline(always)]
        pub fn splat(x: f32) -> F4 {
            F4([x; 4])
        }
        #[inline(always)]
        pub fn load(s: &[f32]) -> F4 {
            F4([s[0], s[1], s[2], s[3]])
        }
        #[inline(always)]
        pub fn store(self, s: &mut [f32]) {
            s[..4].copy_from_slice(&self.0);
        }
        #[inline(always)]
        pub fn add(self, o: F4) -> F4 {
            F4([self.0[0] + o.0[0], self.0[1] + o.0[1], self.0[2] + o.0[2], self.0[3] + o.0[3]])
        }
        #[inline(always)]
        pub fn mul(self, o: F4) -> F4 {
            F4([self.0[0] * o.0[0], self.0[1] * o.0[1], self.0[2] * o.0[2], self.0[3] * o.0[3]])
        }
        /// Per lane, `o` where `o > self`, else `self` (a NaN in `o` is skipped).
        #[inline(always)]
        pub fn keep_greater(self, o: F4) -> F4 {
            let (a, b) = (self.0, o.0);
            F4([greater(a[0], b[0]), greater(a[1], b[1]), greater(a[2], b[2]), greater(a[3], b[3])])
        }
    }
}

pub(crate) use imp::F4;

/// `b` if `b > a`, else `a` (a NaN `b` is skipped): the running maximum as a comparison, since
/// `f32::max` is a libm call in wasm.
#[inline(always)]
pub(crate) fn greater(a: f32, b: f32) -> f32 {
    if b > a { b } else { a }
}
