#!/usr/bin/env bash
# Prints what the viewer screenshots in docs/img are made from: a SHA-256 of
# the viewer's sources (viewer/*.c, viewer/*.h, in name order: what it
# draws) and of each scene shown. scripts/make_screenshots.sh writes these
# lines into docs/img/screens.txt with the pictures; tests/view_docs.sh
# compares them with the tree's and fails when the pictures are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "viewer $(LC_ALL=C cat $(LC_ALL=C ls viewer/*.c viewer/*.h) | sha256sum | cut -c1-64)"
for s in cloth_ball nbody fracture; do
    echo "scene $s $(sha256sum <"scenes/$s.json" | cut -c1-64)"
done
