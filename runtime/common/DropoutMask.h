//===- DropoutMask.h - The dropout generator of every backend ---*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Which elements lethe_rt_dropout keeps, and what it writes, defined once for
// every backend (header only, LETHE_HOST_DEVICE for g++ and nvcc alike): the
// compiled step, the interpreter and a GPU run must drop the same elements,
// and recompute must drop them again. The mask comes from a counter-based
// generator, so that it follows from (seed, step, element index) alone, in
// any order and on any number of threads:
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
// Every step is integer arithmetic or one correctly rounded f64 or
// compute-type operation, so host and device give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_RUNTIME_COMMON_DROPOUTMASK_H
#define LETHE_RUNTIME_COMMON_DROPOUTMASK_H

#include "common/ElementTypes.h"

#include <cstdint>

namespace lethe::rt {

/// The four random words of one block of four elements.
struct DropoutWords {
  uint32_t words[4];
};

/// Philox-4x32-10 of the counter (c0, c1, c2, c3) under the key (k0, k1).
LETHE_HOST_DEVICE inline DropoutWords philox4x32x10(uint32_t c0, uint32_t c1,
                                                    uint32_t c2, uint32_t c3,
                                                    uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t product0 = uint64_t(0xD2511F53) * c0;
    uint64_t product1 = uint64_t(0xCD9E8D57) * c2;
    uint32_t hi0 = static_cast<uint32_t>(product0 >> 32);
    uint32_t lo0 = static_cast<uint32_t>(product0);
    uint32_t hi1 = static_cast<uint32_t>(product1 >> 32);
    uint32_t lo1 = static_cast<uint32_t>(product1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return DropoutWords{{c0, c1, c2, c3}};
}

/// The random words of block `block` (elements 4 block to 4 block + 3) of a
/// dropout keyed by `seed` and `step`.
LETHE_HOST_DEVICE inline DropoutWords dropoutWords(uint64_t seed, uint64_t step,
                                                   uint64_t block) {
  return philox4x32x10(
      static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32),
      static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32),
      static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

/// Whether an element whose random word is `word` is kept at `ratio`.
LETHE_HOST_DEVICE inline bool dropoutKeeps(uint32_t word, double ratio) {
  return static_cast<double>(word >> 8) * 0x1p-24 >= ratio;
}

/// The factor 1 / (1 - ratio) of the kept elements, computed in f64 and
/// rounded to the compute type of storage type T.
template <typename T>
LETHE_HOST_DEVICE inline ComputeType<T> dropoutScale(double ratio) {
  return static_cast<ComputeType<T>>(1.0 / (1.0 - ratio));
}

/// The operands of a dropout in training: x and out of storage type T (and
/// `count` elements), the mask (one byte per element) or null.
struct DropoutOperands {
  const void *x;
  void *out;
  uint8_t *mask;
  int64_t count;
};

/// Writes out (and the mask, when there is one) for the elements of block
/// `block` (fewer than four in a partial last block); `scale` is
/// dropoutScale<T>(ratio).
template <typename T>
LETHE_HOST_DEVICE inline void
dropoutBlock(const DropoutOperands &operands, uint64_t seed, uint64_t step,
             double ratio, ComputeType<T> scale, int64_t block) {
  DropoutWords random = dropoutWords(seed, step, static_cast<uint64_t>(block));
  for (int lane = 0; lane < 4 && block * 4 + lane < operands.count; ++lane) {
    int64_t i = block * 4 + lane;
    bool kept = dropoutKeeps(random.words[lane], ratio);
    store<T>(operands.out, i,
             kept ? load<T>(operands.x, i) * scale : ComputeType<T>(0));
    if (operands.mask)
      operands.mask[i] = kept;
  }
}

} // namespace lethe::rt

#endif // LETHE_RUNTIME_COMMON_DROPOUTMASK_H
