//===- TestModels.h - The test models' training steps in unit tests -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// What the tests of planned steps share: the training step of a test model
// (the ONNX files ctest's write-test-models fixture writes into
// LETHE_TEST_MODELS), the step function of a module, and random data.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_UNITTESTS_TESTMODELS_H
#define LETHE_UNITTESTS_TESTMODELS_H

#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Target/ONNX/ImportONNX.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

namespace lethe::testing {

/// The training step of test model `model`: `lossKind` on its output
/// `output`, the gradients, and with `optimizer` an Adam update (lr 0.01).
/// Adds a test failure and returns null when the model cannot be read.
inline mlir::OwningOpRef<mlir::ModuleOp>
buildTestModelStep(mlir::MLIRContext &context, const std::string &model,
                   const std::string &output, const std::string &lossKind,
                   bool optimizer) {
  using namespace mlir;
  using namespace mlir::lethe;
  const char *directory = std::getenv("LETHE_TEST_MODELS");
  EXPECT_TRUE(directory) << "LETHE_TEST_MODELS is not set; run through "
                            "ctest, which writes the models";
  if (!directory)
    return nullptr;
  std::string path = std::string(directory) + "/" + model + ".onnx";
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(buffer) << "cannot read " << path;
  if (!buffer)
    return nullptr;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = importONNX(sourceMgr, &context);
  EXPECT_TRUE(module) << "cannot import " << path;
  if (!module)
    return nullptr;
  PassManager passes(&context);
  AddLossPassOptions loss;
  loss.output = output;
  loss.kind = lossKind;
  passes.addPass(createAddLossPass(loss));
  passes.addPass(createAutodiffPass());
  if (optimizer) {
    AddOptimizerPassOptions adam;
    adam.kind = "adam";
    adam.learningRate = 0.01;
    passes.addPass(createAddOptimizerPass(adam));
  }
  EXPECT_TRUE(succeeded(passes.run(*module)));
  return module;
}

/// The (last) function of `module`: the training step.
inline mlir::func::FuncOp getStep(mlir::ModuleOp module) {
  mlir::func::FuncOp step;
  module.walk([&](mlir::func::FuncOp function) { step = function; });
  return step;
}

/// A data tensor of `type` drawn from `generator`: floats uniform in
/// [-1, 1), integers (class labels; the tiny models have at least 2
/// classes) 0 or 1.
inline mlir::lethe::HostTensor randomData(mlir::RankedTensorType type,
                                          std::mt19937 &generator) {
  mlir::lethe::HostTensor tensor(type);
  mlir::Type element = type.getElementType();
  int64_t count = type.getNumElements();
  for (int64_t i = 0; i < count; ++i) {
    if (element.isF64()) {
      double value = std::uniform_real_distribution<double>(-1, 1)(generator);
      std::memcpy(tensor.data() + 8 * i, &value, 8);
    } else if (element.isF32()) {
      float value = std::uniform_real_distribution<float>(-1, 1)(generator);
      std::memcpy(tensor.data() + 4 * i, &value, 4);
    } else {
      int64_t value = std::uniform_int_distribution<int64_t>(0, 1)(generator);
      std::memcpy(tensor.data() + 8 * i, &value, 8);
    }
  }
  return tensor;
}

} // namespace lethe::testing

#endif // LETHE_UNITTESTS_TESTMODELS_H
