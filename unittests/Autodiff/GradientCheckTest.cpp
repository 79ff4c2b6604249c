//===- GradientCheckTest.cpp - Gradients against finite differences -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Every gradient rule of --lethe-autodiff, checked against central finite
// differences in f64: each case is a small function whose first result is a
// scalar loss; the pass turns it into a training step, the reference
// interpreter runs it on seeded random inputs, and each element of each
// gradient must match (L(x + h) - L(x - h)) / 2h, the losses computed by the
// same training step, to a relative error under 1e-6.
//
//===----------------------------------------------------------------------===//

#include "AutodiffTestUtils.h"

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/Transforms/Passes.h"
#include "lethe/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

using namespace mlir;
using namespace mlir::lethe;

namespace {

/// A function to differentiate: `args` are its arguments (those to
/// differentiate marked `{lethe.trainable}`), `body` its ops ending in the
/// return of the loss, and float inputs are uniform in [low, high).
struct GradientCase {
  std::string name;
  std::string args;
  std::string body;
  double low = -1, high = 1;
  /// Whether --lethe-autodiff runs in training mode (its default).
  bool training = true;
};

/// `c` differentiated as written (training=false).
GradientCase asWritten(GradientCase c) {
  c.training = false;
  return c;
}

/// A case whose `ops` define %y of `type` from `args`; the loss weights %y
/// by a random %c and sums it, so that every element carries a different
/// weight.
GradientCase weighted(std::string name, std::string args, std::string ops,
                      std::string type, double low = -1, double high = 1) {
  std::string pair = "(" + type + ", " + type + ") -> " + type;
  return {std::move(name), args + ", %c: " + type,
          ops + "\n  %w = lethe.mul %y, %c : " + pair +
              "\n  %l = lethe.reduce_sum %w {keepdims = false} : (" + type +
              ") -> tensor<f64>\n  return %l : tensor<f64>",
          low, high};
}

/// A case of the unary op `op` (with `attributes`) on a 3x4 %x.
GradientCase unary(std::string op, std::string attributes = "", double low = -1,
                   double high = 1) {
  return weighted(op + (attributes.empty() ? "" : "_with_attributes"),
                  "%x: tensor<3x4xf64> {lethe.trainable}",
                  "%y = lethe." + op + " %x " + attributes +
                      ": tensor<3x4xf64>",
                  "tensor<3x4xf64>", low, high);
}

/// Names a case in gtest's messages.
void PrintTo(const GradientCase &c, std::ostream *os) { *os << c.name; }

/// The module of `c`: @main returning its loss as `lethe.loss`.
std::string moduleOf(const GradientCase &c) {
  return std::string("func.func @main(") + c.args +
         ") -> (tensor<f64> {lethe.loss}) {\n" + c.body + "\n}\n";
}

using GradientCheck = TrainingStepTest<GradientCase>;

TEST_P(GradientCheck, MatchesCentralDifferences) {
  const GradientCase &c = GetParam();
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(moduleOf(c), &context);
  ASSERT_TRUE(module) << moduleOf(c);
  PassManager passes(&context);
  AutodiffPassOptions options;
  options.training = c.training;
  passes.addPass(createAutodiffPass(options));
  ASSERT_TRUE(succeeded(passes.run(*module))) << moduleOf(c);
  auto step = module->lookupSymbol<func::FuncOp>("train_step");
  ASSERT_TRUE(step);

  // Seeded inputs: floats uniform in [low, high), integers (class labels)
  // and booleans 0 or 1.
  std::mt19937_64 rng(1234);
  std::uniform_real_distribution<double> uniform(c.low, c.high);
  std::vector<HostTensor> arguments;
  for (Type type : step.getArgumentTypes()) {
    HostTensor tensor(cast<RankedTensorType>(type));
    int64_t count = tensor.getType().getNumElements();
    for (int64_t i = 0; i < count; ++i) {
      if (tensor.getType().getElementType().isF64()) {
        double value = uniform(rng);
        std::memcpy(tensor.data() + i * sizeof(double), &value, sizeof(value));
      } else if (tensor.getType().getElementType().isInteger(1)) {
        tensor.data()[i] = static_cast<char>(rng() % 2);
      } else {
        ASSERT_TRUE(tensor.getType().getElementType().isInteger(64));
        int64_t value = rng() % 2;
        std::memcpy(tensor.data() + i * sizeof(int64_t), &value, sizeof(value));
      }
    }
    arguments.push_back(std::move(tensor));
  }

  FailureOr<std::vector<HostTensor>> results = interpreter.run(step, arguments);
  ASSERT_TRUE(succeeded(results));
  ASSERT_GT(results->size(), 1u) << "no gradient to check";
  const double h = 1e-5;
  for (unsigned r = 1; r < results->size(); ++r) {
    // Gradients, not the updated running statistics of training mode.
    auto index = step.getResultAttrOfType<IntegerAttr>(r, "lethe.gradient_of");
    if (!index) {
      EXPECT_TRUE(step.getResultAttr(r, "lethe.updates"));
      continue;
    }
    unsigned arg = index.getInt();
    const HostTensor &grad = (*results)[r];
    for (int64_t i = 0; i < grad.getType().getNumElements(); ++i) {
      double *slot = reinterpret_cast<double *>(arguments[arg].data()) + i;
      double saved = *slot;
      *slot = saved + h;
      double above = lossAt(step, arguments);
      *slot = saved - h;
      double below = lossAt(step, arguments);
      *slot = saved;
      double expected = (above - below) / (2 * h);
      double actual = grad.getAsDouble(i);
      EXPECT_LE(std::fabs(actual - expected),
                1e-6 * std::max(1.0, std::fabs(expected)))
          << "gradient of argument " << arg << ", element " << i
          << ": autodiff " << actual << ", finite differences " << expected;
    }
  }
}

const std::vector<GradientCase> kCases =
    {
        // Unary elementwise ops.
        unary("neg"),
        unary("clip", "{min = -0.5 : f64, max = 0.25 : f64} "),
        weighted("clip_min_only", "%x: tensor<3x4xf64> {lethe.trainable}",
                 "%y = lethe.clip %x {min = 0.0 : f64} : tensor<3x4xf64>",
                 "tensor<3x4xf64>"),
        unary("relu"),
        unary("leaky_relu", "{alpha = 0.2 : f32} "),
        unary("gelu", "", -3, 3),
        unary("gelu", "{approximate = \"tanh\"} ", -3, 3),
        unary("sigmoid", "", -3, 3),
        unary("tanh", "", -2, 2),
        unary("erf", "", -2, 2),
        unary("exp"),
        unary("log", "", 0.5, 2),
        unary("sqrt", "", 0.5, 2),
        // Binary ops, with broadcasting in both directions.
        weighted(
            "add_broadcast",
            "%a: tensor<3x4xf64> {lethe.trainable}, %b: tensor<4xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.add %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>)",
            "tensor<3x4xf64>"),
        weighted(
            "sub_broadcast_both",
            "%a: tensor<3x1xf64> {lethe.trainable}, %b: tensor<4xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.sub %a, %b : (tensor<3x1xf64>, tensor<4xf64>) -> tensor<3x4xf64>)",
            "tensor<3x4xf64>"),
        weighted(
            "mul_broadcast",
            "%a: tensor<2x3x4xf64> {lethe.trainable}, %b: tensor<3x1xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.mul %a, %b : (tensor<2x3x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>)",
            "tensor<2x3x4xf64>"),
        weighted(
            "div",
            "%a: tensor<3x4xf64> {lethe.trainable}, %b: tensor<4xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.div %a, %b : (tensor<3x4xf64>, tensor<4xf64>) -> tensor<3x4xf64>)",
            "tensor<3x4xf64>", 0.5, 2),
        weighted(
            "pow",
            "%a: tensor<3x4xf64> {lethe.trainable}, %b: tensor<3x4xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.pow %a, %b : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>)",
            "tensor<3x4xf64>", 0.5, 2),
        weighted(
            "value_used_twice", "%x: tensor<3x4xf64> {lethe.trainable}",
            R"(%s = lethe.mul %x, %x : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>
  %y = lethe.add %s, %x : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3x4xf64>)",
            "tensor<3x4xf64>"),
        // Products.
        weighted(
            "matmul_batched_broadcast",
            "%a: tensor<2x3x4xf64> {lethe.trainable}, %b: tensor<4x5xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.matmul %a, %b : (tensor<2x3x4xf64>, tensor<4x5xf64>) -> tensor<2x3x5xf64>)",
            "tensor<2x3x5xf64>"),
        // Vector operands: numpy's row and column, and the dot product.
        weighted(
            "matmul_vector_left",
            "%a: tensor<4xf64> {lethe.trainable}, %b: tensor<2x4x3xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.matmul %a, %b : (tensor<4xf64>, tensor<2x4x3xf64>) -> tensor<2x3xf64>)",
            "tensor<2x3xf64>"),
        weighted(
            "matmul_vector_right",
            "%a: tensor<2x3x4xf64> {lethe.trainable}, %b: tensor<4xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.matmul %a, %b : (tensor<2x3x4xf64>, tensor<4xf64>) -> tensor<2x3xf64>)",
            "tensor<2x3xf64>"),
        weighted(
            "matmul_dot",
            "%a: tensor<4xf64> {lethe.trainable}, %b: tensor<4xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.matmul %a, %b : (tensor<4xf64>, tensor<4xf64>) -> tensor<f64>)",
            "tensor<f64>"),
        weighted(
            "gemm",
            "%a: tensor<3x4xf64> {lethe.trainable}, %b: tensor<4x5xf64> "
            "{lethe.trainable}, %bias: tensor<5xf64> {lethe.trainable}",
            R"(%y = lethe.gemm %a, %b, %bias {alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<3x4xf64>, tensor<4x5xf64>, tensor<5xf64>) -> tensor<3x5xf64>)",
            "tensor<3x5xf64>"),
        weighted(
            "gemm_transposed",
            "%a: tensor<4x3xf64> {lethe.trainable}, %b: tensor<5x4xf64> "
            "{lethe.trainable}, %bias: tensor<3x1xf64> {lethe.trainable}",
            R"(%y = lethe.gemm %a, %b, %bias {trans_a, trans_b, alpha = 1.5 : f32} : (tensor<4x3xf64>, tensor<5x4xf64>, tensor<3x1xf64>) -> tensor<3x5xf64>)",
            "tensor<3x5xf64>"),
        weighted(
            "gemm_trans_a",
            "%a: tensor<4x3xf64> {lethe.trainable}, %b: tensor<4x5xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.gemm %a, %b {trans_a} : (tensor<4x3xf64>, tensor<4x5xf64>) -> tensor<3x5xf64>)",
            "tensor<3x5xf64>"),
        // Shapes.
        {"reshape_transpose_flatten",
         "%x: tensor<2x3x4xf64> {lethe.trainable}, %c: tensor<6x4xf64>",
         R"(%t = lethe.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf64>) -> tensor<3x4x2xf64>
  %r = lethe.reshape %t {shape = array<i64: 4, 3, 2>} : (tensor<3x4x2xf64>) -> tensor<4x3x2xf64>
  %f = lethe.flatten %r {axis = 2 : i64} : (tensor<4x3x2xf64>) -> tensor<12x2xf64>
  %s = lethe.reshape %f {shape = array<i64: 6, 4>} : (tensor<12x2xf64>) -> tensor<6x4xf64>
  %w = lethe.mul %s, %c : (tensor<6x4xf64>, tensor<6x4xf64>) -> tensor<6x4xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<6x4xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        {"squeeze_unsqueeze_expand",
         "%x: tensor<3x1xf64> {lethe.trainable}, %c: tensor<2x3x4xf64>",
         R"(%s = lethe.squeeze %x {axes = array<i64: 1>} : (tensor<3x1xf64>) -> tensor<3xf64>
  %u = lethe.unsqueeze %s {axes = array<i64: 0, 2>} : (tensor<3xf64>) -> tensor<1x3x1xf64>
  %e = lethe.expand %u {shape = array<i64: 2, 3, 4>} : (tensor<1x3x1xf64>) -> tensor<2x3x4xf64>
  %w = lethe.mul %e, %c : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<2x3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        // Reductions.
        {"reduce_mean_sum",
         "%x: tensor<2x3x4xf64> {lethe.trainable}, %c: tensor<2x4xf64>",
         R"(%m = lethe.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf64>) -> tensor<2x4xf64>
  %w = lethe.mul %m, %c : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %s = lethe.reduce_sum %w {axes = array<i64: -1>} : (tensor<2x4xf64>) -> tensor<2x1xf64>
  %l = lethe.reduce_mean %s {keepdims = false} : (tensor<2x1xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        // reduce_max (random inputs have no ties; LayerGradientTest checks
        // that tied maxima share the gradient).
        {"reduce_max",
         "%x: tensor<2x3x4xf64> {lethe.trainable}, %c: tensor<2x4xf64>",
         R"(%m = lethe.reduce_max %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4xf64>) -> tensor<2x4xf64>
  %w = lethe.mul %m, %c : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        // Softmax, along a given axis and the default one (-1).
        weighted("softmax_default_axis",
                 "%x: tensor<3x4xf64> {lethe.trainable}",
                 R"(%y = lethe.softmax %x : tensor<3x4xf64>)",
                 "tensor<3x4xf64>", -2, 2),
        weighted("log_softmax_default_axis",
                 "%x: tensor<3x4xf64> {lethe.trainable}",
                 R"(%y = lethe.log_softmax %x : tensor<3x4xf64>)",
                 "tensor<3x4xf64>", -2, 2),
        weighted("softmax", "%x: tensor<3x4xf64> {lethe.trainable}",
                 R"(%y = lethe.softmax %x {axis = 1 : i64} : tensor<3x4xf64>)",
                 "tensor<3x4xf64>", -2, 2),
        weighted(
            "log_softmax", "%x: tensor<2x3x4xf64> {lethe.trainable}",
            R"(%y = lethe.log_softmax %x {axis = 0 : i64} : tensor<2x3x4xf64>)",
            "tensor<2x3x4xf64>", -2, 2),
        // Losses.
        {"softmax_cross_entropy_mean",
         "%x: tensor<4x3xf64> {lethe.trainable}, %t: tensor<4xi64>",
         R"(%l, %p = lethe.softmax_cross_entropy %x, %t : (tensor<4x3xf64>, tensor<4xi64>) -> (tensor<f64>, tensor<4x3xf64>)
  return %l : tensor<f64>)",
         -2, 2},
        {"softmax_cross_entropy_weighted_sum_with_log_prob",
         "%x: tensor<2x3x2xf64> {lethe.trainable}, %t: tensor<2x2xi64>, "
         "%weights: tensor<3xf64>, %c: tensor<2x3x2xf64>",
         R"(%l, %p = lethe.softmax_cross_entropy %x, %t, %weights {reduction = "sum", ignore_index = 0 : i64} : (tensor<2x3x2xf64>, tensor<2x2xi64>, tensor<3xf64>) -> (tensor<f64>, tensor<2x3x2xf64>)
  %w = lethe.mul %p, %c : (tensor<2x3x2xf64>, tensor<2x3x2xf64>) -> tensor<2x3x2xf64>
  %s = lethe.reduce_sum %w {keepdims = false} : (tensor<2x3x2xf64>) -> tensor<f64>
  %total = lethe.add %l, %s : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %total : tensor<f64>)",
         0.5, 2},
        {"softmax_cross_entropy_none",
         "%x: tensor<4x3xf64> {lethe.trainable}, %t: tensor<4xi64>, "
         "%c: tensor<4xf64>",
         R"(%l, %p = lethe.softmax_cross_entropy %x, %t {reduction = "none"} : (tensor<4x3xf64>, tensor<4xi64>) -> (tensor<4xf64>, tensor<4x3xf64>)
  %w = lethe.mul %l, %c : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %s = lethe.reduce_sum %w {keepdims = false} : (tensor<4xf64>) -> tensor<f64>
  return %s : tensor<f64>)",
         -2, 2},
        {"nll_weighted_mean",
         "%x: tensor<4x3xf64> {lethe.trainable}, %t: tensor<4xi64>, "
         "%weights: tensor<3xf64>",
         R"(%l = lethe.nll %x, %t, %weights : (tensor<4x3xf64>, tensor<4xi64>, tensor<3xf64>) -> tensor<f64>
  return %l : tensor<f64>)",
         0.5, 2},
        {"mse",
         "%p: tensor<3x4xf64> {lethe.trainable}, %t: tensor<3x4xf64> "
         "{lethe.trainable}",
         R"(%l = lethe.mse %p, %t : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        {"mse_sum",
         "%p: tensor<3x4xf64> {lethe.trainable}, %t: tensor<3x4xf64>",
         R"(%l = lethe.mse %p, %t {reduction = "sum"} : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        // Convolutions: strided with uneven padding, groups and a bias (the
        // input gradient needs output_padding: (6 + 2 - 3) / 2 rounds
        // down);
        // dilated 1-D; transposed with output_padding and groups.
        weighted(
            "conv_strided_grouped",
            "%x: tensor<2x4x6x6xf64> {lethe.trainable}, %k: "
            "tensor<4x2x3x3xf64> "
            "{lethe.trainable}, %b: tensor<4xf64> {lethe.trainable}",
            R"(%y = lethe.conv %x, %k, %b {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xf64>, tensor<4x2x3x3xf64>, tensor<4xf64>) -> tensor<2x4x3x3xf64>)",
            "tensor<2x4x3x3xf64>"),
        weighted(
            "conv_dilated_1d",
            "%x: tensor<2x3x7xf64> {lethe.trainable}, %k: "
            "tensor<2x3x2xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.conv %x, %k {dilations = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<2x3x7xf64>, tensor<2x3x2xf64>) -> tensor<2x2x5xf64>)",
            "tensor<2x2x5xf64>"),
        weighted(
            "conv_transpose_strided_grouped",
            "%x: tensor<1x4x3x3xf64> {lethe.trainable}, %k: "
            "tensor<4x1x3x3xf64> "
            "{lethe.trainable}, %b: tensor<2xf64> {lethe.trainable}",
            R"(%y = lethe.conv_transpose %x, %k, %b {dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 0>, pads = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf64>, tensor<4x1x3x3xf64>, tensor<2xf64>) -> tensor<1x2x7x6xf64>)",
            "tensor<1x2x7x6xf64>"),
        // Pooling.
        weighted(
            "max_pool_padded", "%x: tensor<2x2x5x5xf64> {lethe.trainable}",
            R"(%y = lethe.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x2x5x5xf64>) -> tensor<2x2x3x3xf64>)",
            "tensor<2x2x3x3xf64>"),
        {"max_pool_with_indices_ceil",
         "%x: tensor<1x2x5x5xf64> {lethe.trainable}, %c: "
         "tensor<1x2x3x3xf64>",
         R"(%y, %i = lethe.max_pool_with_indices %x {ceil_mode, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf64>) -> (tensor<1x2x3x3xf64>, tensor<1x2x3x3xi64>)
  %w = lethe.mul %y, %c : (tensor<1x2x3x3xf64>, tensor<1x2x3x3xf64>) -> tensor<1x2x3x3xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<1x2x3x3xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        weighted(
            "avg_pool_count_include_pad",
            "%x: tensor<1x2x5x5xf64> {lethe.trainable}",
            R"(%y = lethe.avg_pool %x {count_include_pad, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf64>) -> tensor<1x2x3x3xf64>)",
            "tensor<1x2x3x3xf64>"),
        weighted(
            "avg_pool_ceil", "%x: tensor<1x2x6x4xf64> {lethe.trainable}",
            R"(%y = lethe.avg_pool %x {ceil_mode, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x6x4xf64>) -> tensor<1x2x4x2xf64>)",
            "tensor<1x2x4x2xf64>"),
        weighted(
            "global_avg_pool", "%x: tensor<2x3x4x4xf64> {lethe.trainable}",
            R"(%y = lethe.global_avg_pool %x : (tensor<2x3x4x4xf64>) -> tensor<2x3x1x1xf64>)",
            "tensor<2x3x1x1xf64>"),
        // Normalization.
        weighted(
            "batch_norm_train",
            "%x: tensor<3x2x2x2xf64> {lethe.trainable}, %s: tensor<2xf64> "
            "{lethe.trainable}, %b: tensor<2xf64> {lethe.trainable}, %m: "
            "tensor<2xf64>, %v: tensor<2xf64>",
            R"(%y, %rm, %rv, %sm, %si = lethe.batch_norm_train %x, %s, %b, %m, %v : (tensor<3x2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<3x2x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>))",
            "tensor<3x2x2x2xf64>"),
        asWritten(weighted(
            "batch_norm_inference",
            "%x: tensor<2x3x2xf64> {lethe.trainable}, %s: tensor<3xf64> "
            "{lethe.trainable}, %b: tensor<3xf64> {lethe.trainable}, %m: "
            "tensor<3xf64> {lethe.trainable}, %v: tensor<3xf64> "
            "{lethe.trainable}",
            R"(%y = lethe.batch_norm %x, %s, %b, %m, %v {epsilon = 0.01 : f32} : (tensor<2x3x2xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x2xf64>)",
            "tensor<2x3x2xf64>", 0.5, 1.5)),
        // In training mode, batch_norm normalizes with the batch's
        // statistics.
        weighted(
            "batch_norm_in_training_mode",
            "%x: tensor<3x2x2xf64> {lethe.trainable}, %s: tensor<2xf64> "
            "{lethe.trainable}, %b: tensor<2xf64> {lethe.trainable}, %m: "
            "tensor<2xf64>, %v: tensor<2xf64>",
            R"(%y = lethe.batch_norm %x, %s, %b, %m, %v : (tensor<3x2x2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> tensor<3x2x2xf64>)",
            "tensor<3x2x2xf64>"),
        weighted(
            "layer_norm_two_dims",
            "%x: tensor<2x3x4xf64> {lethe.trainable}, %s: tensor<3x4xf64> "
            "{lethe.trainable}, %b: tensor<3x4xf64> {lethe.trainable}",
            R"(%y, %mean, %inv = lethe.layer_norm %x, %s, %b {axis = 1 : i64} : (tensor<2x3x4xf64>, tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<2x3x4xf64>, tensor<2x1x1xf64>, tensor<2x1x1xf64>))",
            "tensor<2x3x4xf64>"),
        weighted(
            "layer_norm_no_bias",
            "%x: tensor<3x5xf64> {lethe.trainable}, %s: tensor<5xf64> "
            "{lethe.trainable}",
            R"(%y, %mean, %inv = lethe.layer_norm %x, %s : (tensor<3x5xf64>, tensor<5xf64>) -> (tensor<3x5xf64>, tensor<3x1xf64>, tensor<3x1xf64>))",
            "tensor<3x5xf64>"),
        // Resize: every mode, and a crop that extrapolates.
        weighted(
            "resize_nearest", "%x: tensor<1x2x3x3xf64> {lethe.trainable}", R"(%y = lethe.resize %x {coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>} : (tensor<1x2x3x3xf64>) -> tensor<1x2x6x6xf64>)",
            "tensor<1x2x6x6xf64>"),
        weighted(
            "resize_linear", "%x: tensor<1x1x3x4xf64> {lethe.trainable}",
            R"(%y = lethe.resize %x {mode = "linear", scales = array<f64: 1.0, 1.0, 2.0, 1.5>} : (tensor<1x1x3x4xf64>) -> tensor<1x1x6x6xf64>)",
            "tensor<1x1x6x6xf64>"),
        weighted(
            "resize_cubic_exclude_outside",
            "%x: tensor<1x1x4x4xf64> {lethe.trainable}",
            R"(%y = lethe.resize %x {coordinate_transformation_mode = "align_corners", exclude_outside = true, mode = "cubic", scales = array<f64: 1.0, 1.0, 1.5, 1.5>} : (tensor<1x1x4x4xf64>) -> tensor<1x1x6x6xf64>)",
            "tensor<1x1x6x6xf64>"),
        weighted(
            "resize_crop_extrapolated",
            "%x: tensor<1x1x4x4xf64> {lethe.trainable}",
            R"(%y = lethe.resize %x {coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 5.0 : f64, mode = "linear", roi = array<f64: 0.0, 0.0, -0.2, 0.3, 1.0, 1.0, 0.9, 1.2>, scales = array<f64: 1.0, 1.0, 1.5, 1.25>} : (tensor<1x1x4x4xf64>) -> tensor<1x1x6x5xf64>)",
            "tensor<1x1x6x5xf64>"),
        // Data movement.
        {"concat_split",
         "%a: tensor<2x3xf64> {lethe.trainable}, %b: tensor<2x2xf64> "
         "{lethe.trainable}, %c: tensor<2x4xf64>",
         R"(%j = lethe.concat %a, %b {axis = -1 : i64} : (tensor<2x3xf64>, tensor<2x2xf64>) -> tensor<2x5xf64>
  %p:2 = lethe.split %j {axis = 1 : i64, split = array<i64: 1, 4>} : (tensor<2x5xf64>) -> (tensor<2x1xf64>, tensor<2x4xf64>)
  %w = lethe.mul %p#1, %c : (tensor<2x4xf64>, tensor<2x4xf64>) -> tensor<2x4xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<2x4xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        weighted(
            "slice_strided_reversed", "%x: tensor<4x8xf64> {lethe.trainable}",
            R"(%y = lethe.slice %x {axes = array<i64: 0, -1>, ends = array<i64: 3, -9223372036854775808>, starts = array<i64: 1, -1>, steps = array<i64: 1, -2>} : (tensor<4x8xf64>) -> tensor<2x4xf64>)",
            "tensor<2x4xf64>"),
        // An embedding lookup: a row gathered twice gets both gradients.
        {"gather_repeated_rows",
         "%table: tensor<5x3xf64> {lethe.trainable}, %c: tensor<2x3x3xf64>",
         R"(%ids = lethe.constant dense<[[0, 3, 0], [4, -1, 2]]> : tensor<2x3xi64>
  %y = lethe.gather %table, %ids : (tensor<5x3xf64>, tensor<2x3xi64>) -> tensor<2x3x3xf64>
  %w = lethe.mul %y, %c : (tensor<2x3x3xf64>, tensor<2x3x3xf64>) -> tensor<2x3x3xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<2x3x3xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        weighted("gather_axis_1", "%x: tensor<2x4x3xf64> {lethe.trainable}",
                 R"(%ids = lethe.constant dense<[2, 2, 0]> : tensor<3xi32>
  %y = lethe.gather %x, %ids {axis = 1 : i64} : (tensor<2x4x3xf64>, tensor<3xi32>) -> tensor<2x3x3xf64>)",
                 "tensor<2x3x3xf64>"),
        weighted(
            "where_broadcast",
            "%cond: tensor<2x3xi1>, %a: tensor<2x3xf64> {lethe.trainable}, "
            "%b: "
            "tensor<3xf64> {lethe.trainable}",
            R"(%y = lethe.where %cond, %a, %b : (tensor<2x3xi1>, tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>)",
            "tensor<2x3xf64>"),
        {"dropout_training",
         "%x: tensor<4x5xf64> {lethe.trainable}, %c: tensor<4x5xf64>",
         R"(%y, %mask = lethe.dropout %x {ratio = 2.500000e-01 : f32, seed = 7 : i64, training} : (tensor<4x5xf64>) -> (tensor<4x5xf64>, tensor<4x5xi1>)
  %w = lethe.mul %y, %c : (tensor<4x5xf64>, tensor<4x5xf64>) -> tensor<4x5xf64>
  %l = lethe.reduce_sum %w {keepdims = false} : (tensor<4x5xf64>) -> tensor<f64>
  return %l : tensor<f64>)"},
        // A whole MLP: gemm with bias, relu, tanh, matmul, cross-entropy.
        {"mlp",
         "%x: tensor<4x3xf64>, %t: tensor<4xi64>, %w1: tensor<5x3xf64> "
         "{lethe.trainable}, %b1: tensor<5xf64> {lethe.trainable}, %w2: "
         "tensor<5x2xf64> {lethe.trainable}",
         R"(%h = lethe.gemm %x, %w1, %b1 {trans_b} : (tensor<4x3xf64>, tensor<5x3xf64>, tensor<5xf64>) -> tensor<4x5xf64>
  %r = lethe.relu %h : tensor<4x5xf64>
  %a = lethe.tanh %r : tensor<4x5xf64>
  %y = lethe.matmul %a, %w2 : (tensor<4x5xf64>, tensor<5x2xf64>) -> tensor<4x2xf64>
  %l, %p = lethe.softmax_cross_entropy %y, %t : (tensor<4x2xf64>, tensor<4xi64>) -> (tensor<f64>, tensor<4x2xf64>)
  return %l : tensor<f64>)"},
};

INSTANTIATE_TEST_SUITE_P(
    Rules, GradientCheck, ::testing::ValuesIn(kCases),
    [](const ::testing::TestParamInfo<GradientCase> &info) {
      return std::string(info.param.name);
    });

} // namespace
