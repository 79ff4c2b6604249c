//===- AutodiffTestUtils.h - Shared fixture of the gradient tests -*- C++
//-*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What the finite-difference tests share: an MLIR context with the dialects
// a training step uses, and the reference interpreter to run it.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_AUTODIFF_AUTODIFFTESTUTILS_H
#define LETHE_UNITTESTS_AUTODIFF_AUTODIFFTESTUTILS_H

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mlir::lethe {

/// A parameterized test that runs training steps with the interpreter.
template <typename Param>
class TrainingStepTest : public ::testing::TestWithParam<Param> {
protected:
  TrainingStepTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registry.insert<LetheDialect, func::FuncDialect>();
    return registry;
  }

  /// The loss (result 0) of `step` on `arguments` (copied).
  double lossAt(func::FuncOp step, const std::vector<HostTensor> &arguments) {
    FailureOr<std::vector<HostTensor>> results =
        interpreter.run(step, arguments);
    EXPECT_TRUE(succeeded(results));
    return succeeded(results) ? (*results)[0].getAsDouble(0) : NAN;
  }

  MLIRContext context;
  Interpreter interpreter;
};

} // namespace mlir::lethe

#endif // LETHE_UNITTESTS_AUTODIFF_AUTODIFFTESTUTILS_H
