//===- WeightsFile.cpp - Read and write a planned executable's weights ----===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The format is in WeightsFile.h and docs/Executables.md. Integers are
// assembled byte by byte, so the code is right on any host byte order.
//
//===----------------------------------------------------------------------===//

#include "WeightsFile.h"

#include "DType.h"
#include "FileIO.h"

#include <cstring>
#include <limits>
#include <set>

using namespace lethe::driver;

namespace {

void appendUnsigned(std::string &bytes, uint64_t value, int size) {
  for (int byte = 0; byte < size; ++byte)
    bytes.push_back(static_cast<char>((value >> (8 * byte)) & 0xFF));
}

/// The number of elements of `shape`, or -1 when a dimension is negative or
/// the product overflows.
int64_t countElements(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return -1;
    count *= dim;
  }
  return count;
}

/// Reads little-endian fields from a byte string, remembering the first
/// failure.
class Reader {
public:
  explicit Reader(std::string_view bytes) : bytes(bytes) {}

  bool readUnsigned(uint64_t &value, int size) {
    if (bytes.size() - position < static_cast<size_t>(size))
      return false;
    value = 0;
    for (int byte = 0; byte < size; ++byte)
      value |= static_cast<uint64_t>(
                   static_cast<unsigned char>(bytes[position + byte]))
               << (8 * byte);
    position += size;
    return true;
  }

  bool readBytes(std::string_view &value, uint64_t size) {
    if (bytes.size() - position < size)
      return false;
    value = bytes.substr(position, size);
    position += size;
    return true;
  }

  size_t remaining() const { return bytes.size() - position; }
  size_t offset() const { return position; }

private:
  std::string_view bytes;
  size_t position = 0;
};

} // namespace

bool lethe::driver::serializeWeights(const std::vector<WeightsTensor> &tensors,
                                     std::string &bytes, std::string &error) {
  bytes.assign(kWeightsMagic, sizeof(kWeightsMagic));
  appendUnsigned(bytes, kWeightsVersion, 4);
  if (tensors.size() > std::numeric_limits<uint32_t>::max()) {
    error = "too many tensors for a weights file";
    return false;
  }
  appendUnsigned(bytes, tensors.size(), 4);
  std::set<std::string> names;
  for (const WeightsTensor &tensor : tensors) {
    std::string where = "weights tensor '" + tensor.name + "'";
    if (tensor.name.empty()) {
      error = "a weights tensor has an empty name";
      return false;
    }
    if (!names.insert(tensor.name).second) {
      error = where + " appears twice";
      return false;
    }
    size_t elementSize = getDTypeSize(tensor.dtype);
    if (elementSize == 0) {
      error = where + " has an unknown dtype (" +
              std::to_string(static_cast<int>(tensor.dtype)) + ")";
      return false;
    }
    int64_t count = countElements(tensor.shape);
    if (count < 0) {
      error = where + " has a negative or too large shape";
      return false;
    }
    if (static_cast<uint64_t>(count) * elementSize != tensor.data.size()) {
      error = where + " has " + std::to_string(tensor.data.size()) +
              " bytes of data, but its shape and dtype need " +
              std::to_string(static_cast<uint64_t>(count) * elementSize);
      return false;
    }
    const char *dtypeName = getDTypeName(tensor.dtype);
    appendUnsigned(bytes, tensor.name.size(), 4);
    bytes += tensor.name;
    appendUnsigned(bytes, std::strlen(dtypeName), 4);
    bytes += dtypeName;
    appendUnsigned(bytes, tensor.shape.size(), 4);
    for (int64_t dim : tensor.shape)
      appendUnsigned(bytes, static_cast<uint64_t>(dim), 8);
    appendUnsigned(bytes, tensor.data.size(), 8);
    bytes += tensor.data;
  }
  return true;
}

