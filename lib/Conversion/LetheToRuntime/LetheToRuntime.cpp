//===- LetheToRuntime.cpp - Planned steps to runtime calls ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The --convert-lethe-to-runtime pass: a training step laid out in the arena
// by --lethe-assign-arena becomes `lethe_program_step`, an LLVM dialect
// function that makes, op by op, the runtime calls the reference interpreter
// makes (lib/Interpreter/OpExecution.cpp is the specification: same kernels,
// same enum values, same attribute arguments, same NULLs), on descriptors of
// the values' arena slots, with the event waits the runtime's stream rules
// (lethe_rt.h, "Memory and streams") need.
//
// The pass works in two stages: a static analysis of the byte ranges each op
// reads and writes on its stream decides where the waits go (SyncPlan), then
// the function is emitted in one walk (StepLowering).
//
//===----------------------------------------------------------------------===//

#include "lethe/Conversion/Passes.h"

#include "lethe/Dialect/Lethe/IR/LetheOps.h"
#include "lethe/Dialect/Lethe/IR/TensorSize.h"
#include "lethe/Dialect/Lethe/Transforms/Attributes.h"
#include "lethe/Interpreter/Interpreter.h"
#include "lethe/Interpreter/RuntimeArguments.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

#include <array>
#include <cmath>
#include <map>

namespace mlir::lethe {
#define GEN_PASS_DEF_CONVERTLETHETORUNTIMEPASS
#include "lethe/Conversion/Passes.h.inc"
} // namespace mlir::lethe

using namespace mlir;
using namespace mlir::lethe;

namespace {

constexpr StringLiteral kPassName = "convert-lethe-to-runtime";

//===----------------------------------------------------------------------===//
// Synchronisation
//===----------------------------------------------------------------------===//

/// A byte range [begin, end) of the arena (space 0) or the host pool (1).
struct ByteRange {
  int space;
  int64_t begin, end;
  bool overlaps(const ByteRange &other) const {
    return space == other.space && begin < other.end && other.begin < end;
  }
};

bool anyOverlap(ArrayRef<ByteRange> lhs, ArrayRef<ByteRange> rhs) {
  for (const ByteRange &a : lhs)
    for (const ByteRange &b : rhs)
      if (a.overlaps(b))
        return true;
  return false;
}

/// What one op of the step does to memory, on which stream.
struct Access {
  lethe_rt_stream stream;
  SmallVector<ByteRange> reads, writes;
  /// For a prefetch, the offload (op number) that filled the host region it
  /// reads: the prefetch always waits for it directly, even when earlier
  /// waits already order them, so that the ordering does not rest on a
  /// backend's transitive event semantics.
  int filledBy = -1;
};

/// A wait of `stream` issued before an op: on the compute stream's work so
/// far (`copy` < 0: an event recorded on compute just before), or on the
/// event recorded after the copy op number `copy`.
struct Wait {
  lethe_rt_stream stream;
  int copy;
};

/// Where the waits of a step go.
struct SyncPlan {
  /// Per op (numbered as the accesses given to build): the waits issued
  /// before it, and whether an event is recorded after it (a copy that some
  /// later op waits for).
  std::vector<SmallVector<Wait, 2>> waits;
  std::vector<bool> recordAfter;
  bool usesComputeEvent = false;

  /// Places the waits for `accesses`, in issue order. Each stream runs its
  /// work in order; an op must wait for the earlier work of another stream
  /// that writes what it reads or writes, or reads what it writes, unless
  /// earlier waits already order it after that work. Which work a stream is
  /// ordered after is a vector clock: clock[s][t] = the number of the first
  /// ops of stream t that stream s's next work follows.
  static SyncPlan build(ArrayRef<Access> accesses) {
    using Clock = std::array<int64_t, 3>;
    SyncPlan plan;
    plan.waits.resize(accesses.size());
    plan.recordAfter.assign(accesses.size(), false);
    Clock clock[3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    std::vector<int64_t> indexInStream(accesses.size());
    std::vector<Clock> after(accesses.size());
    auto join = [](Clock &into, const Clock &from) {
      for (int t = 0; t < 3; ++t)
        into[t] = std::max(into[t], from[t]);
    };
    for (auto [number, access] : llvm::enumerate(accesses)) {
      int s = access.stream;
      for (int t = 0; t < 3; ++t) {
        if (t == s)
          continue;
        int latest = -1;
        for (size_t earlier = 0; earlier < number; ++earlier) {
          const Access &other = accesses[earlier];
          if (other.stream != t || indexInStream[earlier] < clock[s][t])
            continue;
          if (anyOverlap(other.writes, access.reads) ||
              anyOverlap(other.writes, access.writes) ||
              anyOverlap(other.reads, access.writes))
            latest = earlier;
        }
        if (access.filledBy >= 0 && accesses[access.filledBy].stream == t)
          latest = std::max(latest, access.filledBy);
        if (latest < 0)
          continue;
        if (t == LETHE_RT_STREAM_COMPUTE) {
          plan.waits[number].push_back({access.stream, -1});
          plan.usesComputeEvent = true;
          join(clock[s], clock[t]);
        } else {
          plan.waits[number].push_back({access.stream, latest});
          plan.recordAfter[latest] = true;
          join(clock[s], after[latest]);
        }
      }
      indexInStream[number] = clock[s][s]++;
      after[number] = clock[s];
    }
    return plan;
  }
};

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

int64_t getRank(Value value) {
  return cast<RankedTensorType>(value.getType()).getRank();
}

/// Builds @lethe_program_step from a function laid out in the arena.
class StepLowering {
public:
  StepLowering(ModuleOp module, func::FuncOp function)
      : module(module), function(function), builder(module.getContext()),
        loc(function.getLoc()) {
    MLIRContext *context = module.getContext();
    ptrType = LLVM::LLVMPointerType::get(context);
    i8Type = IntegerType::get(context, 8);
    i32Type = IntegerType::get(context, 32);
    i64Type = IntegerType::get(context, 64);
    f64Type = Float64Type::get(context);
    descriptorType = LLVM::LLVMStructType::getLiteral(
        context, {ptrType, i32Type, i32Type, ptrType});
    resizeOptionsType = LLVM::LLVMStructType::getLiteral(
        context,
        {i32Type, i32Type, i32Type, f64Type, i32Type, ptrType, f64Type});
  }

