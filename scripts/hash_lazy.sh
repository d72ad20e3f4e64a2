#!/usr/bin/env bash
# Trunk's post-build hook (Trunk.toml): names the lazily loaded module (crates/lazy, built by
# index.html's worker link, which trunk does not hash) after a hash of its contents, as trunk
# names the first download, and writes the names into index.html for static/boot.js. A
# returning browser so never pairs a cached old module with a new page.
set -euo pipefail
dir="${TRUNK_STAGING_DIR:?run by trunk as a post_build hook}"
js="$dir/hasseflow-lazy.js"
wasm="$dir/hasseflow-lazy_bg.wasm"
[ -f "$js" ] && [ -f "$wasm" ] || { echo "hash_lazy.sh: trunk built no hasseflow-lazy.js and _bg.wasm in $dir" >&2; exit 1; }
hash=$(cat "$js" "$wasm" | sha256sum | cut -c1-16)
mv "$js" "$dir/hasseflow-lazy-$hash.js"
mv "$wasm" "$dir/hasseflow-lazy-${hash}_bg.wasm"
meta="<meta name=\"hasseflow-lazy\" data-js=\"./hasseflow-lazy-$hash.js\" data-wasm=\"./hasseflow-lazy-${hash}_bg.wasm\" />"
grep -q '</head>' "$dir/index.html" || { echo "hash_lazy.sh: index.html has no </head>" >&2; exit 1; }
sed -i "s#</head>#$meta\n</head>#" "$dir/index.html"
