//===- MemoryProfileTest.cpp - Tests of the memory profile ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The liveness arithmetic against a brute-force count on random intervals,
// and the analysis on small functions whose profiles were worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "lethe/Analysis/MemoryProfile.h"

#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir;
using namespace mlir::lethe;

namespace {

TEST(LiveBytesTest, MatchesBruteForceOnRandomIntervals) {
  std::mt19937_64 rng(20261122);
  for (int trial = 0; trial < 200; ++trial) {
    int64_t numSteps = 1 + rng() % 40;
    std::vector<LiveInterval> intervals(rng() % 30);
    for (LiveInterval &interval : intervals) {
      interval.begin = rng() % numSteps;
      interval.end = interval.begin + rng() % (numSteps - interval.begin);
      interval.sizeInBytes = 1 + rng() % 1000;
    }
    std::vector<int64_t> live = computeLiveBytes(intervals, numSteps);
    ASSERT_EQ(static_cast<int64_t>(live.size()), numSteps);
    int64_t bruteForcePeak = 0;
    for (int64_t step = 0; step < numSteps; ++step) {
      int64_t expected = 0;
      for (const LiveInterval &interval : intervals)
        if (interval.begin <= step && step <= interval.end)
          expected += interval.sizeInBytes;
      EXPECT_EQ(live[step], expected) << "trial " << trial << " step " << step;
      bruteForcePeak = std::max(bruteForcePeak, expected);
    }
    Peak peak = findPeak(live);
    EXPECT_EQ(peak.bytes, bruteForcePeak);
    ASSERT_GE(peak.step, 0);
    EXPECT_EQ(live[peak.step], bruteForcePeak);
    // The first step at which the peak is reached.
    for (int64_t step = 0; step < peak.step; ++step)
      EXPECT_LT(live[step], peak.bytes);
  }
}

TEST(LiveBytesTest, EmptySchedule) {
  EXPECT_TRUE(computeLiveBytes({}, 0).empty());
  Peak peak = findPeak({});
  EXPECT_EQ(peak.bytes, 0);
  EXPECT_EQ(peak.step, -1);
}

class MemoryProfileTest : public ::testing::Test {
protected:
  MemoryProfileTest() {
    context.loadDialect<LetheDialect, func::FuncDialect>();
  }

  /// Parses `source` and returns its first function.
  func::FuncOp parseFunction(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << "failed to parse the test input";
    if (!module)
      return {};
    return *module->getOps<func::FuncOp>().begin();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

// A residual block: %arg0 stays live across the branch until the add.
//   op #0 relu:  arg0 (64) + %0 (64)                   = 128
//   op #1 neg:   arg0 + %0 + %1 (64)                   = 192
//   op #2 add:   arg0 + %1 + %2 (64)                   = 192 (%0 died at #1)
//   op #3 return: %2                                   =  64
TEST_F(MemoryProfileTest, ResidualBranchKeepsInputLive) {
  func::FuncOp function = parseFunction(R"mlir(
    func.func @residual(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %0 = lethe.relu %x : tensor<4x4xf32>
      %1 = lethe.neg %0 : tensor<4x4xf32>
      %2 = lethe.add %x, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      return %2 : tensor<4x4xf32>
    })mlir");
  ASSERT_TRUE(function);
  MemoryProfile profile(function);
  ASSERT_TRUE(succeeded(profile.run()));

  ASSERT_EQ(profile.getOps().size(), 4u);
  ASSERT_EQ(profile.getValues().size(), 4u);
  LiveInterval argument = profile.getValues()[0].interval;
  EXPECT_EQ(argument.sizeInBytes, 64);
  EXPECT_EQ(argument.begin, 0);
  EXPECT_EQ(argument.end, 2);
  LiveInterval sum = profile.getValues()[3].interval;
  EXPECT_EQ(sum.begin, 2);
  EXPECT_EQ(sum.end, 3);

  EXPECT_EQ(profile.getLiveBytes().vec(),
            (std::vector<int64_t>{128, 192, 192, 64}));
  EXPECT_EQ(profile.getPeak().bytes, 192);
  EXPECT_EQ(profile.getPeak().step, 1);
  EXPECT_EQ(profile.getPeakOp()->getName().getStringRef(), "lethe.neg");
}

// Element sizes: f16 takes 2 bytes, i1 one byte, f64 eight.
TEST_F(MemoryProfileTest, SizesFollowElementTypes) {
  func::FuncOp function = parseFunction(R"mlir(
    func.func @sizes(%a: tensor<3x5xf16>, %b: tensor<7xi1>, %c: tensor<2xf64>) -> tensor<2xf64> {
      return %c : tensor<2xf64>
    })mlir");
  ASSERT_TRUE(function);
  MemoryProfile profile(function);
  ASSERT_TRUE(succeeded(profile.run()));
  ASSERT_EQ(profile.getValues().size(), 3u);
  EXPECT_EQ(profile.getValues()[0].interval.sizeInBytes, 30);
  EXPECT_EQ(profile.getValues()[1].interval.sizeInBytes, 7);
  EXPECT_EQ(profile.getValues()[2].interval.sizeInBytes, 16);
  // Unused arguments are live at op 0 only, which is the return here.
  EXPECT_EQ(profile.getPeak().bytes, 53);
}

TEST_F(MemoryProfileTest, DynamicShapeIsAnError) {
  func::FuncOp function = parseFunction(R"mlir(
    func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
      return %a : tensor<?x4xf32>
    })mlir");
  ASSERT_TRUE(function);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diagnostic) {
    message = diagnostic.str();
    return success();
  });
  MemoryProfile profile(function);
  EXPECT_TRUE(failed(profile.run()));
  EXPECT_NE(message.find("static shapes"), std::string::npos) << message;
}

TEST_F(MemoryProfileTest, DeclarationHasEmptyProfile) {
  func::FuncOp function =
      parseFunction("func.func private @external(tensor<4xf32>)");
  ASSERT_TRUE(function);
  MemoryProfile profile(function);
  ASSERT_TRUE(succeeded(profile.run()));
  EXPECT_TRUE(profile.getOps().empty());
  EXPECT_EQ(profile.getPeakOp(), nullptr);
  EXPECT_EQ(profile.getPeak().bytes, 0);
}

} // namespace
