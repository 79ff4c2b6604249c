//===- lethe-translate.cpp - The Lethe translation driver -----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// mlir-translate for Lethe: translations between the `lethe` dialect and other
// formats. The ONNX importer registers `--import-onnx` here; the upstream
// MLIR-to-LLVM-IR translation is available for lowered IR.
//
//===----------------------------------------------------------------------===//

#include "lethe/InitAllDialects.h"
#include "lethe/Target/ONNX/ImportONNX.h"
#include "lethe/Tools/CommandLine.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

int main(int argc, char **argv) {
  ::lethe::tools::installFatalErrorHandler(argv[0]);
  mlir::lethe::registerImportONNXTranslation();
  mlir::registerToLLVMIRTranslation();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "Lethe translation driver\n"));
}
