//===- NpyFile.cpp - NumPy .npy arrays ------------------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The header is a Python dict literal, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (4, 3), }
// padded with spaces and a newline; this reader parses just that grammar.
//
//===----------------------------------------------------------------------===//

#include "NpyFile.h"

#include "DType.h"
#include "FileIO.h"

#include <cctype>
#include <cstring>
#include <limits>
#include <optional>

using namespace lethe::driver;

namespace {

/// The descriptors (without the byte-order character) of each dtype.
struct NpyType {
  lethe_rt_dtype dtype;
  const char *kind; // e.g. "f4"
};

constexpr NpyType kNpyTypes[] = {
    {LETHE_RT_F16, "f2"}, {LETHE_RT_BF16, "u2"}, {LETHE_RT_BF16, "V2"},
    {LETHE_RT_F32, "f4"}, {LETHE_RT_F64, "f8"},  {LETHE_RT_I1, "b1"},
    {LETHE_RT_I8, "i1"},  {LETHE_RT_I16, "i2"},  {LETHE_RT_I32, "i4"},
    {LETHE_RT_I64, "i8"}, {LETHE_RT_U8, "u1"},   {LETHE_RT_U16, "u2"},
    {LETHE_RT_U32, "u4"}, {LETHE_RT_U64, "u8"},
};

/// A cursor over the header dict.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  void skipSpace() {
    while (position < text.size() &&
           std::isspace(static_cast<unsigned char>(text[position])))
      ++position;
  }
  bool consume(char c) {
    skipSpace();
    if (position < text.size() && text[position] == c) {
      ++position;
      return true;
    }
    return false;
  }
  std::optional<std::string> parseString() {
    skipSpace();
    if (position >= text.size() ||
        (text[position] != '\'' && text[position] != '"'))
      return std::nullopt;
    char quote = text[position++];
    size_t end = text.find(quote, position);
    if (end == std::string_view::npos)
      return std::nullopt;
    std::string value(text.substr(position, end - position));
    position = end + 1;
    return value;
  }
  std::optional<std::string> parseWord() {
    skipSpace();
    size_t start = position;
    while (position < text.size() &&
           std::isalnum(static_cast<unsigned char>(text[position])))
      ++position;
    if (start == position)
      return std::nullopt;
    return std::string(text.substr(start, position - start));
  }
  std::optional<int64_t> parseInteger() {
    std::optional<std::string> word = parseWord();
    // Python 2 wrote long dimensions as 3L.
    if (word && !word->empty() && word->back() == 'L')
      word->pop_back();
    if (!word || word->empty() || word->size() > 18)
      return std::nullopt;
    int64_t value = 0;
    for (char c : *word) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return std::nullopt;
      value = value * 10 + (c - '0');
    }
    return value;
  }
  bool atEnd() {
    skipSpace();
    return position == text.size();
  }

private:
  std::string_view text;
  size_t position = 0;
};

} // namespace

bool lethe::driver::npyMatchesDType(std::string_view descr,
                                    lethe_rt_dtype dtype) {
  if (descr.size() != 3)
    return false;
  char order = descr[0];
  std::string_view kind = descr.substr(1);
  size_t size = getDTypeSize(dtype);
  // '|' is for one-byte types (and void), '<' little-endian; '=' is native,
  // which is little-endian on every host Lethe runs on.
  bool orderOk = order == '<' || order == '=' || (order == '|' && size == 1) ||
                 (order == '|' && kind[0] == 'V');
  if (!orderOk)
    return false;
  for (const NpyType &type : kNpyTypes)
    if (type.dtype == dtype && kind == type.kind)
      return true;
  return false;
}

std::string lethe::driver::getNpyDescr(lethe_rt_dtype dtype) {
  for (const NpyType &type : kNpyTypes)
    if (type.dtype == dtype)
      return std::string(getDTypeSize(dtype) == 1 ? "|" : "<") + type.kind;
  return "";
}

