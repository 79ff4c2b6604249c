//===- Context.cpp - Context, errors and element types of the CPU backend -===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <new>

using namespace lethe::rt;

//===----------------------------------------------------------------------===//
// Context and errors
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_context *lethe_rt_context_create(void) {
  return new (std::nothrow) lethe_rt_context();
}

extern "C" void lethe_rt_context_destroy(lethe_rt_context *context) {
  if (!context)
    return;
  // Like cudaStreamDestroy, destruction lets the streams' work finish.
  finishMemory(*context);
  delete context;
}

extern "C" const char *lethe_rt_last_error(const lethe_rt_context *context) {
  return context ? context->lastError.c_str() : "no runtime context";
}

extern "C" lethe_rt_status lethe_rt_set_op_hook(lethe_rt_context *context,
                                                lethe_rt_op_hook hook,
                                                void *user_data) {
  if (!context)
    return LETHE_RT_ERROR;
  context->opHook = hook;
  context->opHookData = user_data;
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_op_begin(lethe_rt_context *context,
                                             int32_t op_index) {
  if (!context)
    return LETHE_RT_ERROR;
  if (context->opHook)
    context->opHook(context->opHookData, op_index);
  return LETHE_RT_OK;
}

lethe_rt_status lethe::rt::fail(lethe_rt_context *context, const char *kernel,
                                const char *format, ...) {
  char message[512];
  va_list arguments;
  va_start(arguments, format);
  std::vsnprintf(message, sizeof(message), format, arguments);
  va_end(arguments);
  if (context)
    context->lastError = std::string(kernel) + ": " + message;
  return LETHE_RT_ERROR;
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

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

bool lethe::rt::checkTensor(lethe_rt_context *context, const char *kernel,
                            const char *what, const lethe_rt_tensor *tensor) {
  if (!tensor) {
    fail(context, kernel, "%s is missing (null descriptor)", what);
    return false;
  }
  if (lethe_rt_dtype_size(tensor->dtype) == 0) {
    fail(context, kernel, "%s has an invalid dtype %d", what,
         static_cast<int>(tensor->dtype));
    return false;
  }
  if (tensor->rank < 0 || (tensor->rank > 0 && !tensor->shape)) {
    fail(context, kernel, "%s has an invalid rank %d or no shape", what,
         tensor->rank);
    return false;
  }
  for (int32_t i = 0; i < tensor->rank; ++i) {
    if (tensor->shape[i] < 0) {
      fail(context, kernel, "%s has a negative dimension %lld", what,
           static_cast<long long>(tensor->shape[i]));
      return false;
    }
  }
  if (!tensor->data && numElements(*tensor) > 0) {
    fail(context, kernel, "%s (%s) has no data", what,
         shapeString(*tensor).c_str());
    return false;
  }
  return true;
}

bool lethe::rt::checkFloatTensor(lethe_rt_context *context, const char *kernel,
                                 const char *what,
                                 const lethe_rt_tensor *tensor) {
  if (!checkTensor(context, kernel, what, tensor))
    return false;
  if (!isFloat(tensor->dtype)) {
    fail(context, kernel, "%s must be f16, bf16, f32 or f64, got %s", what,
         dtypeName(tensor->dtype));
    return false;
  }
  return true;
}

bool lethe::rt::checkDtype(lethe_rt_context *context, const char *kernel,
                           const char *what, const lethe_rt_tensor *tensor,
                           lethe_rt_dtype dtype) {
  if (!checkTensor(context, kernel, what, tensor))
    return false;
  if (tensor->dtype != dtype) {
    fail(context, kernel, "%s must be %s, got %s", what, dtypeName(dtype),
         dtypeName(tensor->dtype));
    return false;
  }
  return true;
}

bool lethe::rt::checkSameShape(lethe_rt_context *context, const char *kernel,
                               const char *whatA, const lethe_rt_tensor &a,
                               const char *whatB, const lethe_rt_tensor &b) {
  bool same = a.rank == b.rank;
  for (int32_t i = 0; same && i < a.rank; ++i)
    same = a.shape[i] == b.shape[i];
  if (!same)
    fail(context, kernel, "%s (%s) and %s (%s) must have the same shape", whatA,
         shapeString(a).c_str(), whatB, shapeString(b).c_str());
  return same;
}

bool lethe::rt::checkRank(lethe_rt_context *context, const char *kernel,
                          const char *what, const lethe_rt_tensor &tensor,
                          int32_t rank) {
  if (tensor.rank == rank)
    return true;
  fail(context, kernel, "%s must have rank %d, got %s", what, rank,
       shapeString(tensor).c_str());
  return false;
}

//===----------------------------------------------------------------------===//
// f16 and bf16
//===----------------------------------------------------------------------===//

float lethe::rt::halfToFloat(Half value) {
  uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000) << 16;
  uint32_t exponent = (value.bits >> 10) & 0x1f;
  uint32_t mantissa = value.bits & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) { // infinity or NaN
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) { // normal
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) { // zero
    bits = sign;
  } else { // subnormal: value = mantissa * 2^-24
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

Half lethe::rt::floatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) { // infinity or NaN (keep NaN quiet)
    uint16_t nan = magnitude > 0x7f800000 ? 0x200 : 0;
    return Half{static_cast<uint16_t>(sign | 0x7c00 | nan)};
  }
  if (magnitude >= 0x477ff000) // rounds to >= 65520: overflow to infinity
    return Half{static_cast<uint16_t>(sign | 0x7c00)};
  if (magnitude < 0x38800000) { // below the smallest normal half: subnormal
    // Scale so that one half-subnormal unit (2^-24) is one integer unit;
    // nearbyint rounds half to even in the default rounding mode.
    float scaled = std::ldexp(std::fabs(value), 24);
    return Half{static_cast<uint16_t>(
        sign | static_cast<uint16_t>(std::nearbyint(scaled)))};
  }
  // Normal: rebias the exponent and round the mantissa to nearest even.
  uint32_t rebased = magnitude - (112u << 23);
  uint32_t roundBit = 1u << 12, lowerMask = (1u << 13) - 1;
  uint32_t result = rebased >> 13;
  uint32_t remainder = rebased & lowerMask;
  if (remainder > roundBit || (remainder == roundBit && (result & 1)))
    ++result;
  return Half{static_cast<uint16_t>(sign | result)};
}

float lethe::rt::bfloat16ToFloat(BFloat16 value) {
  uint32_t bits = static_cast<uint32_t>(value.bits) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

BFloat16 lethe::rt::floatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it quiet
    return BFloat16{static_cast<uint16_t>((bits >> 16) | 0x40)};
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return BFloat16{static_cast<uint16_t>((bits + rounding) >> 16)};
}

//===----------------------------------------------------------------------===//
// Indexing
//===----------------------------------------------------------------------===//

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