  /// Emits the step; fails with an error at the function or an op.
  LogicalResult run();

  int64_t numCalls = 0, numWaits = 0;

private:
  LogicalResult readLayout();
  LogicalResult lowerOp(Operation &op);

  /// Whether `op` is a view (reshape, flatten, squeeze, unsqueeze) that the
  /// arena laid out in its input's bytes, so that it runs nothing.
  bool isAliasedView(Operation &op) const {
    if (!isView(&op))
      return false;
    auto input = arenaOffsets.find(op.getOperand(0));
    auto output = arenaOffsets.find(op.getResult(0));
    return input != arenaOffsets.end() && output != arenaOffsets.end() &&
           input->second == output->second;
  }

  // Constants and globals.
  Value i32(int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, i32Type,
                                    builder.getI32IntegerAttr(value));
  }
  Value i64(int64_t value) {
    return LLVM::ConstantOp::create(builder, loc, i64Type,
                                    builder.getI64IntegerAttr(value));
  }
  Value f64(double value) {
    return LLVM::ConstantOp::create(builder, loc, f64Type,
                                    builder.getF64FloatAttr(value));
  }
  Value null() { return LLVM::ZeroOp::create(builder, loc, ptrType); }
  Value global(StringRef prefix, Type type, Attribute value,
               uint64_t alignment);
  Value i64Array(ArrayRef<int64_t> values);
  Value f64Array(ArrayRef<double> values);
  Value bytes(StringRef data);
  Value arenaPointer(int64_t offset);

  /// A descriptor of `type` at `offset` in the arena, in the op's next
  /// descriptor slot. Kernels only ever see arena memory, which a GPU backend
  /// keeps on the device: host bytes reach it through lethe_rt_copy_to_arena.
  FailureOr<Value> descriptor(Operation &op, RankedTensorType type,
                              int64_t offset);
  FailureOr<Value> in(Operation &op, unsigned index) {
    Value operand = op.getOperand(index);
    return descriptor(op, cast<RankedTensorType>(operand.getType()),
                      arenaOffsets.lookup(operand));
  }
  FailureOr<Value> out(Operation &op, unsigned index = 0) {
    Value result = op.getResult(index);
    return descriptor(op, cast<RankedTensorType>(result.getType()),
                      arenaOffsets.lookup(result));
  }
  /// The op's workspace block as lethe_rt.h describes it (a rank-1 u8 byte
  /// buffer of its workspace bytes), or NULL for an op without one.
  FailureOr<Value> workspace(Operation &op);
  /// An array holding the descriptor pointers `descriptors`.
  Value pointerArray(ArrayRef<Value> descriptors);

  /// Calls runtime function `name` (declared on first use with the types of
  /// `arguments`, returning a status) and returns 1 from the step on a
  /// non-zero status.
  void call(StringRef name, ArrayRef<Value> arguments);
  void checkStatus(Value status);
  LLVM::LLVMFuncOp declare(StringRef name, Type result,
                           ArrayRef<Type> arguments);
  Value event(int slot);

  ModuleOp module;
  func::FuncOp function;
  OpBuilder builder;
  Location loc;
  Type ptrType, i8Type, i32Type, i64Type, f64Type;
  LLVM::LLVMStructType descriptorType, resizeOptionsType;

  LLVM::LLVMFuncOp step;
  Block *errorBlock = nullptr;
  Value context, arenaBase, descriptorSlots, eventSlots;
  unsigned nextDescriptor = 0;

  llvm::DenseMap<Value, int64_t> arenaOffsets, hostOffsets;
  /// Each op with workspace: its block's offset and its workspace bytes.
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> workspaceBlocks;
  std::map<std::string, LLVM::GlobalOp> globalsByKey;
  unsigned numGlobals = 0;
};

LogicalResult StepLowering::readLayout() {
  auto fail = [&](const Twine &what) {
    return emitError(function.getLoc(), kPassName)
           << ": @" << function.getName() << " has no arena layout (" << what
           << "): run --lethe-assign-arena first";
  };
  auto arena = function->getAttrOfType<DictionaryAttr>("lethe.arena");
  if (!arena)
    return fail("no lethe.arena attribute");
  auto arenaSize = arena.getAs<IntegerAttr>("size");
  auto hostSize = arena.getAs<IntegerAttr>("host_size");
  if (!arenaSize || !hostSize || arenaSize.getInt() < 0 ||
      hostSize.getInt() < 0)
    return fail("lethe.arena has no size and host_size in bytes");
  // Every block must lie in its memory: the step addresses the bytes it is
  // given without checking them.
  auto outside = [&](Operation *at, const Twine &what, int64_t offset,
                     std::optional<int64_t> bytes, int64_t limit,
                     StringRef memory) -> bool {
    if (bytes && offset >= 0 && *bytes <= limit && offset <= limit - *bytes)
      return false;
    emitError(at ? at->getLoc() : function.getLoc(), kPassName)
        << ": " << what << " of " << (bytes ? *bytes : -1)
        << " bytes at offset " << offset << " is outside the " << memory
        << " of " << limit << " bytes; lay @" << function.getName()
        << " out again with --lethe-assign-arena";
    return true;
  };
  int64_t arenaBytes = arenaSize.getInt(), hostBytes = hostSize.getInt();
  Block &block = function.getBody().front();
  for (BlockArgument argument : block.getArguments()) {
    auto offset = function.getArgAttrOfType<IntegerAttr>(
        argument.getArgNumber(), "lethe.offset");
    if (!offset)
      return fail("argument " + Twine(argument.getArgNumber()) +
                  " has no lethe.offset");
    if (outside(nullptr, "argument " + Twine(argument.getArgNumber()),
                offset.getInt(), getSizeInBytes(argument.getType()), arenaBytes,
                "arena"))
      return failure();
    arenaOffsets[argument] = offset.getInt();
  }
  for (Operation &op : block.without_terminator()) {
    if (auto offload = dyn_cast<OffloadOp>(op)) {
      auto offset = op.getAttrOfType<IntegerAttr>("lethe.host_offset");
      if (!offset)
        return fail("an offload has no lethe.host_offset");
      if (outside(&op, "the host copy", offset.getInt(),
                  getSizeInBytes(offload.getInput().getType()), hostBytes,
                  "host pool"))
        return failure();
      hostOffsets[offload.getOutput()] = offset.getInt();
      continue;
    }
    if (int64_t bytes = getPlannedWorkspaceBytes(&op); bytes > 0) {
      auto offset = op.getAttrOfType<IntegerAttr>(kWorkspaceOffsetAttr);
      if (!offset)
        return fail(op.getName().getStringRef() + " has no " +
                    kWorkspaceOffsetAttr + " for its workspace");
      if (outside(&op, "the workspace", offset.getInt(), bytes, arenaBytes,
                  "arena"))
        return failure();
      workspaceBlocks[&op] = {offset.getInt(), bytes};
    }
    if (op.getNumResults() == 0)
      continue;
    auto offsets = op.getAttrOfType<DenseI64ArrayAttr>("lethe.offsets");
    if (!offsets || offsets.size() != static_cast<int64_t>(op.getNumResults()))
      return fail(op.getName().getStringRef() +
                  " has no lethe.offsets for each result");
    for (auto [index, result, offset] :
         llvm::enumerate(op.getResults(), offsets.asArrayRef())) {
      if (outside(&op, "result " + Twine(index), offset,
                  getSizeInBytes(result.getType()), arenaBytes, "arena"))
        return failure();
      arenaOffsets[result] = offset;
    }
  }
  return success();
}

Value StepLowering::global(StringRef prefix, Type type, Attribute value,
                           uint64_t alignment) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << prefix << type << value;
  LLVM::GlobalOp &op = globalsByKey[key];
  if (!op) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(step);
    op = LLVM::GlobalOp::create(
        builder, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
        ("__lethe_" + prefix + "_" + Twine(numGlobals++)).str(), value,
        alignment);
  }
  return LLVM::AddressOfOp::create(builder, loc, op);
}

