//===- TrainingTest.cpp - An MLP learns a separable problem ---------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// End to end: a two-layer MLP goes through --lethe-add-loss,
// --lethe-autodiff and --lethe-add-optimizer, and TrainingLoop trains it with
// the interpreter on a synthetic problem that a classifier can learn: the
// label of an input x (4 standard normal features) is the argmax of x M for
// a fixed random 4x3 matrix M, so the classes are separated by hyperplanes.
// Every step draws a fresh batch of 64 from that distribution, so the loss
// measures how well the model generalizes, not how well it remembers one
// batch. SGD must lower the loss tenfold in 200 steps, and Adam must get
// there in fewer steps. Losses are averaged over 10 steps, since each batch
// is different.
//
//===----------------------------------------------------------------------===//

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "lethe/Interpreter/TrainingLoop.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::lethe;

namespace {

constexpr int64_t kBatch = 64, kFeatures = 4, kHidden = 32, kClasses = 3;
constexpr int kSteps = 200;
/// The losses are averaged over windows of this many steps.
constexpr int kWindow = 10;

/// `count` values drawn from a normal distribution with deviation `scale`.
std::vector<float> normal(std::mt19937_64 &rng, int64_t count, double scale) {
  std::normal_distribution<double> distribution(0.0, scale);
  std::vector<float> values(count);
  for (float &value : values)
    value = static_cast<float>(distribution(rng));
  return values;
}

/// The MLIR literal of `values` as a tensor of `shape` (one dimension or
/// two), each float printed exactly.
std::string denseLiteral(const std::vector<float> &values,
                         std::vector<int64_t> shape) {
  std::string text = "dense<";
  size_t columns = static_cast<size_t>(shape.back());
  if (shape.size() == 2)
    text += "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i % columns == 0)
      text += i ? ", [" : "[";
    else
      text += ", ";
    text += llvm::formatv("{0:e9}", values[i]).str();
    if (i % columns == columns - 1)
      text += "]";
  }
  if (shape.size() == 2)
    text += "]";
  std::string type = "tensor<";
  for (int64_t dim : shape)
    type += std::to_string(dim) + "x";
  return text + "> : " + type + "f32>";
}

/// The MLP x (N, 4) -> matmul, add, relu (32) -> matmul, add (3) -> logits,
/// with He-initialized weights and zero biases (seeded).
std::string mlpModule() {
  std::mt19937_64 rng(2024);
  auto parameter = [&](const char *name, std::vector<int64_t> shape,
                       double scale) {
    int64_t count = shape.size() == 2 ? shape[0] * shape[1] : shape[0];
    std::vector<float> values = scale == 0 ? std::vector<float>(count, 0.0f)
                                           : normal(rng, count, scale);
    std::string type =
        shape.size() == 2
            ? llvm::formatv("tensor<{0}x{1}xf32>", shape[0], shape[1]).str()
            : llvm::formatv("tensor<{0}xf32>", shape[0]).str();
    return llvm::formatv("%{0}: {1} {{lethe.name = \"{0}\", lethe.parameter, "
                         "lethe.trainable, lethe.initializer = {2}}",
                         name, type, denseLiteral(values, shape))
        .str();
  };
  std::string w1 =
      parameter("w1", {kFeatures, kHidden}, std::sqrt(2.0 / kFeatures));
  std::string b1 = parameter("b1", {kHidden}, 0);
  std::string w2 =
      parameter("w2", {kHidden, kClasses}, std::sqrt(1.0 / kHidden));
  std::string b2 = parameter("b2", {kClasses}, 0);
  return llvm::formatv(
             R"mlir(func.func @main(%x: tensor<{0}x{1}xf32> {{lethe.name = "x"}, {4}, {5}, {6}, {7}) -> (tensor<{0}x{3}xf32> {{lethe.name = "logits"}) {{
  %0 = lethe.matmul %x, %w1 : (tensor<{0}x{1}xf32>, tensor<{1}x{2}xf32>) -> tensor<{0}x{2}xf32>
  %1 = lethe.add %0, %b1 : (tensor<{0}x{2}xf32>, tensor<{2}xf32>) -> tensor<{0}x{2}xf32>
  %2 = lethe.relu %1 : tensor<{0}x{2}xf32>
  %3 = lethe.matmul %2, %w2 : (tensor<{0}x{2}xf32>, tensor<{2}x{3}xf32>) -> tensor<{0}x{3}xf32>
  %4 = lethe.add %3, %b2 : (tensor<{0}x{3}xf32>, tensor<{3}xf32>) -> tensor<{0}x{3}xf32>
  return %4 : tensor<{0}x{3}xf32>
}
)mlir",
             kBatch, kFeatures, kHidden, kClasses, w1, b1, w2, b2)
      .str();
}

/// The synthetic problem: x standard normal, label argmax(x M).
class SeparableProblem {
public:
  explicit SeparableProblem(uint64_t seed) : rng(seed) {
    map = normal(rng, kFeatures * kClasses, 1.0);
  }

  /// A fresh batch: the inputs (N, 4) and their labels (N).
  void draw(std::vector<float> &x, std::vector<int64_t> &labels) {
    x = normal(rng, kBatch * kFeatures, 1.0);
    labels.assign(kBatch, 0);
    for (int64_t n = 0; n < kBatch; ++n) {
      double best = -INFINITY;
      for (int64_t c = 0; c < kClasses; ++c) {
        double score = 0;
        for (int64_t f = 0; f < kFeatures; ++f)
          score += x[n * kFeatures + f] * map[f * kClasses + c];
        if (score > best) {
          best = score;
          labels[n] = c;
        }
      }
    }
  }

private:
  std::mt19937_64 rng;
  std::vector<float> map;
};

