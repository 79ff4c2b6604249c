#!/usr/bin/env bash
# Regenerates the dialect, interface and pass reference from the ODS and
# copies it into docs/reference/, where ctest's docs-reference test expects it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${LETHE_BUILD_DIR:-$root/build}
cmake --build "$build_dir" --target mlir-doc
cp "$build_dir"/docs/Dialects/LetheDialect.md \
   "$build_dir"/docs/Dialects/LetheInterfaces.md \
   "$build_dir"/docs/LethePasses.md \
   "$build_dir"/docs/LetheConversionPasses.md "$root/docs/reference/"
echo "updated $root/docs/reference"