Value StepLowering::i64Array(ArrayRef<int64_t> values) {
  // The interpreter passes the data of possibly empty vectors: never NULL.
  SmallVector<int64_t> data(values);
  if (data.empty())
    data.push_back(0);
  auto type =
      RankedTensorType::get({static_cast<int64_t>(data.size())}, i64Type);
  return global("i64", LLVM::LLVMArrayType::get(i64Type, data.size()),
                DenseElementsAttr::get(type, ArrayRef<int64_t>(data)), 8);
}

Value StepLowering::f64Array(ArrayRef<double> values) {
  SmallVector<double> data(values);
  if (data.empty())
    data.push_back(0);
  auto type =
      RankedTensorType::get({static_cast<int64_t>(data.size())}, f64Type);
  return global("f64", LLVM::LLVMArrayType::get(f64Type, data.size()),
                DenseElementsAttr::get(type, ArrayRef<double>(data)), 8);
}

Value StepLowering::bytes(StringRef data) {
  std::string content = data.str();
  if (content.empty())
    content.push_back(0);
  return global("bytes", LLVM::LLVMArrayType::get(i8Type, content.size()),
                builder.getStringAttr(content), 64);
}

Value StepLowering::arenaPointer(int64_t offset) {
  return LLVM::GEPOp::create(builder, loc, ptrType, i8Type, arenaBase,
                             ArrayRef<LLVM::GEPArg>{i64(offset)});
}

FailureOr<Value> StepLowering::workspace(Operation &op) {
  auto block = workspaceBlocks.find(&op);
  if (block == workspaceBlocks.end())
    return null();
  auto [offset, bytes] = block->second;
  auto type = RankedTensorType::get(
      {bytes}, IntegerType::get(op.getContext(), 8, IntegerType::Unsigned));
  return descriptor(op, type, offset);
}

FailureOr<Value> StepLowering::descriptor(Operation &op, RankedTensorType type,
                                          int64_t offset) {
  FailureOr<lethe_rt_dtype> dtype = getRuntimeDtype(type.getElementType());
  if (failed(dtype) || !type.hasStaticShape())
    return op.emitError(kPassName)
           << ": cannot lower " << op.getName() << " to runtime calls: " << type
           << " has no runtime descriptor";
  Value shape = type.getRank() == 0 ? null() : i64Array(type.getShape());
  Value value = LLVM::UndefOp::create(builder, loc, descriptorType);
  value = LLVM::InsertValueOp::create(builder, loc, value, arenaPointer(offset),
                                      ArrayRef<int64_t>{0});
  value = LLVM::InsertValueOp::create(builder, loc, value, i32(*dtype),
                                      ArrayRef<int64_t>{1});
  value = LLVM::InsertValueOp::create(builder, loc, value, i32(type.getRank()),
                                      ArrayRef<int64_t>{2});
  value = LLVM::InsertValueOp::create(builder, loc, value, shape,
                                      ArrayRef<int64_t>{3});
  Value slot = LLVM::GEPOp::create(
      builder, loc, ptrType, descriptorType, descriptorSlots,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(nextDescriptor++)});
  LLVM::StoreOp::create(builder, loc, value, slot);
  return slot;
}

Value StepLowering::pointerArray(ArrayRef<Value> descriptors) {
  Value array;
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&step.getBody().front());
    array = LLVM::AllocaOp::create(
        builder, loc, ptrType, ptrType,
        LLVM::ConstantOp::create(builder, loc, i64Type,
                                 builder.getI64IntegerAttr(descriptors.size())),
        8);
  }
  for (auto [index, pointer] : llvm::enumerate(descriptors)) {
    Value element = LLVM::GEPOp::create(
        builder, loc, ptrType, ptrType, array,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(index)});
    LLVM::StoreOp::create(builder, loc, pointer, element);
  }
  return array;
}

