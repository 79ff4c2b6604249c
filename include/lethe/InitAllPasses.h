//===- InitAllPasses.h - Register every Lethe pass --------------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Registers Lethe's passes (and the upstream ones its pipelines use) with the
// global registry, so that lethe-opt accepts their flags.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_INITALLPASSES_H
#define LETHE_INITALLPASSES_H

#include "lethe/Conversion/Passes.h"
#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "lethe/Dialect/Lethe/Transforms/Pipelines.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::lethe {

/// Registers every Lethe pass and pipeline and the upstream general-purpose
/// transforms (canonicalize, cse, ...).
inline void registerAllPasses() {
  registerLethePasses();
  registerLetheConversionPasses();
  registerTrainingPipeline();
  registerTransformsPasses();
}

} // namespace mlir::lethe

#endif // LETHE_INITALLPASSES_H
