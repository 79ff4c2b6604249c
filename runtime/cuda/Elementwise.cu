//===- Elementwise.cu - Elementwise kernels of the CUDA backend -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_copy, lethe_rt_cast, lethe_rt_unary, lethe_rt_clip, lethe_rt_binary
// (ONNX multidirectional broadcasting) and lethe_rt_where on the compute
// stream, with the CPU backend's semantics (runtime/cpu/Elementwise.cpp):
// float math in the compute type (f32 for f16 and bf16) rounded once on
// store, integers wrapping (two's complement), Cast truncating and
// saturating, Pow taking an exponent of any numeric dtype. Built without FMA
// contraction, so +, -, *, / and sqrt give the CPU backend's bits; exp, log,
// tanh, erf and pow are CUDA's (within a few ulps of the CPU's libm).
//
// One thread per output element (grid-stride): elementwise work is bound by
// memory bandwidth, and a broadcast operand is read through its strides
// rather than materialized.
//
//===----------------------------------------------------------------------===//

#include "DeviceElements.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace lethe::rt;

namespace {

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// out[i] = op(in[i]) in the compute type of T.
template <typename T, typename Op>
__global__ void unaryKernel(const void *in, void *out, int64_t count, Op op) {
  LETHE_GRID_STRIDE_LOOP(i, count) { store<T>(out, i, op(load<T>(in, i))); }
}

/// out = op(lhs, rhs) over the broadcast, for storage types L (lhs and out)
/// and R (rhs): loads in the compute types, stores op's result as L.
template <typename L, typename R, typename Op>
__global__ void binaryKernel(const void *lhs, const void *rhs, void *out,
                             int64_t count, BroadcastMap<2> map, Op op) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    int64_t offsets[2];
    map.offsetsAt(i, offsets);
    store<L>(out, i, op(load<L>(lhs, offsets[0]), load<R>(rhs, offsets[1])));
  }
}

/// out[i] = condition[i] ? lhs : rhs over the broadcast, copying elements as
/// words of their size.
template <typename Word>
__global__ void whereKernel(const uint8_t *condition, const Word *lhs,
                            const Word *rhs, Word *out, int64_t count,
                            BroadcastMap<3> map) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    int64_t offsets[3];
    map.offsetsAt(i, offsets);
    out[i] = condition[offsets[0]] ? lhs[offsets[1]] : rhs[offsets[2]];
  }
}

