//===- PrintMemoryProfile.cpp - --lethe-print-memory-profile -------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Prints the MemoryProfile analysis of every function in a module. The pass is
// a thin adapter: the analysis holds the logic.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/Transforms/Passes.h"

#include "lethe/Analysis/MemoryProfile.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::lethe {
#define GEN_PASS_DEF_PRINTMEMORYPROFILEPASS
#include "lethe/Dialect/Lethe/Transforms/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {
struct PrintMemoryProfilePass
    : public lethe::impl::PrintMemoryProfilePassBase<PrintMemoryProfilePass> {
  void runOnOperation() override {
    // Walk functions in order on one thread so that reports do not interleave.
    for (auto function : getOperation().getOps<FunctionOpInterface>()) {
      if (function.isExternal())
        continue;
      MemoryProfile profile(function);
      if (failed(profile.run()))
        return signalPassFailure();
      profile.print(llvm::errs());
      ++numFunctionsProfiled;
    }
    markAllAnalysesPreserved();
  }
};
} // namespace
