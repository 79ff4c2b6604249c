//===- LetheBase.td - Lethe dialect definition and op base ---*- tablegen -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The `lethe` dialect: DNN operators on statically shaped tensors, their
// gradients and optimizer updates, and the memory operations that the memory
// planner adds. This file holds the dialect itself, the type constraints that
// the ops share and the base classes of all ops.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHEBASE_TD
#define LETHE_DIALECT_LETHE_IR_LETHEBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "lethe/Dialect/Lethe/IR/LetheInterfaces.td"

def Lethe_Dialect : Dialect {
  let name = "lethe";
  let cppNamespace = "::mlir::lethe";
  let summary = "Deep-learning training operators for memory planning";
  let description = [{
    The `lethe` dialect models one training step of a deep neural network on
    statically shaped tensors: the forward operators imported from ONNX, their
    gradients, the optimizer updates and, after memory planning, explicit
    offload and prefetch operations. Operator attributes follow ONNX
    semantics (pads, strides, dilations, group, axis, epsilon, ...), so that
    importing an ONNX node is a direct mapping. Every operator implements the
    `CostOpInterface` (FLOPs, bytes read and written, workspace bytes), which
    the memory planner uses to estimate time. An op may carry
    `lethe.workspace_bytes = N : i64` (N >= 0, checked by the dialect): the
    workspace a measured profile found its backend asks for, which then
    replaces the interface's where it is larger. A function's result may
    carry `lethe.updates = k : i64`, the next value of argument k of a
    training step (an optimizer update); the dialect checks that k is an
    argument of the result's type that no other result updates.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let useDefaultAttributePrinterParser = 0;
  let useDefaultTypePrinterParser = 1;
  // `lethe.workspace_bytes` on an op (LetheInterfaces.h) is checked, and so
  // is `lethe.updates` on a function's result.
  let hasOperationAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// Floating-point element types Lethe computes in (f16/bf16 are stored as
/// such and computed in f32).
def Lethe_Float : AnyTypeOf<[F16, BF16, F32, F64]>;
/// Integer element types: signless integers are signed (two's complement),
/// unsigned ones come from ONNX's UINT types.
defvar Lethe_IntegerTypes = [I8, I16, I32, I64, UI8, UI16, UI32, UI64];
defvar Lethe_NumericTypes = !listconcat([F16, BF16, F32, F64],
                                        Lethe_IntegerTypes);
/// Element types a tensor may hold.
def Lethe_Element : AnyTypeOf<!listconcat(Lethe_NumericTypes, [I1])>;

/// A tensor constraint with a short summary: a statically shaped ranked
/// tensor whose element type is one of `elementTypes`.
class Lethe_TensorOf<list<Type> elementTypes, string summary>
    : Type<StaticShapeTensorOf<elementTypes>.predicate, summary,
           "::mlir::RankedTensorType">;

/// A statically shaped tensor of floating-point elements.
def Lethe_FloatTensor : Lethe_TensorOf<[F16, BF16, F32, F64],
    "statically shaped tensor of f16, bf16, f32 or f64">;
/// A statically shaped tensor of indices (class labels, gather indices).
def Lethe_IndexTensor : Lethe_TensorOf<[I32, I64],
    "statically shaped tensor of i32 or i64">;
/// A statically shaped tensor of booleans.
def Lethe_BoolTensor : Lethe_TensorOf<[I1], "statically shaped tensor of i1">;
/// A statically shaped tensor of numbers: floats or integers, not booleans.
def Lethe_NumericTensor : Lethe_TensorOf<Lethe_NumericTypes,
    "statically shaped tensor of f16, bf16, f32, f64, i8, i16, i32, i64, ui8, "
    "ui16, ui32 or ui64">;
/// A statically shaped tensor of any element type Lethe supports.
def Lethe_Tensor : Lethe_TensorOf<!listconcat(Lethe_NumericTypes, [I1]),
    "statically shaped tensor of f16, bf16, f32, f64, i1, i8, i16, i32, i64, "
    "ui8, ui16, ui32 or ui64">;

//===----------------------------------------------------------------------===//
// Op base classes
//===----------------------------------------------------------------------===//

/// Every Lethe op is pure (it has no side effect besides producing its
/// results) and reports its cost.
class Lethe_Op<string mnemonic, list<Trait> traits = []>
    : Op<Lethe_Dialect, mnemonic,
         !listconcat([Pure, DeclareOpInterfaceMethods<Lethe_CostOpInterface>],
                     traits)>;

/// Runs an op's result-type inference as its operand verifier (see
/// LetheTraits.h).
def Lethe_OperandsVerifiedByInference
    : NativeOpTrait<"OperandsVerifiedByInference"> {
  let cppNamespace = "::mlir::lethe::OpTrait";
}

/// An op whose result types are computed from its operands and attributes by
/// a C++ `inferReturnTypes` (with the Adaptor signature). The verifier checks
/// that the declared result types equal the inferred ones, and the
/// diagnostics of bad operands are emitted from `inferReturnTypes`.
class Lethe_InferredOp<string mnemonic, list<Trait> traits = []>
    : Lethe_Op<mnemonic, !listconcat([Lethe_OperandsVerifiedByInference,
                                       InferTypeOpAdaptor], traits)> {
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

#endif // LETHE_DIALECT_LETHE_IR_LETHEBASE_TD
