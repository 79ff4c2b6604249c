//===- ModelGradientTest.cpp - Whole-model gradients against FD -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The training steps of the test models (python/lethe/onnx_models.py: the
// MLP, the CNN with BatchNorm and a residual block, the transformer block
// and the U-Net), built small and in f64, imported from ONNX, given a loss
// and differentiated in training mode, against central finite differences:
// every element of every parameter gradient must match (L(p + h) - L(p -
// h)) / 2h to a relative error under 1e-6.
//
// Relu and max pooling make the loss piecewise smooth: a step of h that
// moves a pre-activation across zero (or swaps a window's maximum) makes
// the finite difference meaningless there. Such an element is recognized
// by its one-sided differences disagreeing, counted and skipped; a test
// fails if more than 1% of a model's elements are.
//
// The models are written by `python3 -m lethe.onnx_models --tiny --float64`
// into the directory in LETHE_TEST_MODELS (ctest sets it up).
//
//===----------------------------------------------------------------------===//

#include "AutodiffTestUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Target/ONNX/ImportONNX.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::lethe;

namespace {

/// A model and the loss it trains with.
struct ModelCase {
  std::string name;
  std::string output;
  std::string kind;
};

void PrintTo(const ModelCase &c, std::ostream *os) { *os << c.name; }

using ModelGradient = TrainingStepTest<ModelCase>;

TEST_P(ModelGradient, MatchesCentralDifferences) {
  const ModelCase &c = GetParam();
  const char *directory = std::getenv("LETHE_TEST_MODELS");
  ASSERT_TRUE(directory) << "LETHE_TEST_MODELS is not set; run through ctest, "
                            "which writes the models";
  std::string path = std::string(directory) + "/" + c.name + ".onnx";
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(buffer) << "cannot read " << path;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = importONNX(sourceMgr, &context);
  ASSERT_TRUE(module) << "cannot import " << path;

  PassManager passes(&context);
  AddLossPassOptions loss;
  loss.output = c.output;
  loss.kind = c.kind;
  passes.addPass(createAddLossPass(loss));
  passes.addPass(createAutodiffPass());
  ASSERT_TRUE(succeeded(passes.run(*module)));
  auto step = module->lookupSymbol<func::FuncOp>("train_step");
  ASSERT_TRUE(step);

  // Parameters take their initial values; data inputs and float targets
  // are uniform in [-1, 1), class labels 0 or 1, the step 0.
  std::mt19937_64 rng(4321);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<HostTensor> arguments;
  for (auto [index, type] : llvm::enumerate(step.getArgumentTypes())) {
    if (auto initial =
            step.getArgAttrOfType<ElementsAttr>(index, "lethe.initializer")) {
      FailureOr<HostTensor> tensor = tensorFromAttribute(initial);
      ASSERT_TRUE(succeeded(tensor));
      arguments.push_back(std::move(*tensor));
      continue;
    }
    HostTensor tensor(cast<RankedTensorType>(type));
    Type element = tensor.getType().getElementType();
    for (int64_t i = 0, e = tensor.getType().getNumElements(); i < e; ++i) {
      if (element.isF64()) {
        double value = uniform(rng);
        std::memcpy(tensor.data() + i * sizeof(double), &value, sizeof(value));
      } else {
        ASSERT_TRUE(element.isInteger(64));
        int64_t value =
            step.getArgAttr(index, "lethe.step") ? 0 : int64_t(rng() % 2);
        std::memcpy(tensor.data() + i * sizeof(value), &value, sizeof(value));
      }
    }
    arguments.push_back(std::move(tensor));
  }

  FailureOr<std::vector<HostTensor>> results = interpreter.run(step, arguments);
  ASSERT_TRUE(succeeded(results));
  const double h = 1e-6;
  int64_t checked = 0, skipped = 0, gradients = 0;
  for (unsigned r = 1; r < results->size(); ++r) {
    auto index = step.getResultAttrOfType<IntegerAttr>(r, "lethe.gradient_of");
    if (!index)
      continue; // an updated running statistic
    ++gradients;
    unsigned arg = index.getInt();
    const HostTensor &grad = (*results)[r];
    double center = lossAt(step, arguments);
    for (int64_t i = 0; i < grad.getType().getNumElements(); ++i) {
      double *slot = reinterpret_cast<double *>(arguments[arg].data()) + i;
      double saved = *slot;
      *slot = saved + h;
      double above = lossAt(step, arguments);
      *slot = saved - h;
      double below = lossAt(step, arguments);
      *slot = saved;
      double expected = (above - below) / (2 * h);
      double scale = std::max(1.0, std::fabs(expected));
      // One-sided differences that disagree: a kink within h.
      if (std::fabs((above - center) - (center - below)) / h > 1e-4 * scale) {
        ++skipped;
        continue;
      }
      ++checked;
      double actual = grad.getAsDouble(i);
      EXPECT_LE(std::fabs(actual - expected), 1e-6 * scale)
          << "gradient of argument " << arg << ", element " << i
          << ": autodiff " << actual << ", finite differences " << expected;
    }
  }
  EXPECT_GT(gradients, 0) << "no parameter gradient";
  EXPECT_LE(skipped * 100, checked + skipped)
      << skipped << " of " << checked + skipped << " elements were skipped";
  std::printf("%s: %lld gradient elements of %lld parameters checked, %lld "
              "skipped at a kink\n",
              c.name.c_str(), static_cast<long long>(checked),
              static_cast<long long>(gradients),
              static_cast<long long>(skipped));
}

INSTANTIATE_TEST_SUITE_P(
    Models, ModelGradient,
    ::testing::Values(ModelCase{"mlp", "logits", "softmax_cross_entropy"},
                      ModelCase{"cnn", "logits", "softmax_cross_entropy"},
                      ModelCase{"transformer", "y", "mse"},
                      ModelCase{"unet", "y", "mse"}),
    [](const ::testing::TestParamInfo<ModelCase> &info) {
      return info.param.name;
    });

} // namespace
