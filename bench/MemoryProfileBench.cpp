//===- MemoryProfileBench.cpp - Time the memory profile analysis ----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Builds residual networks of growing depth in the lethe dialect (a chain of
// relu/tanh blocks with a skip connection around each, as in ResNets) and
// times MemoryProfile on them. The planner profiles every candidate schedule,
// so the analysis must stay linear in the size of the function.
//
// Usage: lethe-bench-memory-profile [--max-ops=200000]
//
//===----------------------------------------------------------------------===//

#include "BenchOptions.h"
#include "lethe/Analysis/MemoryProfile.h"
#include "lethe/Dialect/Lethe/IR/LetheDialect.h"
#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>

using namespace mlir;
using namespace mlir::lethe;

/// A function of `numBlocks` residual blocks, each `y = x + tanh(relu(x))`,
/// on tensors of `shape`: four ops per block.
static func::FuncOp buildResidualChain(OpBuilder &builder, ModuleOp module,
                                       int64_t numBlocks) {
  Location loc = builder.getUnknownLoc();
  auto type = RankedTensorType::get({32, 256}, builder.getF32Type());
  builder.setInsertionPointToEnd(module.getBody());
  auto function = func::FuncOp::create(builder, loc, "chain",
                                       builder.getFunctionType(type, type));
  Block *entry = function.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  Value x = entry->getArgument(0);
  for (int64_t block = 0; block < numBlocks; ++block) {
    Value relu = ReluOp::create(builder, loc, x);
    Value tanh = TanhOp::create(builder, loc, relu);
    Value neg = NegOp::create(builder, loc, tanh);
    x = AddOp::create(builder, loc, x, neg);
  }
  func::ReturnOp::create(builder, loc, x);
  return function;
}

int main(int argc, char **argv) {
  namespace bench = ::lethe::bench;
  std::vector<int> maxOps = {200000};
  const char *text =
      argc == 2 ? bench::flagValue(argv[1], "--max-ops") : nullptr;
  bool parsed = argc == 1 ||
                (text && bench::parseIntegerList(text, maxOps, 1000, 1 << 30));
  if (!parsed) {
    llvm::errs() << "usage: " << argv[0] << " [--max-ops=200000]\n";
    return 2;
  }
  MLIRContext context;
  context.loadDialect<LetheDialect, func::FuncDialect>();
  OpBuilder builder(&context);

  llvm::outs() << "MemoryProfile on residual chains (32x256xf32 tensors)\n";
  llvm::outs() << llvm::formatv("{0,10} {1,10} {2,16} {3,12} {4,14}\n", "ops",
                                "tensors", "peak bytes", "time ms",
                                "ns per op");
  for (int64_t numOps = 1000; numOps <= maxOps[0]; numOps *= 10) {
    OwningOpRef<ModuleOp> module = ModuleOp::create(builder.getUnknownLoc());
    func::FuncOp function = buildResidualChain(builder, *module, numOps / 4);
    MemoryProfile profile(function);
    auto start = std::chrono::steady_clock::now();
    if (failed(profile.run()))
      return 1;
    auto stop = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(stop - start).count();
    llvm::outs() << llvm::formatv(
        "{0,10} {1,10} {2,16} {3,12:F2} {4,14:F1}\n", profile.getOps().size(),
        profile.getValues().size(), profile.getPeak().bytes, ms,
        ms * 1e6 / profile.getOps().size());
  }
  return 0;
}
