//===- DType.h - The runtime's element type names -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The names a program's manifest and a weights file give the runtime's
// element types (lethe_rt.h): f16, bf16, f32, f64, i1, i8, i16, i32, i64,
// u8, u16, u32, u64. Header-only, so that the weights-file unit needs no
// runtime library.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_DTYPE_H
#define LETHE_DRIVER_DTYPE_H

#include "lethe_rt.h"

#include <cstddef>
#include <optional>
#include <string_view>

namespace lethe::driver {

/// One element type: its runtime enum, its name and its size in bytes.
struct DTypeInfo {
  lethe_rt_dtype dtype;
  const char *name;
  size_t size;
};

/// Every element type the runtime knows.
inline constexpr DTypeInfo kDTypes[] = {
    {LETHE_RT_F16, "f16", 2}, {LETHE_RT_BF16, "bf16", 2},
    {LETHE_RT_F32, "f32", 4}, {LETHE_RT_F64, "f64", 8},
    {LETHE_RT_I1, "i1", 1},   {LETHE_RT_I8, "i8", 1},
    {LETHE_RT_I16, "i16", 2}, {LETHE_RT_I32, "i32", 4},
    {LETHE_RT_I64, "i64", 8}, {LETHE_RT_U8, "u8", 1},
    {LETHE_RT_U16, "u16", 2}, {LETHE_RT_U32, "u32", 4},
    {LETHE_RT_U64, "u64", 8},
};

/// The element type named `name`, or nullopt when no type has that name.
inline std::optional<lethe_rt_dtype> parseDTypeName(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
}

/// The name of `dtype` ("?" for a value outside the enum).
inline const char *getDTypeName(lethe_rt_dtype dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "?";
}

/// The bytes one element of `dtype` occupies (0 for a value outside the
/// enum).
inline size_t getDTypeSize(lethe_rt_dtype dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.size;
  return 0;
}

/// Whether `dtype` is a floating-point type.
inline bool isFloatDType(lethe_rt_dtype dtype) {
  return dtype == LETHE_RT_F16 || dtype == LETHE_RT_BF16 ||
         dtype == LETHE_RT_F32 || dtype == LETHE_RT_F64;
}

} // namespace lethe::driver

#endif // LETHE_DRIVER_DTYPE_H