LLVM::LLVMFuncOp StepLowering::declare(StringRef name, Type result,
                                       ArrayRef<Type> arguments) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(
      builder, loc, name, LLVM::LLVMFunctionType::get(result, arguments));
}

void StepLowering::checkStatus(Value status) {
  Value failed = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::ne,
                                      status, i32(0));
  Block *next = builder.createBlock(&step.getBody());
  builder.setInsertionPointToEnd(failed.getParentBlock());
  LLVM::CondBrOp::create(builder, loc, failed, errorBlock, next);
  builder.setInsertionPointToStart(next);
}

void StepLowering::call(StringRef name, ArrayRef<Value> arguments) {
  SmallVector<Type> types;
  for (Value argument : arguments)
    types.push_back(argument.getType());
  LLVM::LLVMFuncOp callee = declare(name, i32Type, types);
  Value status =
      LLVM::CallOp::create(builder, loc, callee, arguments).getResult();
  checkStatus(status);
}

Value StepLowering::event(int slot) {
  Value pointer =
      LLVM::GEPOp::create(builder, loc, ptrType, ptrType, eventSlots,
                          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
  return LLVM::LoadOp::create(builder, loc, ptrType, pointer);
}

LogicalResult StepLowering::run() {
  if (failed(readLayout()))
    return failure();
  Block &body = function.getBody().front();

  // The ops that run, their memory accesses and the waits they need.
  SmallVector<Operation *> ops;
  SmallVector<Access> accesses;
  auto arenaRange = [&](Value value) {
    int64_t begin = arenaOffsets.lookup(value);
    return ByteRange{0, begin,
                     begin + getSizeInBytes(value.getType()).value_or(0)};
  };
  unsigned maxDescriptors = 1;
  llvm::DenseMap<Value, int> offloadNumbers;
  for (Operation &op : body.without_terminator()) {
    if (isa<ReleaseOp>(op))
      continue;
    Access access;
    if (auto offload = dyn_cast<OffloadOp>(op)) {
      access.stream = LETHE_RT_STREAM_DEVICE_TO_HOST;
      ByteRange source = arenaRange(offload.getInput());
      int64_t host = hostOffsets.lookup(offload.getOutput());
      access.reads.push_back(source);
      access.writes.push_back({1, host, host + source.end - source.begin});
      offloadNumbers[offload.getOutput()] = ops.size();
    } else if (auto prefetch = dyn_cast<PrefetchOp>(op)) {
      access.stream = LETHE_RT_STREAM_HOST_TO_DEVICE;
      ByteRange destination = arenaRange(prefetch.getOutput());
      int64_t host = hostOffsets.lookup(prefetch.getInput());
      access.reads.push_back(
          {1, host, host + destination.end - destination.begin});
      access.writes.push_back(destination);
      auto filler = offloadNumbers.find(prefetch.getInput());
      if (filler != offloadNumbers.end())
        access.filledBy = filler->second;
    } else if (isAliasedView(op)) {
      // Runs nothing: its readers read the input's bytes, ordered after
      // their writer.
      access.stream = LETHE_RT_STREAM_COMPUTE;
    } else {
      access.stream = LETHE_RT_STREAM_COMPUTE;
      for (Value operand : op.getOperands()) {
        if (!arenaOffsets.count(operand))
          return op.emitError(kPassName)
                 << ": cannot lower " << op.getName()
                 << " to runtime calls yet: an operand is not in the arena";
        access.reads.push_back(arenaRange(operand));
      }
      for (Value result : op.getResults())
        access.writes.push_back(arenaRange(result));
      // The workspace is written too: a copy that reads or writes its bytes
      // (a block it reuses) must be ordered with the op.
      auto block = workspaceBlocks.find(&op);
      if (block != workspaceBlocks.end())
        access.writes.push_back({0, block->second.first,
                                 block->second.first + block->second.second});
    }
    maxDescriptors =
        std::max(maxDescriptors, op.getNumOperands() + op.getNumResults() + 1 +
                                     workspaceBlocks.count(&op));
    ops.push_back(&op);
    accesses.push_back(std::move(access));
  }
  SyncPlan sync = SyncPlan::build(accesses);
  // Event slots: 0 for the compute stream's event (when used), then one per
  // copy that some op waits for.
  SmallVector<int> eventSlot(ops.size(), -1);
  int numEvents = sync.usesComputeEvent ? 1 : 0;
  for (size_t index = 0; index < ops.size(); ++index)
    if (sync.recordAfter[index])
      eventSlot[index] = numEvents++;

  // The function, its entry and its error exit.
  builder.setInsertionPoint(function);
  step =
      LLVM::LLVMFuncOp::create(builder, loc, "lethe_program_step",
                               LLVM::LLVMFunctionType::get(i32Type, {ptrType}));
  Block *entry = step.addEntryBlock(builder);
  context = entry->getArgument(0);
  errorBlock = builder.createBlock(&step.getBody());
  LLVM::ReturnOp::create(builder, loc, i32(1));
  builder.setInsertionPointToStart(entry);
  descriptorSlots = LLVM::AllocaOp::create(
      builder, loc, ptrType, descriptorType, i64(maxDescriptors), 8);
  if (numEvents > 0)
    eventSlots = LLVM::AllocaOp::create(builder, loc, ptrType, ptrType,
                                        i64(numEvents), 8);
  {
    LLVM::LLVMFuncOp base = declare("lethe_rt_arena_base", ptrType, {ptrType});
    arenaBase = LLVM::CallOp::create(builder, loc, base, ValueRange{context})
                    .getResult();
    Value isNull = LLVM::ICmpOp::create(builder, loc, LLVM::ICmpPredicate::eq,
                                        arenaBase, null());
    Block *next = builder.createBlock(&step.getBody());
    builder.setInsertionPointToEnd(entry);
    LLVM::CondBrOp::create(builder, loc, isNull, errorBlock, next);
    builder.setInsertionPointToStart(next);
  }
  for (int slot = 0; slot < numEvents; ++slot) {
    Value pointer =
        LLVM::GEPOp::create(builder, loc, ptrType, ptrType, eventSlots,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
    call("lethe_rt_event_create", {context, pointer});
  }

  for (auto [index, op] : llvm::enumerate(ops)) {
    loc = op->getLoc();
    nextDescriptor = 0;
    call("lethe_rt_op_begin", {context, i32(index)});
    for (const Wait &wait : sync.waits[index]) {
      Value waitedEvent;
      if (wait.copy < 0) {
        waitedEvent = event(0);
        call("lethe_rt_event_record",
             {context, waitedEvent, i32(LETHE_RT_STREAM_COMPUTE)});
      } else {
        waitedEvent = event(eventSlot[wait.copy]);
      }
      call("lethe_rt_stream_wait_event",
           {context, i32(wait.stream), waitedEvent});
      ++numWaits;
    }
    if (failed(lowerOp(*op)))
      return failure();
    if (sync.recordAfter[index])
      call("lethe_rt_event_record",
           {context, event(eventSlot[index]), i32(accesses[index].stream)});
  }
  loc = function.getLoc();
  call("lethe_rt_synchronize", {context});
  for (int slot = 0; slot < numEvents; ++slot)
    call("lethe_rt_event_destroy", {context, event(slot)});
  LLVM::ReturnOp::create(builder, loc, i32(0));
  function.erase();
  return success();
}

LogicalResult StepLowering::lowerOp(Operation &op) {
  // Descriptors, or the first failure.
  bool ok = true;
  auto get = [&](FailureOr<Value> value) -> Value {
    if (failed(value)) {
      ok = false;
      return null();
    }
    return *value;
  };
  auto inD = [&](unsigned index) { return get(in(op, index)); };
  auto outD = [&](unsigned index = 0) { return get(out(op, index)); };
  auto optionalIn = [&](unsigned index) {
    return op.getNumOperands() > index ? inD(index) : null();
  };
  auto workspaceD = [&]() { return get(workspace(op)); };
  auto unary = [&](lethe_rt_unary_kind kind, double alpha = 0,
                   double beta = 0) {
    call("lethe_rt_unary",
         {context, i32(kind), f64(alpha), f64(beta), inD(0), outD()});
  };
  auto activationGrad = [&](lethe_rt_activation_grad_kind kind,
                            double alpha = 0) {
    call("lethe_rt_activation_grad",
         {context, i32(kind), f64(alpha), inD(0), inD(1), outD()});
  };
  auto binary = [&](lethe_rt_binary_kind kind) {
    call("lethe_rt_binary", {context, i32(kind), inD(0), inD(1), outD()});
  };
  auto copy = [&]() { call("lethe_rt_copy", {context, inD(0), outD()}); };
  auto resizeOptions = [&](auto resize) {
    lethe_rt_resize_options resolved = getResizeOptions(resize);
    std::optional<ArrayRef<double>> roi = resize.getRoi();
    Value value = LLVM::UndefOp::create(builder, loc, resizeOptionsType);
    Value fields[] = {i32(resolved.mode),
                      i32(resolved.coordinates),
                      i32(resolved.nearest),
                      f64(resolved.cubic_coeff_a),
                      i32(resolved.exclude_outside),
                      roi ? f64Array(*roi) : null(),
                      f64(resolved.extrapolation_value)};
    for (auto [position, field] : llvm::enumerate(fields))
      value = LLVM::InsertValueOp::create(
          builder, loc, value, field,
          ArrayRef<int64_t>{static_cast<int64_t>(position)});
    Value options;
    {
      OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointToStart(&step.getBody().front());
      options = LLVM::AllocaOp::create(builder, loc, ptrType, resizeOptionsType,
                                       i64(1), 8);
    }
    LLVM::StoreOp::create(builder, loc, value, options);
    return options;
  };

  LogicalResult result =
      llvm::TypeSwitch<Operation *, LogicalResult>(&op)
          // Elementwise.
          .Case([&](NegOp) { return unary(LETHE_RT_NEG), success(); })
          .Case([&](ReluOp) { return unary(LETHE_RT_RELU), success(); })
          .Case([&](LeakyReluOp leaky) {
            unary(LETHE_RT_LEAKY_RELU, leaky.getAlpha().convertToDouble());
            return success();
          })
          .Case([&](SigmoidOp) { return unary(LETHE_RT_SIGMOID), success(); })
          .Case([&](TanhOp) { return unary(LETHE_RT_TANH), success(); })
          .Case([&](GeluOp gelu) {
            unary(gelu.getApproximate() == "tanh" ? LETHE_RT_GELU_TANH
                                                  : LETHE_RT_GELU);
            return success();
          })
          .Case([&](ReluGradOp) {
            return activationGrad(LETHE_RT_RELU_GRAD), success();
          })
          .Case([&](LeakyReluGradOp grad) {
            activationGrad(LETHE_RT_LEAKY_RELU_GRAD,
                           grad.getAlpha().convertToDouble());
            return success();
          })
          .Case([&](GeluGradOp grad) {
            activationGrad(grad.getApproximate() == "tanh"
                               ? LETHE_RT_GELU_TANH_GRAD
                               : LETHE_RT_GELU_GRAD);
            return success();
          })
          .Case([&](ClipGradOp grad) {
            auto bound = [](FloatAttr attr, double absent) {
              return attr ? attr.getValueAsDouble() : absent;
            };
            call("lethe_rt_clip_grad",
                 {context, inD(0), inD(1),
                  f64(bound(grad.getMinAttr(), -INFINITY)),
                  f64(bound(grad.getMaxAttr(), INFINITY)), outD()});
            return success();
          })
          .Case([&](ErfOp) { return unary(LETHE_RT_ERF), success(); })
          .Case([&](ExpOp) { return unary(LETHE_RT_EXP), success(); })
          .Case([&](LogOp) { return unary(LETHE_RT_LOG), success(); })
          .Case([&](SqrtOp) { return unary(LETHE_RT_SQRT), success(); })
          .Case([&](ClipOp clip) -> LogicalResult {
            Type element = clip.getType().getElementType();
            Value pointers[2] = {null(), null()};
            Attribute given[] = {clip.getMinAttr(), clip.getMaxAttr()};
            for (auto [k, bound] : llvm::enumerate(given)) {
              if (!bound)
                continue;
              FailureOr<HostTensor> scalar = scalarOfType(bound, element);
              if (failed(scalar))
                return op.emitError(kPassName)
                       << ": cannot represent the bound " << bound << " as "
                       << element;
              pointers[k] =
                  bytes(StringRef(scalar->data(), scalar->getSizeInBytes()));
            }
            call("lethe_rt_clip",
                 {context, inD(0), pointers[0], pointers[1], outD()});
            return success();
          })
          .Case([&](AddOp) { return binary(LETHE_RT_ADD), success(); })
          .Case([&](SubOp) { return binary(LETHE_RT_SUB), success(); })
          .Case([&](MulOp) { return binary(LETHE_RT_MUL), success(); })
          .Case([&](DivOp) { return binary(LETHE_RT_DIV), success(); })
          .Case([&](PowOp) { return binary(LETHE_RT_POW), success(); })
          .Case([&](WhereOp) {
            call("lethe_rt_where", {context, inD(0), inD(1), inD(2), outD()});
            return success();
          })
          .Case([&](CastOp) {
            call("lethe_rt_cast", {context, inD(0), outD()});
            return success();
          })
          // Matrix products.
          .Case([&](MatMulOp) {
            call("lethe_rt_matmul", {context, inD(0), inD(1), outD()});
            return success();
          })
          .Case([&](GemmOp gemm) {
            call("lethe_rt_gemm",
                 {context, inD(0), inD(1), optionalIn(2),
                  f64(gemm.getAlpha().convertToDouble()),
                  f64(gemm.getBeta().convertToDouble()), i32(gemm.getTransA()),
                  i32(gemm.getTransB()), outD()});
            return success();
          })
          // Convolution and pooling.
          .Case([&](ConvOp conv) {
            call("lethe_rt_conv",
                 {context, inD(0), inD(1), optionalIn(2),
                  i64Array(conv.getStrides()), i64Array(conv.getPads()),
                  i64Array(conv.getDilations()),
                  i64(static_cast<int64_t>(conv.getGroup())), outD(),
                  workspaceD()});
            return success();
          })
          .Case([&](ConvTransposeOp conv) {
            call("lethe_rt_conv_transpose",
                 {context, inD(0), inD(1), optionalIn(2),
                  i64Array(conv.getStrides()), i64Array(conv.getPads()),
                  i64Array(conv.getDilations()),
                  i64Array(conv.getOutputPadding()),
                  i64(static_cast<int64_t>(conv.getGroup())), outD(),
                  workspaceD()});
            return success();
          })
          .Case([&](ConvGradWeightOp grad) {
            call("lethe_rt_conv_grad_weight",
                 {context, inD(0), inD(1), i64Array(grad.getStrides()),
                  i64Array(grad.getPads()), i64Array(grad.getDilations()),
                  i64(static_cast<int64_t>(grad.getGroup())), outD(),
                  workspaceD()});
            return success();
          })
          .Case([&](MaxPoolOp pool) {
            call("lethe_rt_max_pool",
                 {context, inD(0), i64Array(pool.getKernelShape()),
                  i64Array(pool.getStrides()), i64Array(pool.getPads()),
                  i64Array(pool.getDilations()), i64(0), outD(), null()});
            return success();
          })
          .Case([&](MaxPoolWithIndicesOp pool) {
            call("lethe_rt_max_pool",
                 {context, inD(0), i64Array(pool.getKernelShape()),
                  i64Array(pool.getStrides()), i64Array(pool.getPads()),
                  i64Array(pool.getDilations()),
                  i64(static_cast<int64_t>(pool.getStorageOrder())), outD(0),
                  outD(1)});
            return success();
          })
          .Case([&](AvgPoolOp pool) {
            call("lethe_rt_avg_pool",
                 {context, inD(0), i64Array(pool.getKernelShape()),
                  i64Array(pool.getStrides()), i64Array(pool.getPads()),
                  i32(pool.getCountIncludePad()), outD()});
            return success();
          })
          .Case([&](MaxPoolGradOp grad) {
            call("lethe_rt_max_pool_grad",
                 {context, inD(0), inD(1), i64Array(grad.getKernelShape()),
                  i64Array(grad.getStrides()), i64Array(grad.getPads()),
                  i64Array(grad.getDilations()), outD()});
            return success();
          })
          .Case([&](AvgPoolGradOp grad) {
            call("lethe_rt_avg_pool_grad",
                 {context, inD(0), i64Array(grad.getKernelShape()),
                  i64Array(grad.getStrides()), i64Array(grad.getPads()),
                  i32(grad.getCountIncludePad()), outD()});
            return success();
          })
          .Case([&](GlobalAvgPoolOp) {
            call("lethe_rt_global_avg_pool", {context, inD(0), outD()});
            return success();
          })
          // Normalization, softmax, dropout.
          .Case([&](BatchNormOp norm) {
            call("lethe_rt_batch_norm",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4),
                  f64(norm.getEpsilon().convertToDouble()), outD()});
            return success();
          })
          .Case([&](BatchNormTrainOp norm) {
            call("lethe_rt_batch_norm_train",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4),
                  f64(norm.getEpsilon().convertToDouble()),
                  f64(norm.getMomentum().convertToDouble()), outD(0), outD(1),
                  outD(2), outD(3), outD(4)});
            return success();
          })
          .Case([&](LayerNormOp norm) {
            int64_t axis =
                normalizeAxis(norm.getAxis(), getRank(op.getOperand(0)));
            call("lethe_rt_layer_norm",
                 {context, inD(0), inD(1), optionalIn(2), i64(axis),
                  f64(norm.getEpsilon().convertToDouble()), outD(0), outD(1),
                  outD(2)});
            return success();
          })
          .Case([&](BatchNormGradOp) {
            call("lethe_rt_batch_norm_grad",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4), outD(0),
                  outD(1), outD(2)});
            return success();
          })
          .Case([&](LayerNormGradOp grad) {
            int64_t axis =
                normalizeAxis(grad.getAxis(), getRank(op.getOperand(1)));
            call("lethe_rt_layer_norm_grad",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4), i64(axis),
                  outD(0), outD(1), outD(2)});
            return success();
          })
          .Case<SoftmaxGradOp, LogSoftmaxGradOp>([&](auto grad) {
            int64_t axis =
                normalizeAxis(grad.getAxis(), getRank(op.getOperand(0)));
            bool log = isa<LogSoftmaxGradOp>(grad.getOperation());
            call("lethe_rt_softmax_grad",
                 {context, inD(0), inD(1), i64(axis), i32(log), outD()});
            return success();
          })
          .Case<SoftmaxOp, LogSoftmaxOp>([&](auto softmax) {
            int64_t axis =
                normalizeAxis(softmax.getAxis(), getRank(op.getOperand(0)));
            bool log = isa<LogSoftmaxOp>(softmax.getOperation());
            call("lethe_rt_softmax",
                 {context, inD(0), i64(axis), i32(log), outD()});
            return success();
          })
          .Case([&](DropoutOp dropout) {
            // The step counter is a tensor in the arena, read by the kernel
            // where it runs (on a GPU, without a copy to the host).
            call("lethe_rt_dropout",
                 {context, inD(0), f64(dropout.getRatio().convertToDouble()),
                  i64(static_cast<int64_t>(dropout.getSeed())),
                  dropout.getStep() ? inD(1) : null(),
                  i32(dropout.getTraining()), outD(0), outD(1)});
            return success();
          })
          // Reductions.
          .Case<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>([&](auto reduce) {
            lethe_rt_reduce_kind kind = LETHE_RT_REDUCE_SUM;
            if (isa<ReduceMeanOp>(reduce.getOperation()))
              kind = LETHE_RT_REDUCE_MEAN;
            else if (isa<ReduceMaxOp>(reduce.getOperation()))
              kind = LETHE_RT_REDUCE_MAX;
            int64_t rank = getRank(op.getOperand(0));
            SmallVector<int64_t> axes;
            for (int64_t axis : reduce.getAxes())
              axes.push_back(normalizeAxis(axis, rank));
            call("lethe_rt_reduce",
                 {context, i32(kind), inD(0), i64Array(axes),
                  i64(static_cast<int64_t>(axes.size())), outD()});
            return success();
          })
          // Optimizer updates.
          .Case([&](SgdUpdateOp update) {
            call("lethe_rt_sgd_update",
                 {context, inD(0), inD(1), inD(2),
                  f64(update.getNormCoefficient().convertToDouble()), outD()});
            return success();
          })
          .Case([&](MomentumUpdateOp update) {
            call("lethe_rt_momentum_update",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4),
                  f64(update.getAlpha().convertToDouble()),
                  f64(update.getBeta().convertToDouble()),
                  f64(update.getNormCoefficient().convertToDouble()),
                  i32(update.getMode() == "nesterov"), outD(0), outD(1)});
            return success();
          })
          .Case([&](AdagradUpdateOp update) {
            call("lethe_rt_adagrad_update",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4),
                  f64(update.getDecayFactor().convertToDouble()),
                  f64(update.getEpsilon().convertToDouble()),
                  f64(update.getNormCoefficient().convertToDouble()), outD(0),
                  outD(1)});
            return success();
          })
          .Case([&](AdamUpdateOp update) {
            call("lethe_rt_adam_update",
                 {context, inD(0), inD(1), inD(2), inD(3), inD(4), inD(5),
                  f64(update.getAlpha().convertToDouble()),
                  f64(update.getBeta().convertToDouble()),
                  f64(update.getEpsilon().convertToDouble()),
                  f64(update.getNormCoefficient().convertToDouble()),
                  f64(update.getNormCoefficientPost().convertToDouble()),
                  f64(update.getWeightDecay().convertToDouble()), outD(0),
                  outD(1), outD(2)});
            return success();
          })
          // Losses.
          .Case([&](ReduceMaxGradOp grad) {
            SmallVector<int64_t> axes = grad.getReducedDims();
            call("lethe_rt_reduce_max_grad",
                 {context, inD(0), inD(1), inD(2), i64Array(axes),
                  i64(static_cast<int64_t>(axes.size())), outD()});
            return success();
          })
          .Case([&](SoftmaxCrossEntropyOp loss) {
            std::optional<int64_t> ignore = loss.getIgnoreIndex();
            call("lethe_rt_softmax_cross_entropy",
                 {context, inD(0), inD(1), optionalIn(2),
                  i32(getReduction(loss.getReduction())),
                  i32(ignore.has_value()), i64(ignore.value_or(0)), outD(0),
                  outD(1)});
            return success();
          })
          .Case([&](NllOp loss) {
            std::optional<int64_t> ignore = loss.getIgnoreIndex();
            call("lethe_rt_nll",
                 {context, inD(0), inD(1), optionalIn(2),
                  i32(getReduction(loss.getReduction())),
                  i32(ignore.has_value()), i64(ignore.value_or(0)), outD()});
            return success();
          })
          .Case([&](SoftmaxCrossEntropyGradOp grad) {
            std::optional<int64_t> ignore = grad.getIgnoreIndex();
            call("lethe_rt_softmax_cross_entropy_grad",
                 {context, inD(0), inD(1), inD(2), optionalIn(3),
                  i32(getReduction(grad.getReduction())),
                  i32(ignore.has_value()), i64(ignore.value_or(0)), outD()});
            return success();
          })
          .Case([&](NllGradOp grad) {
            std::optional<int64_t> ignore = grad.getIgnoreIndex();
            call("lethe_rt_nll_grad",
                 {context, inD(0), inD(1), optionalIn(2),
                  i32(getReduction(grad.getReduction())),
                  i32(ignore.has_value()), i64(ignore.value_or(0)), outD()});
            return success();
          })
          .Case([&](MseOp loss) {
            call("lethe_rt_mse",
                 {context, inD(0), inD(1),
                  i32(getReduction(loss.getReduction())), outD()});
            return success();
          })
          // Constants: the bytes of a constant global (the interpreter makes
          // the value from the attribute; the bytes are the same), copied into
          // the arena by the runtime (a host global is no kernel operand).
          .Case([&](ConstantOp constant) -> LogicalResult {
            FailureOr<HostTensor> value =
                tensorFromAttribute(constant.getValue());
            if (failed(value))
              return op.emitError(kPassName)
                     << ": cannot read the constant's value";
            StringRef data(value->data(), value->getSizeInBytes());
            call("lethe_rt_copy_to_arena",
                 {context, i64(arenaOffsets.lookup(constant.getResult())),
                  bytes(data), i64(static_cast<int64_t>(data.size()))});
            return success();
          })
          // Copies between the arena and the host pool.
          .Case([&](OffloadOp offload) {
            int64_t bytes = *getSizeInBytes(offload.getInput().getType());
            call("lethe_rt_offload_async",
                 {context, i64(hostOffsets.lookup(offload.getOutput())),
                  i64(arenaOffsets.lookup(offload.getInput())), i64(bytes)});
            return success();
          })
          .Case([&](PrefetchOp prefetch) {
            int64_t bytes = *getSizeInBytes(prefetch.getOutput().getType());
            call("lethe_rt_prefetch_async",
                 {context, i64(arenaOffsets.lookup(prefetch.getOutput())),
                  i64(hostOffsets.lookup(prefetch.getInput())), i64(bytes)});
            return success();
          })
          // A view the arena laid out in its input's bytes copies nothing.
          .Case<ReshapeOp, FlattenOp, SqueezeOp, UnsqueezeOp>([&](auto) {
            if (!isAliasedView(op))
              copy();
            return success();
          })
          .Case([&](TransposeOp transpose) {
            call("lethe_rt_transpose",
                 {context, inD(0), i64Array(transpose.getPerm()), outD()});
            return success();
          })
          .Case([&](ConcatOp concat) {
            SmallVector<Value> inputs;
            for (unsigned index = 0; index < op.getNumOperands(); ++index)
              inputs.push_back(inD(index));
            int64_t axis =
                normalizeAxis(concat.getAxis(), getRank(op.getResult(0)));
            Value array = pointerArray(inputs);
            call("lethe_rt_concat",
                 {context, array, i64(static_cast<int64_t>(inputs.size())),
                  i64(axis), outD()});
            return success();
          })
          .Case([&](SplitOp split) {
            SmallVector<Value> outputs;
            for (unsigned index = 0; index < op.getNumResults(); ++index)
              outputs.push_back(outD(index));
            int64_t axis =
                normalizeAxis(split.getAxis(), getRank(op.getOperand(0)));
            Value array = pointerArray(outputs);
            call("lethe_rt_split", {context, inD(0), i64(axis), array,
                                    i64(static_cast<int64_t>(outputs.size()))});
            return success();
          })
          .Case([&](SliceOp slice) {
            SmallVector<int64_t> starts, steps;
            slice.getDimStartsAndSteps(starts, steps);
            call("lethe_rt_slice",
                 {context, inD(0), i64Array(starts), i64Array(steps), outD()});
            return success();
          })
          .Case([&](GatherOp gather) {
            int64_t axis =
                normalizeAxis(gather.getAxis(), getRank(op.getOperand(0)));
            call("lethe_rt_gather",
                 {context, inD(0), inD(1), i64(axis), outD()});
            return success();
          })
          .Case([&](SliceGradOp grad) {
            SmallVector<int64_t> starts, steps;
            grad.getDimStartsAndSteps(starts, steps);
            call("lethe_rt_slice_grad",
                 {context, inD(0), i64Array(starts), i64Array(steps), outD()});
            return success();
          })
          .Case([&](GatherGradOp grad) {
            int64_t axis =
                normalizeAxis(grad.getAxis(), getRank(op.getResult(0)));
            call("lethe_rt_gather_grad",
                 {context, inD(0), inD(1), i64(axis), outD()});
            return success();
          })
          .Case([&](ExpandOp) {
            call("lethe_rt_expand", {context, inD(0), outD()});
            return success();
          })
          .Case<ResizeOp, ResizeGradOp>([&](auto resize) {
            Value options = resizeOptions(resize);
            StringRef name = isa<ResizeOp>(resize.getOperation())
                                 ? "lethe_rt_resize"
                                 : "lethe_rt_resize_grad";
            call(name, {context, inD(0), f64Array(resize.getScales()), options,
                        outD()});
            return success();
          })
          .Default([&](Operation *other) {
            return other->emitError(kPassName)
                   << ": cannot lower " << other->getName()
                   << " to runtime calls yet";
          });
  if (failed(result) || !ok)
    return failure();
  ++numCalls;
  return success();
}

