//===- lethe-opt.cpp - The Lethe optimizer driver -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt for Lethe: parses IR in the `lethe` dialect (and the upstream
// dialects it mixes with), runs the passes named on the command line and
// prints the result.
//
//===----------------------------------------------------------------------===//

#include "lethe/InitAllDialects.h"
#include "lethe/InitAllPasses.h"
#include "lethe/Tools/CommandLine.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  ::lethe::tools::installFatalErrorHandler(argv[0]);
  mlir::lethe::registerAllPasses();
  mlir::DialectRegistry registry;
  mlir::lethe::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Lethe optimizer driver\n", registry));
}
