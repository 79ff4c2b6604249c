//===- LetheInterfaces.td - Lethe op interfaces --------------*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The cost interface that every Lethe op implements. The memory planner turns
// these figures into time estimates with a device profile (roofline: the
// larger of FLOPs over peak FLOP/s and bytes over bandwidth).
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_TD
#define LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_TD

include "mlir/IR/OpBase.td"

def Lethe_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::mlir::lethe";
  let description = [{
    The work an op does when executed once: floating-point operations, bytes
    read from and written to device memory, and bytes of temporary workspace
    it needs while it runs (freed when it returns). A multiply-add counts as
    two FLOPs. The defaults read every operand once and write every result
    once with no workspace; ops that do otherwise override them.
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/"Floating-point operations of one execution.",
      /*retTy=*/"int64_t", /*methodName=*/"getFlops">,
    InterfaceMethod<
      /*desc=*/"Bytes read from device memory by one execution.",
      /*retTy=*/"int64_t", /*methodName=*/"getBytesRead", /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::lethe::getTotalSizeInBytes($_op->getOperandTypes());
      }]>,
    InterfaceMethod<
      /*desc=*/"Bytes written to device memory by one execution.",
      /*retTy=*/"int64_t", /*methodName=*/"getBytesWritten", /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::lethe::getTotalSizeInBytes($_op->getResultTypes());
      }]>,
    InterfaceMethod<
      /*desc=*/"Bytes of temporary device workspace needed while it runs.",
      /*retTy=*/"int64_t", /*methodName=*/"getWorkspaceBytes", /*args=*/(ins),
      /*methodBody=*/"", /*defaultImplementation=*/[{ return 0; }]>,
  ];
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEINTERFACES_TD
