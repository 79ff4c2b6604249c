//===- LetheTraits.h - Op traits of the lethe dialect -----------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Traits shared by Lethe ops.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DIALECT_LETHE_IR_LETHETRAITS_H
#define LETHE_DIALECT_LETHE_IR_LETHETRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::lethe::OpTrait {

/// Verifies an op's operands, attributes and result types by running its
/// result-type inference with the op's location: a bad operand gets the
/// diagnostic that inference emits ("'lethe.conv' op weight has ..."), and
/// declared result types that differ from the inferred ones get one that
/// names both. Listed before InferTypeOpInterface, whose own check would
/// then add a second, vaguer error ("failed to infer returned types").
template <typename ConcreteType>
class OperandsVerifiedByInference
    : public mlir::OpTrait::TraitBase<ConcreteType,
                                      OperandsVerifiedByInference> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    SmallVector<Type, 4> types;
    if (failed(ConcreteType::inferReturnTypes(
            op->getContext(), op->getLoc(), op->getOperands(),
            op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
            op->getRegions(), types)))
      return failure();
    if (!ConcreteType::isCompatibleReturnTypes(types, op->getResultTypes()))
      return op->emitOpError("result type")
             << (op->getNumResults() == 1 ? " " : "s ") << op->getResultTypes()
             << " differ" << (op->getNumResults() == 1 ? "s" : "")
             << " from the inferred " << TypeRange(types);
    return success();
  }
};

} // namespace mlir::lethe::OpTrait

#endif // LETHE_DIALECT_LETHE_IR_LETHETRAITS_H
