# hasseflow-case: n=64 category=library entry=morton
# Neighbourhood attention on an 8 x 8 canvas, in tiled and Morton orders.
from attn_gym.masks import generate_morton_natten, generate_tiled_natten

CANVAS = 8
tiled = generate_tiled_natten(CANVAS, CANVAS, 3, 3, 4, 4)
morton = generate_morton_natten(CANVAS, CANVAS, 5, 3)
