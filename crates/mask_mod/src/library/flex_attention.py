# Prelude for the mask_mod helpers of `torch.nn.attention.flex_attention` (torch 2.15): and_masks,
# or_masks and noop_mask, rewritten from their documented behaviour in the interpreter's subset of
# Python. tests/python/test_library_masks.py checks them against torch with create_mask.
#
# BlockMask, create_block_mask and the private names public code reads are in block_mask.py,
# which the interpreter runs after this file as the same module.
#
# Skipped: the module's other exports (flex_attention, create_nested_block_mask,
# AuxRequest/AuxOutput, FlexKernelOptions) run attention; they are not mask_mods. create_mask is
# in block_mask.py.
#
# What this file asks of the interpreter beyond the mask functions' operators: *args, builtins
# callable and str, `not` on a Python bool, `raise RuntimeError(...)` (torch's exception type),
# `for` over the tuple of mask_mods, `new_ones`/`new_zeros`.

import torch


def noop_mask(batch, head, token_q, token_kv):
    # Every query sees every key.
    return batch.new_ones((), dtype=torch.bool)


def _refuse_uncallable(mask_mods):
    # Any argument that is not callable is refused when the combination is made, not when it runs.
    for candidate in mask_mods:
        if not callable(candidate):
            raise RuntimeError("All inputs should be callable mask_mods: " + str(mask_mods))


def and_masks(*mask_mods):
    # Intersection: true where every mask_mod is true; and_masks() is true everywhere.
    _refuse_uncallable(mask_mods)

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=torch.bool)
        for part in mask_mods:
            result = result & part(b, h, q_idx, kv_idx)
        return result

    return and_mask


def or_masks(*mask_mods):
    # Union: true where any mask_mod is true; or_masks() is false everywhere.
    _refuse_uncallable(mask_mods)

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=torch.bool)
        for part in mask_mods:
            result = result | part(b, h, q_idx, kv_idx)
        return result

    return or_mask

