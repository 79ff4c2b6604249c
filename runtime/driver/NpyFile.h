//===- NpyFile.h - NumPy .npy arrays --------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The driver's --data DIR reads DIR/<argument>.npy (numpy.save's format,
// versions 1.0, 2.0 and 3.0): little-endian (or one-byte) elements in C
// order. NumPy has no bfloat16: a bf16 argument reads '<u2' (the bit
// patterns, as ml_dtypes' arrays view as uint16) or '<V2'.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_NPYFILE_H
#define LETHE_DRIVER_NPYFILE_H

#include "lethe_rt.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lethe::driver {

/// The magic a .npy file starts with.
inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};

/// A parsed .npy array: its NumPy dtype descriptor ('<f4'), shape and
/// element bytes.
struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::string data;
};

/// Parses the .npy file `bytes`; false, with a one-line `error` naming
/// `origin`, when it is not one this reader takes (bad magic, a header that
/// is not a dict with descr, fortran_order and shape, Fortran order, a
/// big-endian or unsupported dtype, fewer or more data bytes than the shape
/// needs).
bool parseNpy(std::string_view bytes, std::string_view origin, NpyArray &array,
              std::string &error);

/// Whether an array with NumPy descriptor `descr` holds elements of
/// `dtype` (for bf16, '<u2' and '<V2').
bool npyMatchesDType(std::string_view descr, lethe_rt_dtype dtype);

/// The descriptor numpy.save writes for `dtype` ('<f4', '|b1', ...; '<u2'
/// for bf16).
std::string getNpyDescr(lethe_rt_dtype dtype);

/// A version 1.0 .npy file holding `data` of `dtype` and `shape`, as
/// numpy.save writes it (for tests and tools).
std::string serializeNpy(lethe_rt_dtype dtype,
                         const std::vector<int64_t> &shape,
                         std::string_view data);

} // namespace lethe::driver

#endif // LETHE_DRIVER_NPYFILE_H