bool lethe::driver::parseNpy(std::string_view bytes, std::string_view origin,
                             NpyArray &array, std::string &error) {
  std::string prefix = "'" + std::string(origin) + "'";
  if (bytes.size() < 10 || bytes.substr(0, kNpyMagic.size()) != kNpyMagic) {
    error = prefix + " is not a NumPy .npy file (bad magic)";
    return false;
  }
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLength, headerStart;
  auto byteAt = [&](size_t index) {
    return static_cast<size_t>(static_cast<unsigned char>(bytes[index]));
  };
  if (major == 1) {
    headerLength = byteAt(8) | byteAt(9) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = prefix + " is truncated (in its header)";
      return false;
    }
    headerLength =
        byteAt(8) | byteAt(9) << 8 | byteAt(10) << 16 | byteAt(11) << 24;
    headerStart = 12;
  } else {
    error = prefix + " is a version " + std::to_string(major) +
            " .npy file; this reader takes versions 1, 2 and 3";
    return false;
  }
  if (bytes.size() - headerStart < headerLength) {
    error = prefix + " is truncated (in its header)";
    return false;
  }
  HeaderParser parser(bytes.substr(headerStart, headerLength));
  std::optional<std::string> descr;
  std::optional<bool> fortranOrder;
  std::optional<std::vector<int64_t>> shape;
  auto badHeader = [&](const std::string &why) {
    error = prefix + " has a header this reader cannot parse (" + why +
            "); write the array with numpy.save";
    return false;
  };
  if (!parser.consume('{'))
    return badHeader("not a dict");
  while (!parser.consume('}')) {
    std::optional<std::string> key = parser.parseString();
    if (!key || !parser.consume(':'))
      return badHeader("expected 'key': value");
    if (*key == "descr") {
      descr = parser.parseString();
      if (!descr)
        return badHeader("descr is not a string: structured dtypes are not "
                         "supported");
    } else if (*key == "fortran_order") {
      std::optional<std::string> word = parser.parseWord();
      if (!word || (*word != "True" && *word != "False"))
        return badHeader("fortran_order is not True or False");
      fortranOrder = *word == "True";
    } else if (*key == "shape") {
      if (!parser.consume('('))
        return badHeader("shape is not a tuple");
      shape.emplace();
      if (!parser.consume(')')) {
        while (true) {
          std::optional<int64_t> dim = parser.parseInteger();
          if (!dim)
            return badHeader("a dimension of shape is not an integer");
          shape->push_back(*dim);
          if (parser.consume(')'))
            break;
          if (!parser.consume(','))
            return badHeader("expected ',' or ')' in shape");
          if (parser.consume(')'))
            break;
        }
      }
    } else {
      return badHeader("unknown key '" + printable(*key) + "'");
    }
    if (!parser.consume(',')) {
      if (!parser.consume('}'))
        return badHeader("expected ',' or '}'");
      break;
    }
  }
  if (!descr || !fortranOrder || !shape)
    return badHeader("it needs descr, fortran_order and shape");
  if (*fortranOrder) {
    error = prefix + " is in Fortran order; save it in C order "
                     "(numpy.ascontiguousarray)";
    return false;
  }
  if (!descr->empty() && (*descr)[0] == '>') {
    error = prefix + " holds big-endian '" + printable(*descr) +
            "' elements; save it little-endian (array.astype('<" +
            printable(descr->substr(1)) + "'))";
    return false;
  }
  size_t elementSize = 0;
  for (const NpyType &type : kNpyTypes)
    if (descr->size() == 3 && descr->substr(1) == type.kind)
      elementSize = getDTypeSize(type.dtype);
  if (elementSize == 0) {
    error = prefix + " holds '" + printable(*descr) +
            "' elements, which no runtime dtype matches";
    return false;
  }
  uint64_t elements = 1;
  for (int64_t dim : *shape) {
    if (dim != 0 && elements > (uint64_t(1) << 56) / dim) {
      error = prefix + " has a shape too large to read (over 2^56 " +
              "elements); the file is corrupt";
      return false;
    }
    elements *= dim;
  }
  size_t dataStart = headerStart + headerLength;
  uint64_t needed = elements * elementSize;
  if (bytes.size() - dataStart != needed) {
    error = prefix + " has " + std::to_string(bytes.size() - dataStart) +
            " bytes of data, but its header (" + *descr + " of " +
            std::to_string(elements) + " elements) needs " +
            std::to_string(needed) +
            (bytes.size() - dataStart < needed ? " (truncated)" : "");
    return false;
  }
  array.descr = *descr;
  array.shape = *shape;
  array.data.assign(bytes.substr(dataStart));
  return true;
}

std::string lethe::driver::serializeNpy(lethe_rt_dtype dtype,
                                        const std::vector<int64_t> &shape,
                                        std::string_view data) {
  std::string header = "{'descr': '" + getNpyDescr(dtype) +
                       "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : shape)
    header += std::to_string(dim) + (shape.size() == 1 ? "," : ", ");
  if (shape.size() > 1)
    header.resize(header.size() - 2);
  header += "), }";
  // Pad with spaces and a newline to a multiple of 64 bytes, as NumPy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x01\x00", 8);
  bytes.push_back(static_cast<char>(header.size() & 0xFF));
  bytes.push_back(static_cast<char>(header.size() >> 8));
  bytes += header;
  bytes += data;
  return bytes;
}
