//===- Tensor.cpp - Shapes, names and broadcasting for the backends -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Also the two entry points of the ABI that need no backend: a program links
// one backend, and with it this library.
//
//===----------------------------------------------------------------------===//

#include "common/Tensor.h"

#include <algorithm>

using namespace lethe::rt;

extern "C" size_t lethe_rt_dtype_size(lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F16:
  case LETHE_RT_BF16:
  case LETHE_RT_I16:
  case LETHE_RT_U16:
    return 2;
  case LETHE_RT_F32:
  case LETHE_RT_I32:
  case LETHE_RT_U32:
    return 4;
  case LETHE_RT_F64:
  case LETHE_RT_I64:
  case LETHE_RT_U64:
    return 8;
  case LETHE_RT_I1:
  case LETHE_RT_I8:
  case LETHE_RT_U8:
    return 1;
  }
  return 0;
}

extern "C" int64_t lethe_rt_num_elements(const lethe_rt_tensor *tensor) {
  return tensor ? numElements(*tensor) : 0;
}

const char *lethe::rt::dtypeName(lethe_rt_dtype dtype) {
  switch (dtype) {
  case LETHE_RT_F16:
    return "f16";
  case LETHE_RT_BF16:
    return "bf16";
  case LETHE_RT_F32:
    return "f32";
  case LETHE_RT_F64:
    return "f64";
  case LETHE_RT_I1:
    return "i1";
  case LETHE_RT_I8:
    return "i8";
  case LETHE_RT_I32:
    return "i32";
  case LETHE_RT_I64:
    return "i64";
  case LETHE_RT_I16:
    return "i16";
  case LETHE_RT_U8:
    return "ui8";
  case LETHE_RT_U16:
    return "ui16";
  case LETHE_RT_U32:
    return "ui32";
  case LETHE_RT_U64:
    return "ui64";
  }
  return "<invalid dtype>";
}

std::string lethe::rt::shapeText(const std::vector<int64_t> &shape) {
  lethe_rt_tensor view{nullptr, LETHE_RT_F32,
                       static_cast<int32_t>(shape.size()), shape.data()};
  return shapeString(view);
}

std::string lethe::rt::shapeString(const lethe_rt_tensor &tensor) {
  if (tensor.rank == 0)
    return "scalar";
  std::string text;
  for (int32_t i = 0; i < tensor.rank; ++i) {
    if (i)
      text += 'x';
    text += std::to_string(tensor.shape[i]);
  }
  return text;
}

bool lethe::rt::overlaps(const lethe_rt_tensor &a, const lethe_rt_tensor &b) {
  if (numElements(a) == 0 || numElements(b) == 0)
    return false;
  auto begin = [](const lethe_rt_tensor &t) {
    return reinterpret_cast<uintptr_t>(t.data);
  };
  auto end = [&](const lethe_rt_tensor &t) {
    return begin(t) + numElements(t) * lethe_rt_dtype_size(t.dtype);
  };
  return begin(a) < end(b) && begin(b) < end(a);
}

std::vector<int64_t> lethe::rt::stridesOf(const lethe_rt_tensor &tensor) {
  std::vector<int64_t> strides(tensor.rank);
  int64_t stride = 1;
  for (int32_t i = tensor.rank; i-- > 0;) {
    strides[i] = stride;
    stride *= tensor.shape[i];
  }
  return strides;
}

bool lethe::rt::broadcastStrides(const lethe_rt_tensor &input,
                                 const lethe_rt_tensor &output,
                                 std::vector<int64_t> &strides) {
  if (input.rank > output.rank)
    return false;
  std::vector<int64_t> inputStrides = stridesOf(input);
  strides.assign(output.rank, 0);
  int32_t offset = output.rank - input.rank;
  for (int32_t i = 0; i < input.rank; ++i) {
    int64_t dim = input.shape[i], outDim = output.shape[offset + i];
    if (dim == outDim)
      strides[offset + i] = dim == 1 ? 0 : inputStrides[i];
    else if (dim != 1)
      return false;
  }
  return true;
}

bool lethe::rt::broadcastShape(
    const std::vector<const lethe_rt_tensor *> &operands,
    std::vector<int64_t> &shape) {
  int32_t rank = 0;
  for (const lethe_rt_tensor *operand : operands)
    rank = std::max(rank, operand->rank);
  shape.assign(rank, 1);
  for (const lethe_rt_tensor *operand : operands) {
    for (int32_t i = 0; i < operand->rank; ++i) {
      int64_t dim = operand->shape[i];
      int64_t &result = shape[rank - operand->rank + i];
      if (dim == 1)
        continue;
      if (result != 1 && result != dim)
        return false;
      result = dim;
    }
  }
  return true;
}
