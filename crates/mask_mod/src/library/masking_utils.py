# Prelude for `transformers.masking_utils` (Transformers 5.24): its mask functions
# `(batch_idx, head_idx, q_idx, kv_idx) -> bool tensor` and the factories and combinators that
# return them, rewritten from their documented behaviour in the interpreter's subset of Python.
# tests/python/test_library_masks.py checks every function here against the real module with
# torch's create_mask.
#
# Covered: and_masks, or_masks, causal_mask_function, bidirectional_mask_function,
#   sliding_window_overlay, chunked_overlay, blockwise_overlay,
#   sliding_window_causal_mask_function, sliding_window_bidirectional_overlay,
#   sliding_window_bidirectional_mask_function, chunked_causal_mask_function,
#   padding_mask_function, packed_sequence_mask_function, remap_positions_for_packed_sequence,
#   add_offsets_to_mask_function. None of them has default arguments.
#
# Skipped, and why: prepare_padding_mask, maybe_pad_block_sequence_ids, fast_all and
#   find_packed_sequence_indices return tensors, not mask functions; sdpa_mask, eager_mask,
#   flash_attention_mask, flex_attention_mask, create_causal_mask, create_bidirectional_mask,
#   create_sliding_window_causal_mask, create_bidirectional_sliding_window_mask,
#   create_chunked_causal_mask, create_recurrent_attention_mask and create_masks_for_generate
#   build 4D masks or BlockMasks from a model config, cache and inputs; the _ignore_*/_vmap_*
#   helpers and AttentionMaskInterface are internals.
#
# Differences a caller can see (none in the masks): and_masks/or_masks leave out the library's
# `.to(result.device)` on each part (everything is on the CPU here).
#
# What this file asks of the interpreter beyond the mask functions' operators: *args, builtins
# callable and str, `not` on a Python bool, `raise RuntimeError(...)` (the library's exception
# type), `for` over the tuple of mask functions, `new_ones`/`new_zeros`, `.abs()`, and indexing
# a closure tensor with a pair of indices (`padding_mask[batch_idx, kv_idx]`).

import torch


def _refuse_uncallable(mask_functions):
    for candidate in mask_functions:
        if not callable(candidate):
            raise RuntimeError("All inputs should be callable mask_functions: " + str(mask_functions))


def and_masks(*mask_functions):
    # True where every one of the functions is true (true everywhere for none).
    _refuse_uncallable(mask_functions)

    def and_mask(batch_idx, head_idx, q_idx, kv_idx):
        result = q_idx.new_ones((), dtype=torch.bool)
        for part in mask_functions:
            result = result & part(batch_idx, head_idx, q_idx, kv_idx)
        return result

    return and_mask


def or_masks(*mask_functions):
    # True where at least one of the functions is true (false everywhere for none).
    _refuse_uncallable(mask_functions)

    def or_mask(batch_idx, head_idx, q_idx, kv_idx):
        result = q_idx.new_zeros((), dtype=torch.bool)
        for part in mask_functions:
            result = result | part(batch_idx, head_idx, q_idx, kv_idx)
        return result

    return or_mask


def causal_mask_function(batch_idx, head_idx, q_idx, kv_idx):
    # Lower triangle, diagonal included.
    return kv_idx <= q_idx


def bidirectional_mask_function(batch_idx, head_idx, q_idx, kv_idx):
    # Everything (written on the index so it also works without vmap).
    return q_idx >= 0


def sliding_window_overlay(sliding_window):
    # Keys strictly less than sliding_window positions behind the query (and every later key):
    # laid over a causal mask, the query plus the sliding_window - 1 keys before it.
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return kv_idx > q_idx - sliding_window

    return inner_mask


def chunked_overlay(chunk_size, left_padding):
    # Query and key in the same chunk of chunk_size tokens, chunks counted for each batch row from
    # its first real token (left_padding[batch_idx] pad tokens before it).
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        pad = left_padding[batch_idx]
        return (kv_idx - pad) // chunk_size == (q_idx - pad) // chunk_size

    return inner_mask


def blockwise_overlay(block_sequence_ids):
    # Query and key in the same block (block_sequence_ids[batch_idx, i] for token i), blocks with
    # negative ids (text) excepted.
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        q_block = block_sequence_ids[batch_idx, q_idx]
        kv_block = block_sequence_ids[batch_idx, kv_idx]
        return (q_block == kv_block) & (q_block >= 0)

    return inner_mask


def sliding_window_causal_mask_function(sliding_window):
    # Causal with a look-back of sliding_window tokens, the query's own included.
    return and_masks(sliding_window_overlay(sliding_window), causal_mask_function)


def sliding_window_bidirectional_overlay(sliding_window):
    # Query and key at most sliding_window apart, either side.
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return (q_idx - kv_idx).abs() <= sliding_window

    return inner_mask


def sliding_window_bidirectional_mask_function(sliding_window):
    return and_masks(sliding_window_bidirectional_overlay(sliding_window), bidirectional_mask_function)


def chunked_causal_mask_function(chunk_size, left_padding):
    return and_masks(chunked_overlay(chunk_size, left_padding), causal_mask_function)


def padding_mask_function(padding_mask):
    # The 2D padding mask's entry for the key, whatever the query (it must reach the largest key).
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return padding_mask[batch_idx, kv_idx]

    return inner_mask


def packed_sequence_mask_function(packed_sequence_mask):
    # Query and key in the same packed sequence (equal ids in the batch row).
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return packed_sequence_mask[batch_idx, q_idx] == packed_sequence_mask[batch_idx, kv_idx]

    return inner_mask


def remap_positions_for_packed_sequence(mask_function, position_ids):
    # mask_function asked about the tokens' positions inside their own sequences.
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return mask_function(
            batch_idx, head_idx, position_ids[batch_idx, q_idx], position_ids[batch_idx, kv_idx]
        )

    return inner_mask


def add_offsets_to_mask_function(mask_function, q_offset, kv_offset):
    # mask_function with the query shifted by q_offset and the key by kv_offset.
    def inner_mask(batch_idx, head_idx, q_idx, kv_idx):
        return mask_function(batch_idx, head_idx, q_idx + q_offset, kv_idx + kv_offset)

    return inner_mask