bool lethe::driver::parseWeights(std::string_view bytes,
                                 std::string_view origin,
                                 std::vector<WeightsTensor> &tensors,
                                 std::string &error) {
  std::string prefix = "'" + std::string(origin) + "'";
  tensors.clear();
  if (bytes.size() < sizeof(kWeightsMagic) ||
      std::memcmp(bytes.data(), kWeightsMagic, sizeof(kWeightsMagic)) != 0) {
    error = prefix + " is not a Lethe weights file (bad magic; expected "
                     "'LETHEWTS')";
    return false;
  }
  Reader reader(bytes.substr(sizeof(kWeightsMagic)));
  auto truncated = [&](const std::string &what) {
    error = prefix + " is truncated (in " + what + ")";
    return false;
  };
  uint64_t version, count;
  if (!reader.readUnsigned(version, 4))
    return truncated("the header");
  if (version != kWeightsVersion) {
    error = prefix + " is a version " + std::to_string(version) +
            " weights file; this executable reads version " +
            std::to_string(kWeightsVersion);
    return false;
  }
  if (!reader.readUnsigned(count, 4))
    return truncated("the header");
  std::set<std::string, std::less<>> names;
  for (uint64_t index = 0; index < count; ++index) {
    std::string where = "tensor " + std::to_string(index);
    uint64_t size;
    std::string_view name, dtypeName, data;
    if (!reader.readUnsigned(size, 4) || !reader.readBytes(name, size))
      return truncated(where + "'s name");
    where = "tensor '" + printable(name) + "'";
    if (name.empty()) {
      error =
          prefix + ": tensor " + std::to_string(index) + " has an empty name";
      return false;
    }
    if (!names.insert(std::string(name)).second) {
      error = prefix + ": " + where + " appears twice";
      return false;
    }
    if (!reader.readUnsigned(size, 4) || !reader.readBytes(dtypeName, size))
      return truncated(where + "'s dtype");
    std::optional<lethe_rt_dtype> dtype = parseDTypeName(dtypeName);
    if (!dtype) {
      error = prefix + ": " + where + " has unknown dtype '" +
              printable(dtypeName) + "'";
      return false;
    }
    uint64_t rank;
    if (!reader.readUnsigned(rank, 4))
      return truncated(where + "'s shape");
    if (rank > reader.remaining() / 8)
      return truncated(where + "'s shape");
    std::vector<int64_t> shape;
    for (uint64_t dim = 0; dim < rank; ++dim) {
      uint64_t value = 0;
      reader.readUnsigned(value, 8);
      shape.push_back(static_cast<int64_t>(value));
    }
    int64_t elements = countElements(shape);
    if (elements < 0 ||
        static_cast<uint64_t>(elements) >
            std::numeric_limits<uint64_t>::max() / getDTypeSize(*dtype)) {
      error = prefix + ": " + where + " has a negative or too large shape";
      return false;
    }
    if (!reader.readUnsigned(size, 8))
      return truncated(where + "'s data size");
    uint64_t expected = static_cast<uint64_t>(elements) * getDTypeSize(*dtype);
    if (size != expected) {
      error = prefix + ": " + where + " has " + std::to_string(size) +
              " bytes of data, but its shape and dtype need " +
              std::to_string(expected);
      return false;
    }
    if (!reader.readBytes(data, size))
      return truncated(where + "'s data");
    tensors.push_back(
        WeightsTensor{std::string(name), *dtype, shape, std::string(data)});
  }
  if (reader.remaining() != 0) {
    error = prefix + " has " + std::to_string(reader.remaining()) +
            " bytes after its last tensor";
    return false;
  }
  return true;
}

bool lethe::driver::writeWeightsFile(const std::string &path,
                                     const std::vector<WeightsTensor> &tensors,
                                     std::string &error) {
  std::string bytes;
  if (!serializeWeights(tensors, bytes, error))
    return false;
  return writeFileAtomically(path, bytes, error);
}

bool lethe::driver::readWeightsFile(const std::string &path,
                                    std::vector<WeightsTensor> &tensors,
                                    std::string &error) {
  std::string bytes;
  if (!readWholeFile(path, bytes, error,
                     std::string_view(kWeightsMagic, sizeof(kWeightsMagic))))
    return false;
  return parseWeights(bytes, path, tensors, error);
}
