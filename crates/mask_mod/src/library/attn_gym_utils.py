# Prelude for `attn_gym.utils` (attention-gym): the integer helper its mask code imports, cdiv,
# written from its documented behaviour (ceil(a / b) for integers). The module's other names draw
# or time attention; they are not mask code. tests/python/test_library_masks.py checks cdiv
# against the library.


def cdiv(a, b):
    # Ceiling division by floor division of the negation.
    return -(a // -b)
