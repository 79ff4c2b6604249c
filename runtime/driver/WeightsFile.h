//===- WeightsFile.h - Read and write a planned executable's weights ------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The weights file holds the initial parameters and optimizer state of a
// planned executable: `lethec` writes NAME.weights beside NAME, the
// executable reads it (or --weights FILE) and --save-weights writes the
// trained values in the same format. All integers are little-endian:
//
//   "LETHEWTS"                 8 bytes, the magic
//   u32 version                1
//   u32 count                  the number of tensors
//   count times:
//     u32 n, n bytes           the tensor's name (UTF-8, unique in the file)
//     u32 n, n bytes           its dtype name (f32, bf16, i64, ...: DType.h)
//     u32 rank, rank x i64     its shape (each dimension >= 0)
//     u64 n, n bytes           its elements, row-major, little-endian;
//                              n = product(shape) * sizeof(dtype)
//
// and nothing after the last tensor. This unit depends on nothing but the
// C++ standard library and lethe_rt.h's dtype enum, and never throws, so
// that lethec (an LLVM tool built without exceptions) can link it.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_WEIGHTSFILE_H
#define LETHE_DRIVER_WEIGHTSFILE_H

#include "lethe_rt.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::driver {

/// The magic the file starts with, and the version this code writes and
/// reads.
inline constexpr char kWeightsMagic[8] = {'L', 'E', 'T', 'H',
                                          'E', 'W', 'T', 'S'};
inline constexpr uint32_t kWeightsVersion = 1;

/// One named tensor of a weights file. `data` holds its elements' bytes
/// exactly as in the arena (row-major, little-endian).
struct WeightsTensor {
  std::string name;
  lethe_rt_dtype dtype = LETHE_RT_F32;
  std::vector<int64_t> shape;
  std::string data;
};

/// The bytes of a weights file holding `tensors` in order; false, with a
/// one-line `error`, when a tensor is malformed (a bad dtype, a negative
/// dimension, data whose size does not match its shape, a duplicate name).
bool serializeWeights(const std::vector<WeightsTensor> &tensors,
                      std::string &bytes, std::string &error);

/// The tensors of the weights file `bytes`; false, with a one-line `error`
/// (bad magic, unknown version, truncated, an unknown dtype, a duplicate
/// name, bytes after the last tensor), when it is not a valid file.
/// `origin` names the file in the message.
bool parseWeights(std::string_view bytes, std::string_view origin,
                  std::vector<WeightsTensor> &tensors, std::string &error);

/// Writes `tensors` to `path` as a weights file: first to a temporary beside
/// it, then renamed over `path`, so that a failure leaves no partial file.
/// False, with a one-line `error` saying what failed, when a tensor is
/// malformed or the file cannot be written. This is what lethec calls.
bool writeWeightsFile(const std::string &path,
                      const std::vector<WeightsTensor> &tensors,
                      std::string &error);

/// Reads the weights file at `path`; false, with a one-line `error`, when
/// it cannot be read or is not a valid weights file.
bool readWeightsFile(const std::string &path,
                     std::vector<WeightsTensor> &tensors, std::string &error);

} // namespace lethe::driver

#endif // LETHE_DRIVER_WEIGHTSFILE_H
