//===- Elementwise.cpp - Elementwise kernels of the CPU backend -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_unary, lethe_rt_binary (ONNX multidirectional broadcasting),
// lethe_rt_where and lethe_rt_cast. Float math is done in the compute type
// (f32 for f16 and bf16) with one rounding on store; integer add, sub, mul and
// pow wrap around (two's complement) instead of overflowing. Pow takes an
// exponent of any numeric dtype (ONNX Pow's T1); with an integer base and a
// float exponent it truncates the f64 power into the base's type.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace lethe::rt;

namespace {

//===----------------------------------------------------------------------===//
// Broadcast iteration
//===----------------------------------------------------------------------===//

/// out = op(lhs, rhs) over the broadcast, for storage types L (lhs and out)
/// and R (rhs): loads in the compute types, stores op's result as L.
template <typename L, typename R, typename Op>
void binaryLoop(const lethe_rt_tensor &lhs, const lethe_rt_tensor &rhs,
                const lethe_rt_tensor &out,
                const std::vector<std::vector<int64_t>> &strides, Op op) {
  const void *a = lhs.data, *b = rhs.data;
  void *result = out.data;
  forEachRun(shapeOf(out), strides,
             [&](int64_t base, const int64_t *offsets, const int64_t *inner,
                 int64_t count) {
               int64_t ia = offsets[0], ib = offsets[1];
               if (inner[0] == 1 && inner[1] == 1) {
                 for (int64_t i = 0; i < count; ++i)
                   store<L>(result, base + i,
                            op(load<L>(a, ia + i), load<R>(b, ib + i)));
               } else if (inner[0] == 1 && inner[1] == 0) {
                 auto bValue = load<R>(b, ib);
                 for (int64_t i = 0; i < count; ++i)
                   store<L>(result, base + i, op(load<L>(a, ia + i), bValue));
               } else if (inner[0] == 0 && inner[1] == 1) {
                 auto aValue = load<L>(a, ia);
                 for (int64_t i = 0; i < count; ++i)
                   store<L>(result, base + i, op(aValue, load<R>(b, ib + i)));
               } else {
                 for (int64_t i = 0; i < count; ++i)
                   store<L>(result, base + i,
                            op(load<L>(a, ia + i * inner[0]),
                               load<R>(b, ib + i * inner[1])));
               }
             });
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// out[i] = op(in[i]) in the compute type of T.
template <typename T, typename Op>
void unaryLoop(const void *in, void *out, int64_t count, Op op) {
  for (int64_t i = 0; i < count; ++i)
    store<T>(out, i, op(load<T>(in, i)));
}

/// Applies unary `kind` with compute type C = ComputeType<T>; false for an
/// unknown kind.
template <typename T>
bool runUnary(lethe_rt_unary_kind kind, double alpha, double beta,
              const void *in, void *out, int64_t count) {
  using C = ComputeType<T>;
  const C half = C(0.5), one = C(1);
  switch (kind) {
  case LETHE_RT_NEG:
    unaryLoop<T>(in, out, count, [](C x) { return -x; });
    return true;
  case LETHE_RT_RELU:
    // NaN stays NaN (it is not < 0).
    unaryLoop<T>(in, out, count, [](C x) { return x < 0 ? C(0) : x; });
    return true;
  case LETHE_RT_LEAKY_RELU: {
    C slope = static_cast<C>(alpha);
    unaryLoop<T>(in, out, count, [=](C x) { return x < 0 ? slope * x : x; });
    return true;
  }
  case LETHE_RT_SIGMOID:
    // exp of a non-positive argument only, so neither branch overflows.
    unaryLoop<T>(in, out, count, [=](C x) {
      if (x >= 0)
        return one / (one + std::exp(-x));
      C e = std::exp(x);
      return e / (one + e);
    });
    return true;
  case LETHE_RT_TANH:
    unaryLoop<T>(in, out, count, [](C x) { return std::tanh(x); });
    return true;
  case LETHE_RT_GELU: {
    const C invSqrt2 = static_cast<C>(0.70710678118654752440);
    unaryLoop<T>(in, out, count, [=](C x) {
      return half * x * (one + std::erf(x * invSqrt2));
    });
    return true;
  }
  case LETHE_RT_GELU_TANH: {
    const C sqrt2OverPi = static_cast<C>(0.79788456080286535588);
    const C cubic = static_cast<C>(0.044715);
    unaryLoop<T>(in, out, count, [=](C x) {
      return half * x *
             (one + std::tanh(sqrt2OverPi * (x + cubic * x * x * x)));
    });
    return true;
  }
  case LETHE_RT_ERF:
    unaryLoop<T>(in, out, count, [](C x) { return std::erf(x); });
    return true;
  case LETHE_RT_EXP:
    unaryLoop<T>(in, out, count, [](C x) { return std::exp(x); });
    return true;
  case LETHE_RT_LOG:
    unaryLoop<T>(in, out, count, [](C x) { return std::log(x); });
    return true;
  case LETHE_RT_SQRT:
    unaryLoop<T>(in, out, count, [](C x) { return std::sqrt(x); });
    return true;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

/// Wrapping integer arithmetic (through the unsigned type, where overflow is
/// defined) and truncating division; division by zero is excluded by the
/// caller, and (signed) INT_MIN / -1 wraps to INT_MIN.
template <typename I> struct IntegerOps {
  using U = std::make_unsigned_t<I>;
  static I add(I a, I b) { return static_cast<I>(U(a) + U(b)); }
  static I sub(I a, I b) { return static_cast<I>(U(a) - U(b)); }
  static I mul(I a, I b) { return static_cast<I>(U(a) * U(b)); }
  static I div(I a, I b) {
    if constexpr (std::is_signed_v<I>)
      if (b == -1)
        return static_cast<I>(U(0) - U(a));
    return static_cast<I>(a / b);
  }
};

/// Binary `kind` on float storage type T (both operands T).
template <typename T>
void runFloatBinary(lethe_rt_binary_kind kind, const lethe_rt_tensor &lhs,
                    const lethe_rt_tensor &rhs, const lethe_rt_tensor &out,
                    const std::vector<std::vector<int64_t>> &strides) {
  using C = ComputeType<T>;
  switch (kind) {
  case LETHE_RT_ADD:
    return binaryLoop<T, T>(lhs, rhs, out, strides,
                            [](C a, C b) { return a + b; });
  case LETHE_RT_SUB:
    return binaryLoop<T, T>(lhs, rhs, out, strides,
                            [](C a, C b) { return a - b; });
  case LETHE_RT_MUL:
    return binaryLoop<T, T>(lhs, rhs, out, strides,
                            [](C a, C b) { return a * b; });
  case LETHE_RT_DIV:
    return binaryLoop<T, T>(lhs, rhs, out, strides,
                            [](C a, C b) { return a / b; });
  case LETHE_RT_POW:
    return binaryLoop<T, T>(lhs, rhs, out, strides,
                            [](C a, C b) { return std::pow(a, b); });
  }
}

/// Binary `kind` (add, sub, mul or div) on integer storage type I.
template <typename I>
void runIntegerBinary(lethe_rt_binary_kind kind, const lethe_rt_tensor &lhs,
                      const lethe_rt_tensor &rhs, const lethe_rt_tensor &out,
                      const std::vector<std::vector<int64_t>> &strides) {
  using Ops = IntegerOps<I>;
  switch (kind) {
  case LETHE_RT_ADD:
    return binaryLoop<I, I>(lhs, rhs, out, strides, Ops::add);
  case LETHE_RT_SUB:
    return binaryLoop<I, I>(lhs, rhs, out, strides, Ops::sub);
  case LETHE_RT_MUL:
    return binaryLoop<I, I>(lhs, rhs, out, strides, Ops::mul);
  case LETHE_RT_DIV:
    return binaryLoop<I, I>(lhs, rhs, out, strides, Ops::div);
  case LETHE_RT_POW:
    return; // runIntegerPow's
  }
}

/// base^exponent for integers, wrapping like repeated multiplication; a
/// negative exponent gives the power truncated toward zero (0 unless the
/// base is 1 or -1, and 0 for a zero base).
template <typename I, typename E> I integerPower(I base, E exponent) {
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

/// Pow with integer base type I and exponent storage type E.
template <typename I, typename E>
void runIntegerPow(const lethe_rt_tensor &lhs, const lethe_rt_tensor &rhs,
                   const lethe_rt_tensor &out,
                   const std::vector<std::vector<int64_t>> &strides) {
  binaryLoop<I, E>(lhs, rhs, out, strides, [](I base, auto exponent) {
    if constexpr (std::is_integral_v<decltype(exponent)>)
      return integerPower(base, exponent);
    else
      return truncateToInteger<I>(
          std::pow(static_cast<double>(base), static_cast<double>(exponent)));
  });
}

/// The index of the first zero element of integer tensor `tensor`, or -1.
int64_t firstZero(const lethe_rt_tensor &tensor) {
  int64_t found = -1;
  dispatchAny(tensor.dtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t count = numElements(tensor);
    for (int64_t i = 0; i < count && found < 0; ++i)
      if (load<T>(tensor.data, i) == 0)
        found = i;
  });
  return found;
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

/// out[i] = in[i] converted from storage type From to To (ONNX Cast).
template <typename From, typename To>
void castLoop(const void *in, void *out, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    castElement<From, To>(in, out, i);
}

/// out[i] = condition[i] ? lhs : rhs over the broadcast, copying elements as
/// words of their size.
template <typename Word>
void whereLoop(const lethe_rt_tensor &condition, const lethe_rt_tensor &lhs,
               const lethe_rt_tensor &rhs, const lethe_rt_tensor &out,
               const std::vector<std::vector<int64_t>> &strides) {
  const uint8_t *flags = static_cast<const uint8_t *>(condition.data);
  const Word *a = static_cast<const Word *>(lhs.data);
  const Word *b = static_cast<const Word *>(rhs.data);
  Word *result = static_cast<Word *>(out.data);
  forEachRun(shapeOf(out), strides,
             [&](int64_t base, const int64_t *offsets, const int64_t *inner,
                 int64_t count) {
               const uint8_t *flag = flags + offsets[0];
               const Word *x = a + offsets[1], *y = b + offsets[2];
               Word *z = result + base;
               if (inner[0] == 1 && inner[1] == 1 && inner[2] == 1) {
                 for (int64_t i = 0; i < count; ++i)
                   z[i] = flag[i] ? x[i] : y[i];
               } else {
                 for (int64_t i = 0; i < count; ++i)
                   z[i] =
                       flag[i * inner[0]] ? x[i * inner[1]] : y[i * inner[2]];
               }
             });
}

/// Checks that `operands` broadcast together to exactly out's shape and
/// computes their strides over it; records an error naming them otherwise.
bool broadcastOperands(lethe_rt_context *context, const char *kernel,
                       const std::vector<const char *> &names,
                       const std::vector<const lethe_rt_tensor *> &operands,
                       const lethe_rt_tensor &out,
                       std::vector<std::vector<int64_t>> &strides) {
  return report(context, kernel,
                broadcastOperandsError(names, operands, out, strides));
}

} // namespace

extern "C" lethe_rt_status lethe_rt_unary(lethe_rt_context *context,
                                          lethe_rt_unary_kind kind,
                                          double alpha, double beta,
                                          const lethe_rt_tensor *in,
                                          const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_unary";
  if (!checkFloatTensor(context, kernel, "in", in) ||
      !checkDtype(context, kernel, "out", out, in->dtype) ||
      !checkSameShape(context, kernel, "in", *in, "out", *out))
    return LETHE_RT_ERROR;
  bool known = true;
  dispatchFloat(in->dtype, [&](auto tag) {
    known = runUnary<decltype(tag)>(kind, alpha, beta, in->data, out->data,
                                    numElements(*in));
  });
  if (!known)
    return fail(context, kernel, "unknown unary kind %d",
                static_cast<int>(kind));
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_clip(lethe_rt_context *context,
                                         const lethe_rt_tensor *in,
                                         const void *min, const void *max,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_clip";
  if (!checkTensor(context, kernel, "in", in) ||
      !checkDtype(context, kernel, "out", out, in->dtype) ||
      !checkSameShape(context, kernel, "in", *in, "out", *out))
    return LETHE_RT_ERROR;
  if (in->dtype == LETHE_RT_I1)
    return fail(context, kernel, "in is i1, which has no order to clip in");
  dispatchAny(in->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    if constexpr (!std::is_same_v<T, Bool>) {
      // Max then min, as ONNX: with min > max every value becomes max; NaN
      // stays NaN (it compares false).
      using Limits = std::numeric_limits<C>;
      C low =
          min ? load<T>(min, 0)
              : (Limits::has_infinity ? -Limits::infinity() : Limits::lowest());
      C high =
          max ? load<T>(max, 0)
              : (Limits::has_infinity ? Limits::infinity() : Limits::max());
      unaryLoop<T>(in->data, out->data, numElements(*in), [=](C x) {
        C raised = x < low ? low : x;
        return raised > high ? high : raised;
      });
    }
  });
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_binary(lethe_rt_context *context,
                                           lethe_rt_binary_kind kind,
                                           const lethe_rt_tensor *lhs,
                                           const lethe_rt_tensor *rhs,
                                           const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_binary";
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
  std::vector<std::vector<int64_t>> strides;
  if (!broadcastOperands(context, kernel, {"lhs", "rhs"}, {lhs, rhs}, *out,
                         strides))
    return LETHE_RT_ERROR;
  if (numElements(*out) == 0)
    return LETHE_RT_OK;
  if (!floatLhs && kind == LETHE_RT_DIV) {
    int64_t zero = firstZero(*rhs);
    if (zero >= 0)
      return fail(context, kernel,
                  "integer division by zero (rhs element %lld)",
                  static_cast<long long>(zero));
  }

  if (kind == LETHE_RT_POW && !floatLhs) {
    dispatchAny(lhs->dtype, [&](auto baseTag) {
      using I = decltype(baseTag);
      if constexpr (std::is_integral_v<I>) {
        dispatchAny(rhs->dtype, [&](auto exponentTag) {
          runIntegerPow<I, decltype(exponentTag)>(*lhs, *rhs, *out, strides);
        });
      }
    });
  } else if (kind == LETHE_RT_POW && rhs->dtype != lhs->dtype) {
    dispatchFloat(lhs->dtype, [&](auto baseTag) {
      using T = decltype(baseTag);
      using C = ComputeType<T>;
      dispatchAny(rhs->dtype, [&](auto exponentTag) {
        using E = decltype(exponentTag);
        binaryLoop<T, E>(*lhs, *rhs, *out, strides, [](C a, auto b) {
          return std::pow(a, static_cast<C>(b));
        });
      });
    });
  } else if (floatLhs) {
    dispatchFloat(lhs->dtype, [&](auto tag) {
      runFloatBinary<decltype(tag)>(kind, *lhs, *rhs, *out, strides);
    });
  } else {
    dispatchAny(lhs->dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T>)
        runIntegerBinary<T>(kind, *lhs, *rhs, *out, strides);
    });
  }
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_where(lethe_rt_context *context,
                                          const lethe_rt_tensor *condition,
                                          const lethe_rt_tensor *lhs,
                                          const lethe_rt_tensor *rhs,
                                          const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_where";
  if (!checkDtype(context, kernel, "condition", condition, LETHE_RT_I1) ||
      !checkTensor(context, kernel, "lhs", lhs) ||
      !checkDtype(context, kernel, "rhs", rhs, lhs->dtype) ||
      !checkDtype(context, kernel, "out", out, lhs->dtype))
    return LETHE_RT_ERROR;
  std::vector<std::vector<int64_t>> strides;
  if (!broadcastOperands(context, kernel, {"condition", "lhs", "rhs"},
                         {condition, lhs, rhs}, *out, strides))
    return LETHE_RT_ERROR;
  if (numElements(*out) == 0)
    return LETHE_RT_OK;
  switch (lethe_rt_dtype_size(lhs->dtype)) {
  case 1:
    whereLoop<uint8_t>(*condition, *lhs, *rhs, *out, strides);
    break;
  case 2:
    whereLoop<uint16_t>(*condition, *lhs, *rhs, *out, strides);
    break;
  case 4:
    whereLoop<uint32_t>(*condition, *lhs, *rhs, *out, strides);
    break;
  default:
    whereLoop<uint64_t>(*condition, *lhs, *rhs, *out, strides);
    break;
  }
  return LETHE_RT_OK;
}

extern "C" lethe_rt_status lethe_rt_cast(lethe_rt_context *context,
                                         const lethe_rt_tensor *in,
                                         const lethe_rt_tensor *out) {
  const char *kernel = "lethe_rt_cast";
  if (!checkTensor(context, kernel, "in", in) ||
      !checkTensor(context, kernel, "out", out) ||
      !checkSameShape(context, kernel, "in", *in, "out", *out))
    return LETHE_RT_ERROR;
  int64_t count = numElements(*in);
  if (count == 0)
    return LETHE_RT_OK;
  if (in->dtype == out->dtype) {
    if (in->data != out->data)
      std::memmove(out->data, in->data, count * lethe_rt_dtype_size(in->dtype));
    return LETHE_RT_OK;
  }
  dispatchAny(in->dtype, [&](auto fromTag) {
    dispatchAny(out->dtype, [&](auto toTag) {
      castLoop<decltype(fromTag), decltype(toTag)>(in->data, out->data, count);
    });
  });
  return LETHE_RT_OK;
}
