//===- NpyFileTest.cpp - Reading NumPy .npy files -------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "NpyFile.h"

#include <gtest/gtest.h>

using namespace lethe::driver;

namespace {

TEST(NpyFileTest, RoundTripsWhatNumpySaveWrites) {
  std::string data(24, '\x02');
  std::string bytes = serializeNpy(LETHE_RT_F32, {2, 3}, data);
  // numpy.save's header for this array, padded to 64 bytes in all.
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  EXPECT_EQ(bytes.substr(10, header.size()), header);
  EXPECT_EQ(bytes[10 + static_cast<unsigned char>(bytes[8]) - 1], '\n');
  EXPECT_EQ((10 + static_cast<unsigned char>(bytes[8])) % 64, 0u);
  NpyArray array;
  std::string error;
  ASSERT_TRUE(parseNpy(bytes, "a.npy", array, error)) << error;
  EXPECT_EQ(array.descr, "<f4");
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(array.data, data);
  EXPECT_TRUE(npyMatchesDType(array.descr, LETHE_RT_F32));
  EXPECT_FALSE(npyMatchesDType(array.descr, LETHE_RT_F64));

  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, std::vector<int64_t>{5}}) {
    std::string one = serializeNpy(LETHE_RT_I1, shape,
                                   std::string(shape.empty() ? 1 : 5, '\1'));
    ASSERT_TRUE(parseNpy(one, "b.npy", array, error)) << error;
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(array.descr, "|b1");
    EXPECT_TRUE(npyMatchesDType(array.descr, LETHE_RT_I1));
  }
}

/// A .npy file of `version` with header `header` and `data`.
std::string makeNpy(int version, const std::string &header,
                    const std::string &data) {
  std::string bytes("\x93NUMPY", 6);
  bytes.push_back(static_cast<char>(version));
  bytes.push_back('\0');
  size_t length = header.size();
  bytes.push_back(static_cast<char>(length & 0xFF));
  bytes.push_back(static_cast<char>(length >> 8));
  if (version >= 2) {
    bytes.push_back('\0');
    bytes.push_back('\0');
  }
  return bytes + header + data;
}

TEST(NpyFileTest, ReadsVersionsTwoAndThree) {
  NpyArray array;
  std::string error;
  for (int version : {2, 3}) {
    std::string bytes = makeNpy(
        version, "{\"descr\":\"<i8\",\"shape\":(2,),\"fortran_order\":False}\n",
        std::string(16, '\0'));
    ASSERT_TRUE(parseNpy(bytes, "v.npy", array, error)) << error;
    EXPECT_EQ(array.shape, (std::vector<int64_t>{2}));
    EXPECT_TRUE(npyMatchesDType(array.descr, LETHE_RT_I64));
  }
  // bf16 as ml_dtypes' uint16 view.
  EXPECT_TRUE(npyMatchesDType("<u2", LETHE_RT_BF16));
  EXPECT_TRUE(npyMatchesDType("<V2", LETHE_RT_BF16));
}

TEST(NpyFileTest, Errors) {
  NpyArray array;
  std::string error;
  auto parse = [&](const std::string &bytes) {
    EXPECT_FALSE(parseNpy(bytes, "e.npy", array, error));
    return error;
  };
  EXPECT_EQ(parse("not an npy file"),
            "'e.npy' is not a NumPy .npy file (bad magic)");
  EXPECT_EQ(parse(makeNpy(4, "{}", "")),
            "'e.npy' is a version 4 .npy file; this reader takes versions 1, "
            "2 and 3");
  EXPECT_EQ(parse(makeNpy(1,
                          "{'descr': '<f4', 'fortran_order': True, "
                          "'shape': (1,), }",
                          "abcd")),
            "'e.npy' is in Fortran order; save it in C order "
            "(numpy.ascontiguousarray)");
  EXPECT_EQ(parse(makeNpy(1,
                          "{'descr': '>f4', 'fortran_order': False, "
                          "'shape': (1,), }",
                          "abcd")),
            "'e.npy' holds big-endian '>f4' elements; save it little-endian "
            "(array.astype('<f4'))");
  EXPECT_EQ(parse(makeNpy(1,
                          "{'descr': '<c8', 'fortran_order': False, "
                          "'shape': (1,), }",
                          "abcdefgh")),
            "'e.npy' holds '<c8' elements, which no runtime dtype matches");
  EXPECT_EQ(parse(makeNpy(1,
                          "{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (2,), }",
                          "abcd")),
            "'e.npy' has 4 bytes of data, but its header (<f4 of 2 elements) "
            "needs 8 (truncated)");
  EXPECT_EQ(parse(makeNpy(1, "{'descr': '<f4', 'shape': (2,), }", "")),
            "'e.npy' has a header this reader cannot parse (it needs descr, "
            "fortran_order and shape); write the array with numpy.save");
  // Each way a header can be malformed: one line naming it.
  auto header = [&](const std::string &text) {
    std::string message = parse(makeNpy(1, text, "abcd"));
    std::string prefix = "'e.npy' has a header this reader cannot parse (";
    std::string suffix = "); write the array with numpy.save";
    EXPECT_EQ(message.rfind(prefix, 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    if (message.size() < prefix.size() + suffix.size() ||
        message.compare(message.size() - suffix.size(), suffix.size(),
                        suffix) != 0)
      return "(no suffix) " + message;
    return message.substr(prefix.size(),
                          message.size() - prefix.size() - suffix.size());
  };
  EXPECT_EQ(header("['descr', '<f4']"), "not a dict");
  EXPECT_EQ(header("{'descr' '<f4'}"), "expected 'key': value");
  EXPECT_EQ(header("{descr: '<f4'}"), "expected 'key': value");
  EXPECT_EQ(header("{'fortran_order': maybe, }"),
            "fortran_order is not True or False");
  EXPECT_EQ(header("{'shape': [1], }"), "shape is not a tuple");
  EXPECT_EQ(header("{'shape': (1, x), }"),
            "a dimension of shape is not an integer");
  EXPECT_EQ(header("{'shape': (1; 2), }"), "expected ',' or ')' in shape");
  EXPECT_EQ(header("{'dtype': '<f4', }"), "unknown key 'dtype'");
  EXPECT_EQ(header("{'descr': '<f4' 'shape': (1,)}"), "expected ',' or '}'");
  EXPECT_EQ(parse(makeNpy(1,
                          "{'descr': '<f4', 'fortran_order': False, "
                          "'shape': (4294967296, 4294967296), }",
                          "")),
            "'e.npy' has a shape too large to read (over 2^56 elements); the "
            "file is corrupt");
  // A version 2 file whose 4-byte header length is cut short, and one whose
  // header runs past the end.
  EXPECT_EQ(parse(std::string("\x93NUMPY\x02\x00\x10\x00", 10)),
            "'e.npy' is truncated (in its header)");
  EXPECT_EQ(parse(std::string("\x93NUMPY\x02\x00\x40\x00\x00\x00{", 13)),
            "'e.npy' is truncated (in its header)");
  EXPECT_NE(parse(makeNpy(1,
                          "{'descr': [('a', '<f4')], 'fortran_order': "
                          "False, 'shape': (), }",
                          ""))
                .find("structured dtypes are not supported"),
            std::string::npos);
  EXPECT_NE(
      parse(std::string("\x93NUMPY\x01\x00\xff\x00{", 11)).find("truncated"),
      std::string::npos);
}

} // namespace
