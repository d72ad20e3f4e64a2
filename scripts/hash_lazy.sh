#!/usr/bin/env bash
# Trunk's post-build hook (Trunk.toml): names the modules that trunk builds from index.html's
# worker links without a hash after a hash of their contents, as trunk names the first download,
# and writes their names into index.html (a <meta> each) for static/boot.js:
# - crates/lazy, the second module (the mask_mod reader, loaded on first use): hasseflow-lazy;
# - crates/formats (the config reader and the model type table, the .npy and kernel readers and
#   the exports, loaded when the Models view first needs a model, or on the first such import or
#   export): hasseflow-formats;
# - crates/designer (the Designer's derivation pipeline, loaded when the Designer first derives):
#   hasseflow-designer;
# - crates/flow_worker, the third (the flow model, run in the Flow view's Web Workers):
#   hasseflow-flow.
# A returning browser so never pairs a cached old module with a new page.
set -euo pipefail
dir="${TRUNK_STAGING_DIR:?run by trunk as a post_build hook}"
grep -q '</head>' "$dir/index.html" || { echo "hash_lazy.sh: index.html has no </head>" >&2; exit 1; }
# name: trunk's output name; meta: the <meta> name boot.js reads.
hash_module() {
  local name=$1 meta=$2
  local js="$dir/$name.js" wasm="$dir/${name}_bg.wasm"
  [ -f "$js" ] && [ -f "$wasm" ] || { echo "hash_lazy.sh: trunk built no $name.js and _bg.wasm in $dir" >&2; exit 1; }
  local hash
  hash=$(cat "$js" "$wasm" | sha256sum | cut -c1-16)
  mv "$js" "$dir/$name-$hash.js"
  mv "$wasm" "$dir/$name-${hash}_bg.wasm"
  local tag="<meta name=\"$meta\" data-js=\"./$name-$hash.js\" data-wasm=\"./$name-${hash}_bg.wasm\" />"
  sed -i "s#</head>#$tag\n</head>#" "$dir/index.html"
}
hash_module hasseflow-lazy hasseflow-lazy
hash_module hasseflow-formats hasseflow-formats
hash_module hasseflow-designer hasseflow-designer
hash_module hasseflow-flow-worker hasseflow-flow
