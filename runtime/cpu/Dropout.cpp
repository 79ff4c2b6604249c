//===- Dropout.cpp - Dropout kernel of the CPU backend --------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// lethe_rt_dropout. The mask comes from a counter-based generator, so that
// any backend reproduces it bit for bit from (seed, step, element index)
// alone, in any order and on any number of threads. The exact definition,
// which the CUDA backend must follow:
//
//   Generator: Philox-4x32-10 (Salmon et al., "Parallel random numbers: as
//   easy as 1, 2, 3", SC'11; the Random123 reference). With 32-bit words:
//     key     (k0, k1)         = (seed mod 2^32, seed / 2^32)
//     counter (c0, c1, c2, c3) = (b mod 2^32, b / 2^32,
//                                 step mod 2^32, step / 2^32)
//   for block b = i / 4 of the row-major element index i. One round:
//     (hi0, lo0) = 0xD2511F53 * c0,  (hi1, lo1) = 0xCD9E8D57 * c2
//     (64-bit products split into high and low words),
//     (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),
//   then the key is bumped: k0 += 0x9E3779B9, k1 += 0xBB67AE85 (mod 2^32).
//   Ten rounds give the block's outputs (r0, r1, r2, r3).
//
//   Element i takes r = r[i mod 4] and u = (r >> 8) * 2^-24, a uniform
//   value in [0, 1) exact in f32 and f64. It is kept when u >= ratio
//   (compared in f64), so it is kept with probability 1 - ratio.
//
//   out[i] = kept ? x[i] * s : 0, where s = 1 / (1 - ratio) is computed in
//   f64, rounded to x's compute type (f32 for f16, bf16, f32; f64 for f64),
//   and multiplied in that type; mask[i] = kept.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"

#include <array>

using namespace lethe::rt;

namespace {

/// Philox-4x32-10 of `counter` under `key` (see the file comment).
std::array<uint32_t, 4> philox4x32x10(std::array<uint32_t, 4> counter,
                                      std::array<uint32_t, 2> key) {
  for (int round = 0; round < 10; ++round) {
    uint64_t product0 = uint64_t(0xD2511F53) * counter[0];
    uint64_t product1 = uint64_t(0xCD9E8D57) * counter[2];
    uint32_t hi0 = static_cast<uint32_t>(product0 >> 32);
    uint32_t lo0 = static_cast<uint32_t>(product0);
    uint32_t hi1 = static_cast<uint32_t>(product1 >> 32);
    uint32_t lo1 = static_cast<uint32_t>(product1);
    counter = {hi1 ^ counter[1] ^ key[0], lo1, hi0 ^ counter[3] ^ key[1], lo0};
    key[0] += 0x9E3779B9;
    key[1] += 0xBB67AE85;
  }
  return counter;
}

/// Writes out (and mask, when non-null) for `count` elements of storage type
/// T in training mode.
template <typename T>
void dropoutTraining(const void *x, double ratio, uint64_t seed, uint64_t step,
                     void *out, uint8_t *mask, int64_t count) {
  using C = ComputeType<T>;
  C scale = static_cast<C>(1.0 / (1.0 - ratio));
  std::array<uint32_t, 2> key{static_cast<uint32_t>(seed),
                              static_cast<uint32_t>(seed >> 32)};
  for (int64_t block = 0; block * 4 < count; ++block) {
    uint64_t b = static_cast<uint64_t>(block);
    std::array<uint32_t, 4> random = philox4x32x10(
        {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32),
         static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32)},
        key);
    for (int lane = 0; lane < 4 && block * 4 + lane < count; ++lane) {
      int64_t i = block * 4 + lane;
      double uniform = static_cast<double>(random[lane] >> 8) * 0x1p-24;
      bool kept = uniform >= ratio;
      store<T>(out, i, kept ? load<T>(x, i) * scale : C(0));
      if (mask)
        mask[i] = kept;
    }
  }
}

} // namespace

extern "C" lethe_rt_status
lethe_rt_dropout(lethe_rt_context *context, const lethe_rt_tensor *x,
                 double ratio, uint64_t seed, const lethe_rt_tensor *step,
                 int training, const lethe_rt_tensor *out,
                 const lethe_rt_tensor *mask) {
  const char *kernel = "lethe_rt_dropout";
  if (!checkDropout(context, kernel, x, ratio, step, out, mask))
    return LETHE_RT_ERROR;
  uint64_t stepValue =
      step ? static_cast<uint64_t>(load<int64_t>(step->data, 0)) : 0;
  int64_t count = numElements(*x);
  if (count == 0)
    return LETHE_RT_OK;
  uint8_t *maskData = mask ? static_cast<uint8_t *>(mask->data) : nullptr;
  if (!training) {
    if (out->data != x->data)
      std::memmove(out->data, x->data, count * lethe_rt_dtype_size(x->dtype));
    if (maskData)
      std::memset(maskData, 1, count);
    return LETHE_RT_OK;
  }
  dispatchFloat(x->dtype, [&](auto tag) {
    dropoutTraining<decltype(tag)>(x->data, ratio, seed, stepValue, out->data,
                                   maskData, count);
  });
  return LETHE_RT_OK;
}