/// Sets *first to the smallest index of a zero element of `data` (storage
/// type T); *first starts at UINT64_MAX (none).
template <typename T>
__global__ void firstZeroKernel(const void *data, int64_t count,
                                unsigned long long *first) {
  LETHE_GRID_STRIDE_LOOP(i, count) {
    if (load<T>(data, i) == 0)
      atomicMin(first, static_cast<unsigned long long>(i));
  }
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// Launches unary `kind` with compute type C = ComputeType<T>; false (with
/// an error) for an unknown kind or a failed launch.
template <typename T>
bool runUnary(lethe_rt_context *context, lethe_rt_unary_kind kind, double alpha,
              const void *in, void *out, int64_t count) {
  using C = ComputeType<T>;
  const char *call = "lethe_rt_unary";
  auto launch = [&](auto op) {
    return launchElementwise(context, call, "unaryKernel", count,
                             unaryKernel<T, decltype(op)>, in, out, count, op);
  };
  switch (kind) {
  case LETHE_RT_NEG:
    return launch([] __device__(C x) { return -x; });
  case LETHE_RT_RELU:
    // NaN stays NaN (it is not < 0).
    return launch([] __device__(C x) { return x < 0 ? C(0) : x; });
  case LETHE_RT_LEAKY_RELU: {
    C slope = static_cast<C>(alpha);
    return launch([=] __device__(C x) { return x < 0 ? slope * x : x; });
  }
  case LETHE_RT_SIGMOID:
    // exp of a non-positive argument only, so neither branch overflows.
    return launch([] __device__(C x) {
      if (x >= 0)
        return C(1) / (C(1) + mathExp(-x));
      C e = mathExp(x);
      return e / (C(1) + e);
    });
  case LETHE_RT_TANH:
    return launch([] __device__(C x) { return mathTanh(x); });
  case LETHE_RT_GELU:
    return launch([] __device__(C x) {
      const C invSqrt2 = static_cast<C>(0.70710678118654752440);
      return C(0.5) * x * (C(1) + mathErf(x * invSqrt2));
    });
  case LETHE_RT_GELU_TANH:
    return launch([] __device__(C x) {
      const C sqrt2OverPi = static_cast<C>(0.79788456080286535588);
      const C cubic = static_cast<C>(0.044715);
      return C(0.5) * x *
             (C(1) + mathTanh(sqrt2OverPi * (x + cubic * x * x * x)));
    });
  case LETHE_RT_ERF:
    return launch([] __device__(C x) { return mathErf(x); });
  case LETHE_RT_EXP:
    return launch([] __device__(C x) { return mathExp(x); });
  case LETHE_RT_LOG:
    return launch([] __device__(C x) { return mathLog(x); });
  case LETHE_RT_SQRT:
    return launch([] __device__(C x) { return mathSqrt(x); });
  }
  fail(context, call, "unknown unary kind %d", static_cast<int>(kind));
  return false;
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

/// Max then min, as ONNX: with low > high every value becomes high; NaN
/// stays NaN (it compares false). An absent bound is the type's infinity or
/// extreme. The bounds come by value in storage type T.
template <typename T>
__global__ void clipKernel(const void *in, void *out, int64_t count, T low,
                           T high, bool hasLow, bool hasHigh) {
  using C = ComputeType<T>;
  using Limits = std::numeric_limits<C>;
  C lowValue =
      hasLow ? load<T>(&low, 0)
             : (Limits::has_infinity ? -Limits::infinity() : Limits::lowest());
  C highValue =
      hasHigh ? load<T>(&high, 0)
              : (Limits::has_infinity ? Limits::infinity() : Limits::max());
  LETHE_GRID_STRIDE_LOOP(i, count) {
    C x = load<T>(in, i);
    C raised = x < lowValue ? lowValue : x;
    store<T>(out, i, raised > highValue ? highValue : raised);
  }
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

/// Wrapping integer arithmetic (through the unsigned type, where overflow is
/// defined) and truncating division; division by zero is excluded by the
/// caller, and (signed) INT_MIN / -1 wraps to INT_MIN.
template <typename I, lethe_rt_binary_kind Kind> struct IntegerOp {
  __device__ I operator()(I a, I b) const {
    using U = std::make_unsigned_t<I>;
    if constexpr (Kind == LETHE_RT_ADD)
      return static_cast<I>(U(a) + U(b));
    else if constexpr (Kind == LETHE_RT_SUB)
      return static_cast<I>(U(a) - U(b));
    else if constexpr (Kind == LETHE_RT_MUL)
      return static_cast<I>(U(a) * U(b));
    else {
      if constexpr (std::is_signed_v<I>)
        if (b == -1)
          return static_cast<I>(U(0) - U(a));
      return static_cast<I>(a / b);
    }
  }
};

/// Pow with integer base type I and exponent storage type E: wrapping like
/// repeated multiplication for an integer exponent (a negative one gives the
/// power truncated toward zero: 0 unless the base is 1 or -1), the f64 power
/// truncated into I for a float exponent.
template <typename I, typename E> struct IntegerPow {
  __device__ I operator()(I base, ComputeType<E> exponent) const {
    if constexpr (!std::is_integral_v<E>) {
      return truncateToInteger<I>(
          pow(static_cast<double>(base), static_cast<double>(exponent)));
    } else {
      if constexpr (std::is_signed_v<E>) {
        if (exponent < 0) {
          if (base == 1)
            return 1;
          if constexpr (std::is_signed_v<I>)
            if (base == -1)
              return exponent % 2 ? base : I(1);
          return 0;
        }
      }
      using U = std::make_unsigned_t<I>;
      U result = 1, factor = static_cast<U>(base);
      for (uint64_t bits = static_cast<uint64_t>(exponent); bits; bits >>= 1) {
        if (bits & 1)
          result = static_cast<U>(result * factor);
        factor = static_cast<U>(factor * factor);
      }
      return static_cast<I>(result);
    }
  }
};

/// Float base of storage type T, exponent of storage type E (any numeric
/// dtype), converted to T's compute type.
template <typename T, typename E> struct FloatPow {
  __device__ ComputeType<T> operator()(ComputeType<T> a,
                                       ComputeType<E> b) const {
    return mathPow(a, static_cast<ComputeType<T>>(b));
  }
};

/// Launches binaryKernel<L, R> with `op`.
template <typename L, typename R, typename Op>
bool launchBinary(lethe_rt_context *context, const lethe_rt_tensor &lhs,
                  const lethe_rt_tensor &rhs, const lethe_rt_tensor &out,
                  const BroadcastMap<2> &map, Op op) {
  int64_t count = numElements(out);
  return launchElementwise(context, "lethe_rt_binary", "binaryKernel", count,
                           binaryKernel<L, R, Op>, lhs.data, rhs.data, out.data,
                           count, map, op);
}

/// Binary `kind` on float storage type T (both operands T).
template <typename T>
bool runFloatBinary(lethe_rt_context *context, lethe_rt_binary_kind kind,
                    const lethe_rt_tensor &lhs, const lethe_rt_tensor &rhs,
                    const lethe_rt_tensor &out, const BroadcastMap<2> &map) {
  using C = ComputeType<T>;
  switch (kind) {
  case LETHE_RT_ADD:
    return launchBinary<T, T>(context, lhs, rhs, out, map,
                              [] __device__(C a, C b) { return a + b; });
  case LETHE_RT_SUB:
    return launchBinary<T, T>(context, lhs, rhs, out, map,
                              [] __device__(C a, C b) { return a - b; });
  case LETHE_RT_MUL:
    return launchBinary<T, T>(context, lhs, rhs, out, map,
                              [] __device__(C a, C b) { return a * b; });
  case LETHE_RT_DIV:
    return launchBinary<T, T>(context, lhs, rhs, out, map,
                              [] __device__(C a, C b) { return a / b; });
  case LETHE_RT_POW:
    return launchBinary<T, T>(context, lhs, rhs, out, map, FloatPow<T, T>{});
  }
  return false;
}

/// Binary `kind` (add, sub, mul or div) on integer storage type I.
template <typename I>
bool runIntegerBinary(lethe_rt_context *context, lethe_rt_binary_kind kind,
                      const lethe_rt_tensor &lhs, const lethe_rt_tensor &rhs,
                      const lethe_rt_tensor &out, const BroadcastMap<2> &map) {
  switch (kind) {
  case LETHE_RT_ADD:
    return launchBinary<I, I>(context, lhs, rhs, out, map,
                              IntegerOp<I, LETHE_RT_ADD>{});
  case LETHE_RT_SUB:
    return launchBinary<I, I>(context, lhs, rhs, out, map,
                              IntegerOp<I, LETHE_RT_SUB>{});
  case LETHE_RT_MUL:
    return launchBinary<I, I>(context, lhs, rhs, out, map,
                              IntegerOp<I, LETHE_RT_MUL>{});
  case LETHE_RT_DIV:
    return launchBinary<I, I>(context, lhs, rhs, out, map,
                              IntegerOp<I, LETHE_RT_DIV>{});
  case LETHE_RT_POW:
    return false; // IntegerPow's
  }
  return false;
}

/// Finds the first zero of integer tensor `tensor` on the device: `found` is
/// its index, or -1. Waits for the compute stream: the one elementwise call
/// that synchronizes, as the error depends on the data.
bool firstZero(lethe_rt_context *context, const lethe_rt_tensor &tensor,
               int64_t &found) {
  const char *call = "lethe_rt_binary";
  int64_t count = numElements(tensor);
  return findFirstFlagged(
      context, call,
      [&](unsigned long long *first) {
        bool launched = false;
        dispatchInteger(tensor.dtype, [&](auto tag) {
          launched = launchElementwise(context, call, "firstZeroKernel", count,
                                       firstZeroKernel<decltype(tag)>,
                                       tensor.data, count, first);
        });
        return launched;
      },
      found);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// out[i] = in[i] converted from storage type From to To (ONNX Cast).
template <typename From, typename To>
__global__ void castKernel(const void *in, void *out, int64_t count) {
  LETHE_GRID_STRIDE_LOOP(i, count) { castElement<From, To>(in, out, i); }
}

//===----------------------------------------------------------------------===//
// Argument handling shared by the kernels
//===----------------------------------------------------------------------===//

/// Checks that the `Operands` operands broadcast together to exactly out's
/// shape and builds the map that reads them over it; records an error naming
/// them otherwise.
template <int Operands>
bool broadcastOperands(lethe_rt_context *context, const char *kernel,
                       const char *const (&names)[Operands],
                       const lethe_rt_tensor *const (&operands)[Operands],
                       const lethe_rt_tensor &out,
                       BroadcastMap<Operands> &map) {
  std::vector<std::vector<int64_t>> strides;
  if (!report(context, kernel,
              broadcastOperandsError(
                  std::vector<const char *>(names, names + Operands),
                  std::vector<const lethe_rt_tensor *>(operands,
                                                       operands + Operands),
                  out, strides)))
    return false;
  return makeBroadcastMap(shapeOf(out), strides, map) ||
         failRankLimit(context, kernel, "out", out, "dims that do not merge");
}

/// Copies `bytes` bytes within the arena on the compute stream (memmove for
/// identical ranges, which need nothing; a partial overlap is refused, as
/// cudaMemcpyAsync does not order the bytes of one copy).
bool copyBytes(lethe_rt_context *context, const char *kernel,
               const lethe_rt_tensor &in, const lethe_rt_tensor &out,
               uint64_t bytes) {
  if (bytes == 0 || in.data == out.data)
    return true;
  if (overlaps(in, out)) {
    fail(context, kernel,
         "in and out overlap without being the same memory (the cuda backend "
         "does not copy within overlapping ranges)");
    return false;
  }
  return checkCuda(context, kernel, "cudaMemcpyAsync",
                   cudaMemcpyAsync(out.data, in.data, bytes,
                                   cudaMemcpyDeviceToDevice, context->compute));
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

extern "C" lethe_rt_status lethe_rt_copy(lethe_rt_context *context,
                                         const lethe_rt_tensor *in,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_copy";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkTensor(context, kernel, "in", in) ||
      !checkDtype(context, kernel, "out", out, in->dtype))
    return LETHE_RT_ERROR;
  if (numElements(*in) != numElements(*out))
    return fail(context, kernel,
                "in (%s) and out (%s) have different element counts",
                shapeString(*in).c_str(), shapeString(*out).c_str());
  return copyBytes(context, kernel, *in, *out,
                   numElements(*in) * lethe_rt_dtype_size(in->dtype))
             ? LETHE_RT_OK
             : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_unary(lethe_rt_context *context,
                                          lethe_rt_unary_kind kind,
                                          double alpha, double beta,
                                          const lethe_rt_tensor *in,
                                          const lethe_rt_tensor *out) {
  (void)beta; // no unary kind takes a second parameter yet
  const char *kernel = "lethe_rt_unary";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkFloatTensor(context, kernel, "in", in) ||
      !checkDtype(context, kernel, "out", out, in->dtype) ||
      !checkSameShape(context, kernel, "in", *in, "out", *out))
    return LETHE_RT_ERROR;
  bool launched = false;
  dispatchFloat(in->dtype, [&](auto tag) {
    launched = runUnary<decltype(tag)>(context, kind, alpha, in->data,
                                       out->data, numElements(*in));
  });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_clip(lethe_rt_context *context,
                                         const lethe_rt_tensor *in,
                                         const void *min, const void *max,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_clip";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkTensor(context, kernel, "in", in) ||
      !checkDtype(context, kernel, "out", out, in->dtype) ||
      !checkSameShape(context, kernel, "in", *in, "out", *out))
    return LETHE_RT_ERROR;
  if (in->dtype == LETHE_RT_I1)
    return fail(context, kernel, "in is i1, which has no order to clip in");
  bool launched = true;
  dispatchAny(in->dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, Bool>) {
      // The bounds are the program's constants, in host memory: they travel
      // to the kernel as arguments.
      T low{}, high{};
      if (min)
        std::memcpy(&low, min, sizeof(T));
      if (max)
        std::memcpy(&high, max, sizeof(T));
      int64_t count = numElements(*in);
      launched = launchElementwise(context, kernel, "clipKernel", count,
                                   clipKernel<T>, in->data, out->data, count,
                                   low, high, min != nullptr, max != nullptr);
    }
  });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_binary(lethe_rt_context *context,
                                           lethe_rt_binary_kind kind,
                                           const lethe_rt_tensor *lhs,
                                           const lethe_rt_tensor *rhs,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_binary";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (static_cast<int>(kind) < LETHE_RT_ADD ||
      static_cast<int>(kind) > LETHE_RT_POW)
    return fail(context, kernel, "unknown binary kind %d",
                static_cast<int>(kind));
  if (!checkTensor(context, kernel, "lhs", lhs) ||
      !checkTensor(context, kernel, "rhs", rhs) ||
      !checkDtype(context, kernel, "out", out, lhs->dtype))
    return LETHE_RT_ERROR;
  bool floatLhs = isFloat(lhs->dtype);
  if (lhs->dtype == LETHE_RT_I1)
    return fail(context, kernel, "lhs must be numeric, got i1");
  if (kind == LETHE_RT_POW) {
    // ONNX Pow: the exponent may have any numeric type.
    if (rhs->dtype == LETHE_RT_I1)
      return fail(context, kernel, "pow needs a numeric rhs, got i1");
  } else if (!checkDtype(context, kernel, "rhs", rhs, lhs->dtype)) {
    return LETHE_RT_ERROR;
  }
  BroadcastMap<2> map;
  if (!broadcastOperands<2>(context, kernel, {"lhs", "rhs"}, {lhs, rhs}, *out,
                            map))
    return LETHE_RT_ERROR;
  if (numElements(*out) == 0)
    return LETHE_RT_OK;
  if (!floatLhs && kind == LETHE_RT_DIV) {
    int64_t zero = -1;
    if (!firstZero(context, *rhs, zero))
      return LETHE_RT_ERROR;
    if (zero >= 0)
      return fail(context, kernel,
                  "integer division by zero (rhs element %lld)",
                  static_cast<long long>(zero));
  }

  bool launched = false;
  if (kind == LETHE_RT_POW && !floatLhs) {
    dispatchInteger(lhs->dtype, [&](auto baseTag) {
      using I = decltype(baseTag);
      dispatchAny(rhs->dtype, [&](auto exponentTag) {
        using E = decltype(exponentTag);
        if constexpr (!std::is_same_v<E, Bool>)
          launched = launchBinary<I, E>(context, *lhs, *rhs, *out, map,
                                        IntegerPow<I, E>{});
      });
    });
  } else if (kind == LETHE_RT_POW && rhs->dtype != lhs->dtype) {
    dispatchFloat(lhs->dtype, [&](auto baseTag) {
      using T = decltype(baseTag);
      dispatchAny(rhs->dtype, [&](auto exponentTag) {
        using E = decltype(exponentTag);
        if constexpr (!std::is_same_v<E, Bool>)
          launched = launchBinary<T, E>(context, *lhs, *rhs, *out, map,
                                        FloatPow<T, E>{});
      });
    });
  } else if (floatLhs) {
    dispatchFloat(lhs->dtype, [&](auto tag) {
      launched =
          runFloatBinary<decltype(tag)>(context, kind, *lhs, *rhs, *out, map);
    });
  } else {
    dispatchInteger(lhs->dtype, [&](auto tag) {
      launched =
          runIntegerBinary<decltype(tag)>(context, kind, *lhs, *rhs, *out, map);
    });
  }
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_where(lethe_rt_context *context,
                                          const lethe_rt_tensor *condition,
                                          const lethe_rt_tensor *lhs,
                                          const lethe_rt_tensor *rhs,
                                          const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_where";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkDtype(context, kernel, "condition", condition, LETHE_RT_I1) ||
      !checkTensor(context, kernel, "lhs", lhs) ||
      !checkDtype(context, kernel, "rhs", rhs, lhs->dtype) ||
      !checkDtype(context, kernel, "out", out, lhs->dtype))
    return LETHE_RT_ERROR;
  BroadcastMap<3> map;
  if (!broadcastOperands<3>(context, kernel, {"condition", "lhs", "rhs"},
                            {condition, lhs, rhs}, *out, map))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*out);
  auto launch = [&](auto word) {
    using Word = decltype(word);
    return launchElementwise(context, kernel, "whereKernel", count,
                             whereKernel<Word>,
                             static_cast<const uint8_t *>(condition->data),
                             static_cast<const Word *>(lhs->data),
                             static_cast<const Word *>(rhs->data),
                             static_cast<Word *>(out->data), count, map);
  };
  return launchForWord(lethe_rt_dtype_size(lhs->dtype), launch)
             ? LETHE_RT_OK
             : LETHE_RT_ERROR;
}

extern "C" lethe_rt_status lethe_rt_cast(lethe_rt_context *context,
                                         const lethe_rt_tensor *in,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_cast";
  if (!context || !checkDevice(context, kernel))
    return LETHE_RT_ERROR;
  if (!checkTensor(context, kernel, "in", in) ||
      !checkTensor(context, kernel, "out", out) ||
      !checkSameShape(context, kernel, "in", *in, "out", *out))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*in);
  if (count == 0)
    return LETHE_RT_OK;
  if (in->dtype == out->dtype)
    return copyBytes(context, kernel, *in, *out,
                     count * lethe_rt_dtype_size(in->dtype))
               ? LETHE_RT_OK
               : LETHE_RT_ERROR;
  bool launched = false;
  dispatchAny(in->dtype, [&](auto fromTag) {
    dispatchAny(out->dtype, [&](auto toTag) {
      launched =
          launchElementwise(context, kernel, "castKernel", count,
                            castKernel<decltype(fromTag), decltype(toTag)>,
                            in->data, out->data, count);
    });
  });
  return launched ? LETHE_RT_OK : LETHE_RT_ERROR;
}