/// A tensor of `type` holding `values`.
template <typename T>
HostTensor tensorOf(Type type, const std::vector<T> &values) {
  HostTensor tensor(cast<RankedTensorType>(type));
  std::memcpy(tensor.data(), values.data(), values.size() * sizeof(T));
  return tensor;
}

/// What a training run gave.
struct TrainingRun {
  std::vector<double> losses;

  double mean(int begin) const {
    return std::accumulate(losses.begin() + begin,
                           losses.begin() + begin + kWindow, 0.0) /
           kWindow;
  }
  /// The loss of the first step (the untrained model).
  double initial() const { return losses.front(); }
  /// The mean loss of the last window.
  double final() const { return mean(losses.size() - kWindow); }
  /// The first step at which the mean loss of the window ending there is at
  /// most a tenth of the initial loss.
  std::optional<int> tenfoldLowerAt() const {
    for (size_t end = kWindow; end <= losses.size(); ++end)
      if (mean(end - kWindow) <= initial() / 10)
        return end - 1;
    return std::nullopt;
  }
};

class TrainingTest : public ::testing::Test {
protected:
  TrainingTest() : context(makeRegistry()) {
    context.loadAllAvailableDialects();
  }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registry.insert<LetheDialect, func::FuncDialect>();
    return registry;
  }

  /// Trains the MLP for kSteps with the optimizer `options` (those of
  /// --lethe-add-optimizer) on fresh batches of the problem.
  TrainingRun train(const std::string &options) {
    TrainingRun run;
    std::string text = mlpModule();
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return run;
    registerLethePasses();
    PassManager passes(&context);
    std::string pipeline = "lethe-add-loss{output=logits "
                           "kind=softmax_cross_entropy},lethe-autodiff,"
                           "lethe-add-optimizer{" +
                           options + "}";
    EXPECT_TRUE(succeeded(parsePassPipeline(pipeline, passes))) << pipeline;
    EXPECT_TRUE(succeeded(passes.run(*module)));
    auto step = module->lookupSymbol<func::FuncOp>("train_step");
    EXPECT_TRUE(step) << pipeline;
    if (!step)
      return run;
    FailureOr<std::unique_ptr<TrainingLoop>> loop = TrainingLoop::create(step);
    EXPECT_TRUE(succeeded(loop));
    if (failed(loop))
      return run;

    SeparableProblem problem(/*seed=*/7);
    std::vector<float> x;
    std::vector<int64_t> labels;
    for (int number = 0; number < kSteps; ++number) {
      problem.draw(x, labels);
      std::vector<HostTensor> arguments(step.getNumArguments());
      for (unsigned index = 0; index < step.getNumArguments(); ++index) {
        if (!(*loop)->needsArgument(index))
          continue;
        Type type = step.getArgumentTypes()[index];
        if (step.getArgAttr(index, "lethe.label"))
          arguments[index] = tensorOf(type, labels);
        else
          arguments[index] = tensorOf(type, x);
      }
      FailureOr<double> loss = (*loop)->step(std::move(arguments));
      EXPECT_TRUE(succeeded(loss));
      if (failed(loss))
        return run;
      run.losses.push_back(*loss);
    }
    return run;
  }

  /// Prints the run's figures and records them as test properties.
  void report(const std::string &name, const TrainingRun &run) {
    std::optional<int> tenfold = run.tenfoldLowerAt();
    std::string line = llvm::formatv(
        "{0}: loss {1:f4} at step 0, {2:f4} (mean of steps {3}-{4}), {5:f1}x "
        "lower; a tenth of the initial loss first at step {6}",
        name, run.initial(), run.final(), kSteps - kWindow, kSteps - 1,
        run.initial() / run.final(),
        tenfold ? std::to_string(*tenfold) : std::string("never"));
    llvm::outs() << line << "\n";
    llvm::outs().flush();
    RecordProperty(name, line);
  }

  MLIRContext context;
};

TEST_F(TrainingTest, SgdLowersTheLossTenfoldAndAdamGetsThereFaster) {
  TrainingRun sgd = train("kind=sgd lr=0.5");
  ASSERT_EQ(sgd.losses.size(), static_cast<size_t>(kSteps));
  report("sgd", sgd);
  // The untrained model is about as good as a guess among 3 classes.
  EXPECT_GT(sgd.initial(), 0.5);
  EXPECT_LE(sgd.final(), sgd.initial() / 10);
  std::optional<int> sgdTenfold = sgd.tenfoldLowerAt();
  ASSERT_TRUE(sgdTenfold);

  TrainingRun adam = train("kind=adam lr=0.03");
  ASSERT_EQ(adam.losses.size(), static_cast<size_t>(kSteps));
  report("adam", adam);
  // Same initial model and batches: Adam's first loss is SGD's.
  EXPECT_EQ(adam.initial(), sgd.initial());
  std::optional<int> adamTenfold = adam.tenfoldLowerAt();
  ASSERT_TRUE(adamTenfold);
  EXPECT_LT(*adamTenfold, *sgdTenfold);
}

} // namespace