struct ConvertLetheToRuntimePass
    : public mlir::lethe::impl::ConvertLetheToRuntimePassBase<
          ConvertLetheToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp step;
    if (!function.empty()) {
      step = module.lookupSymbol<func::FuncOp>(function);
      if (!step || step.isExternal()) {
        emitError(module.getLoc(), kPassName)
            << ": no function @" << function << " with a body to lower";
        return signalPassFailure();
      }
    } else {
      SmallVector<func::FuncOp> candidates;
      for (auto candidate : module.getOps<func::FuncOp>())
        if (!candidate.isExternal())
          candidates.push_back(candidate);
      if (candidates.size() != 1) {
        emitError(module.getLoc(), kPassName)
            << ": expected one function with a body, found "
            << candidates.size() << " (name it with function=...)";
        return signalPassFailure();
      }
      step = candidates.front();
    }
    if (!step.getBody().hasOneBlock()) {
      step.emitError(kPassName)
          << ": @" << step.getName() << " has several blocks";
      return signalPassFailure();
    }
    if (module.lookupSymbol("lethe_program_step")) {
      step.emitError(kPassName)
          << ": the module already defines @lethe_program_step";
      return signalPassFailure();
    }
    StepLowering lowering(module, step);
    if (failed(lowering.run()))
      return signalPassFailure();
    numRuntimeCalls += lowering.numCalls;
    numEventWaits += lowering.numWaits;
  }
};

} // namespace
