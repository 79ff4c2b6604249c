//===- WeightsFileTest.cpp - The weights file format ----------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "WeightsFile.h"
#include "FileIO.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <sys/stat.h>

using namespace lethe::driver;

namespace {

/// The files a writer left in `directory` with ".tmp" in their names.
std::vector<std::string> temporariesIn(const std::filesystem::path &directory) {
  std::vector<std::string> found;
  for (const auto &entry : std::filesystem::directory_iterator(directory))
    if (entry.path().filename().string().find(".tmp") != std::string::npos)
      found.push_back(entry.path().filename().string());
  return found;
}

std::vector<WeightsTensor> sampleTensors() {
  return {
      {"fc.weight", LETHE_RT_F32, {2, 3}, std::string(24, '\x01')},
      {"fc.bias",
       LETHE_RT_BF16,
       {3},
       std::string("\x01\x02\x03\x04\x05\x06", 6)},
      {"step_size", LETHE_RT_F64, {}, std::string(8, '\x7f')},
      {"empty", LETHE_RT_I64, {0, 4}, ""},
  };
}

bool sameTensors(const std::vector<WeightsTensor> &a,
                 const std::vector<WeightsTensor> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t index = 0; index < a.size(); ++index)
    if (a[index].name != b[index].name || a[index].dtype != b[index].dtype ||
        a[index].shape != b[index].shape || a[index].data != b[index].data)
      return false;
  return true;
}

TEST(WeightsFileTest, RoundTrip) {
  std::string bytes, error;
  ASSERT_TRUE(serializeWeights(sampleTensors(), bytes, error)) << error;
  EXPECT_EQ(bytes.substr(0, 8), "LETHEWTS");
  EXPECT_EQ(bytes.substr(8, 4), std::string("\x01\x00\x00\x00", 4));
  std::vector<WeightsTensor> tensors;
  ASSERT_TRUE(parseWeights(bytes, "w", tensors, error)) << error;
  EXPECT_TRUE(sameTensors(tensors, sampleTensors()));
}

TEST(WeightsFileTest, LayoutIsLittleEndian) {
  std::string bytes, error;
  ASSERT_TRUE(serializeWeights(
      {{"a", LETHE_RT_I16, {2}, std::string("\x01\x02\x03\x04", 4)}}, bytes,
      error));
  std::string expected("LETHEWTS"
                       "\x01\x00\x00\x00"
                       "\x01\x00\x00\x00"
                       "\x01\x00\x00\x00"
                       "a"
                       "\x03\x00\x00\x00"
                       "i16"
                       "\x01\x00\x00\x00"
                       "\x02\x00\x00\x00\x00\x00\x00\x00"
                       "\x04\x00\x00\x00\x00\x00\x00\x00"
                       "\x01\x02\x03\x04",
                       8 + 4 + 4 + 4 + 1 + 4 + 3 + 4 + 8 + 8 + 4);
  EXPECT_EQ(bytes, expected);
}

TEST(WeightsFileTest, WriteAndReadFile) {
  std::string path = testing::TempDir() + "/weights-round-trip.weights";
  std::string error;
  ASSERT_TRUE(writeWeightsFile(path, sampleTensors(), error)) << error;
  EXPECT_TRUE(temporariesIn(testing::TempDir()).empty());
  std::vector<WeightsTensor> tensors;
  ASSERT_TRUE(readWeightsFile(path, tensors, error)) << error;
  EXPECT_TRUE(sameTensors(tensors, sampleTensors()));
  std::remove(path.c_str());
}

TEST(FileIOTest, PrintableQuotesBytesOnOneLine) {
  using lethe::driver::printable;
  EXPECT_EQ(printable("fc.weight"), "fc.weight");
  EXPECT_EQ(printable(std::string("a\nb\0\xff\\", 6)),
            "a\\x0ab\\x00\\xff\\x5c");
  EXPECT_EQ(printable(std::string(70, 'x')), std::string(64, 'x') + "...");
  EXPECT_EQ(printable(std::string(64, 'x')), std::string(64, 'x'));
}

// The all-or-none writer follows a symbolic link (the file it leads to is
// replaced, the link kept) and writes a device in place (a rename would put
// a regular file where it stands): a full one is an error.
TEST(FileIOTest, WritesThroughLinksAndIntoDevices) {
  namespace fs = std::filesystem;
  fs::path directory = fs::path(testing::TempDir()) / "file-io-links";
  fs::remove_all(directory);
  fs::create_directories(directory);
  fs::path target = directory / "target.txt", link = directory / "link.txt";
  std::string error;
  ASSERT_TRUE(lethe::driver::writeFileAtomically(target.string(), "old", error))
      << error;
  fs::create_symlink("target.txt", link);
  ASSERT_TRUE(lethe::driver::writeFileAtomically(link.string(), "new", error))
      << error;
  EXPECT_TRUE(fs::is_symlink(link));
  std::string bytes;
  ASSERT_TRUE(lethe::driver::readWholeFile(target.string(), bytes, error));
  EXPECT_EQ(bytes, "new");
  EXPECT_TRUE(temporariesIn(directory).empty());

  // A dangling link: its file is made.
  fs::path dangling = directory / "dangling.txt";
  fs::create_symlink("made.txt", dangling);
  ASSERT_TRUE(lethe::driver::writeFileAtomically(dangling.string(), "x", error))
      << error;
  EXPECT_TRUE(fs::is_symlink(dangling));
  ASSERT_TRUE(lethe::driver::readWholeFile((directory / "made.txt").string(),
                                           bytes, error));
  EXPECT_EQ(bytes, "x");

  // Devices, through links so that a regression replaces only the links.
  fs::path null = directory / "null", full = directory / "full";
  fs::create_symlink("/dev/null", null);
  fs::create_symlink("/dev/full", full);
  EXPECT_TRUE(lethe::driver::writeFilesAtomically(
      {{null.string(), "discarded"}, {(directory / "a.txt").string(), "a"}},
      error))
      << error;
  EXPECT_TRUE(fs::is_symlink(null));
  EXPECT_TRUE(fs::exists(directory / "a.txt"));
  // All or none: the full device fails before the regular file is renamed
  // into place.
  EXPECT_FALSE(lethe::driver::writeFilesAtomically(
      {{(directory / "b.txt").string(), "b"}, {full.string(), "lost"}}, error));
  EXPECT_EQ(error,
            "cannot write '" + full.string() + "': No space left on device");
  EXPECT_TRUE(fs::is_symlink(full));
  EXPECT_FALSE(fs::exists(directory / "b.txt"));
  EXPECT_TRUE(temporariesIn(directory).empty());

  // Two paths of one file (through a link) are refused before anything is
  // written.
  EXPECT_FALSE(lethe::driver::writeFilesAtomically(
      {{target.string(), "one"}, {link.string(), "two"}}, error));
  EXPECT_EQ(error, "'" + target.string() + "' and '" + link.string() +
                       "' name the same file; give each its own");
  ASSERT_TRUE(lethe::driver::readWholeFile(target.string(), bytes, error));
  EXPECT_EQ(bytes, "new");
  // A dangling link and the new file it leads to are one file too.
  fs::path later = directory / "later.txt", toLater = directory / "to-later";
  fs::create_symlink("later.txt", toLater);
  EXPECT_FALSE(lethe::driver::writeFilesAtomically(
      {{later.string(), "a"}, {toLater.string(), "b"}}, error));
  EXPECT_EQ(error, "'" + later.string() + "' and '" + toLater.string() +
                       "' name the same file; give each its own");
  EXPECT_FALSE(fs::exists(later));
  // A device takes each write in turn (/dev/stdout and /dev/stderr may be
  // one terminal).
  fs::path otherNull = directory / "other-null";
  fs::create_symlink("/dev/null", otherNull);
  EXPECT_TRUE(lethe::driver::writeFilesAtomically(
      {{null.string(), "a"}, {otherNull.string(), "b"}}, error))
      << error;

  // A path through /proc (or /dev, as /dev/stdout) is written in place:
  // replacing it would replace the file an open descriptor writes, such as
  // standard output redirected to a log.
  fs::path log = directory / "log.txt";
  std::FILE *open = std::fopen(log.string().c_str(), "w");
  ASSERT_NE(open, nullptr);
  std::fputs("kept ", open);
  std::fflush(open);
  fs::path descriptor = directory / "descriptor";
  fs::create_symlink("/proc/self/fd/" + std::to_string(::fileno(open)),
                     descriptor);
  auto inode = [](const fs::path &file) {
    struct stat status;
    return ::stat(file.string().c_str(), &status) == 0 ? status.st_ino
                                                       : ino_t(0);
  };
  ino_t before = inode(log);
  EXPECT_TRUE(
      lethe::driver::writeFileAtomically(descriptor.string(), "trace", error))
      << error;
  EXPECT_EQ(inode(log), before);
  std::fclose(open);
  ASSERT_TRUE(lethe::driver::readWholeFile(log.string(), bytes, error));
  EXPECT_EQ(bytes, "trace");
  fs::remove_all(directory);
}

TEST(WeightsFileTest, WriterRejectsMalformedTensors) {
  std::string bytes, error;
  EXPECT_FALSE(
      serializeWeights({{"a", LETHE_RT_F32, {2}, "abc"}}, bytes, error));
  EXPECT_EQ(error, "weights tensor 'a' has 3 bytes of data, but its shape "
                   "and dtype need 8");
  EXPECT_FALSE(serializeWeights(
      {{"a", LETHE_RT_I8, {1}, "x"}, {"a", LETHE_RT_I8, {1}, "y"}}, bytes,
      error));
  EXPECT_EQ(error, "weights tensor 'a' appears twice");
  EXPECT_FALSE(serializeWeights({{"a", LETHE_RT_I8, {-1}, ""}}, bytes, error));
  EXPECT_EQ(error, "weights tensor 'a' has a negative or too large shape");
  EXPECT_FALSE(serializeWeights({{"", LETHE_RT_I8, {}, "x"}}, bytes, error));
  EXPECT_EQ(error, "a weights tensor has an empty name");
  std::string path = testing::TempDir() + "/no-such-dir/x.weights";
  EXPECT_FALSE(writeWeightsFile(path, sampleTensors(), error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
}

// A reader given a magic stops at the first read whose bytes differ from
// it; a file that starts with the magic is read whole.
TEST(FileIOTest, ReadStopsAtAnotherMagic) {
  std::string path = testing::TempDir() + "/read-magic.bin";
  std::string large(1 << 20, 'x'), bytes, error;
  std::string weightsLike = std::string("LETHEWTS") + large;
  ASSERT_TRUE(writeFileAtomically(path, large, error)) << error;
  ASSERT_TRUE(readWholeFile(path, bytes, error, "LETHEWTS")) << error;
  EXPECT_LT(bytes.size(), large.size());
  EXPECT_GE(bytes.size(), 1u);
  ASSERT_TRUE(readWholeFile(path, bytes, error)) << error;
  EXPECT_EQ(bytes, large);
  ASSERT_TRUE(writeFileAtomically(path, weightsLike, error)) << error;
  ASSERT_TRUE(readWholeFile(path, bytes, error, "LETHEWTS")) << error;
  EXPECT_EQ(bytes, weightsLike);
  // Shorter than the magic, and a prefix of it: read whole.
  ASSERT_TRUE(writeFileAtomically(path, "LETH", error)) << error;
  ASSERT_TRUE(readWholeFile(path, bytes, error, "LETHEWTS")) << error;
  EXPECT_EQ(bytes, "LETH");
  std::remove(path.c_str());
}

TEST(WeightsFileTest, ReaderErrors) {
  std::string bytes, error;
  ASSERT_TRUE(serializeWeights(sampleTensors(), bytes, error));
  std::vector<WeightsTensor> tensors;

  EXPECT_FALSE(parseWeights("NOTWEIGHTS", "f", tensors, error));
  EXPECT_EQ(error, "'f' is not a Lethe weights file (bad magic; expected "
                   "'LETHEWTS')");

  std::string version = bytes;
  version[8] = 2;
  EXPECT_FALSE(parseWeights(version, "f", tensors, error));
  EXPECT_EQ(error, "'f' is a version 2 weights file; this executable reads "
                   "version 1");

  EXPECT_FALSE(parseWeights(bytes + "x", "f", tensors, error));
  EXPECT_EQ(error, "'f' has 1 bytes after its last tensor");

  // Every proper prefix is truncated (or too short for the magic).
  for (size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_FALSE(parseWeights(bytes.substr(0, length), "f", tensors, error))
        << length;
    if (length >= 8) {
      EXPECT_NE(error.find("is truncated"), std::string::npos)
          << length << ": " << error;
    }
  }

  std::string dtype = bytes;
  size_t at = dtype.find("f32");
  dtype.replace(at, 3, "q32");
  EXPECT_FALSE(parseWeights(dtype, "f", tensors, error));
  EXPECT_EQ(error, "'f': tensor 'fc.weight' has unknown dtype 'q32'");
  // What the file holds is quoted on one line, bytes outside printable
  // ASCII escaped and at most 64 shown.
  dtype.replace(at, 3, std::string("\n\0\\", 3));
  EXPECT_FALSE(parseWeights(dtype, "f", tensors, error));
  EXPECT_EQ(error,
            "'f': tensor 'fc.weight' has unknown dtype '\\x0a\\x00\\x5c'");

  // Tensors whose header is well formed but whose contents are not: the
  // file written out field by field (tensor "a", f32 [2] unless changed).
  auto file = [](std::vector<std::string> names, int64_t dim,
                 uint64_t dataSize) {
    auto u32 = [](uint32_t value) {
      return std::string(reinterpret_cast<char *>(&value), 4);
    };
    auto u64 = [](uint64_t value) {
      return std::string(reinterpret_cast<char *>(&value), 8);
    };
    std::string out(kWeightsMagic, sizeof(kWeightsMagic));
    out += u32(kWeightsVersion) + u32(static_cast<uint32_t>(names.size()));
    for (const std::string &name : names)
      out += u32(static_cast<uint32_t>(name.size())) + name + u32(3) + "f32" +
             u32(1) + u64(static_cast<uint64_t>(dim)) + u64(dataSize) +
             std::string(dataSize, '\0');
    return out;
  };
  ASSERT_TRUE(parseWeights(file({"a"}, 2, 8), "f", tensors, error)) << error;
  EXPECT_FALSE(parseWeights(file({""}, 2, 8), "f", tensors, error));
  EXPECT_EQ(error, "'f': tensor 0 has an empty name");
  EXPECT_FALSE(parseWeights(file({"a", "a"}, 2, 8), "f", tensors, error));
  EXPECT_EQ(error, "'f': tensor 'a' appears twice");
  EXPECT_FALSE(parseWeights(file({"a"}, -2, 0), "f", tensors, error));
  EXPECT_EQ(error, "'f': tensor 'a' has a negative or too large shape");
  EXPECT_FALSE(
      parseWeights(file({"a"}, int64_t(1) << 62, 0), "f", tensors, error));
  EXPECT_EQ(error, "'f': tensor 'a' has a negative or too large shape");
  EXPECT_FALSE(parseWeights(file({"a"}, 2, 4), "f", tensors, error));
  EXPECT_EQ(error, "'f': tensor 'a' has 4 bytes of data, but its shape and "
                   "dtype need 8");

  EXPECT_FALSE(readWeightsFile("/nonexistent/x.weights", tensors, error));
  EXPECT_EQ(error,
            "cannot read '/nonexistent/x.weights': No such file or directory");
}

} // namespace

// The temporaries have names no file has yet: a file of the user's named
// like one (OUT.tmp beside OUT, or both OUT.tmp and another output) is left
// alone. The file replaced keeps its mode; a new one gets 0666 less the
// umask.
TEST(FileIOTest, TemporariesLeaveUsersFilesAndModes) {
  namespace fs = std::filesystem;
  fs::path directory = fs::path(testing::TempDir()) / "file-io-temporaries";
  fs::remove_all(directory);
  fs::create_directories(directory);
  fs::path w = directory / "w", wTmp = directory / "w.tmp";
  std::string error, bytes;
  ASSERT_TRUE(writeFileAtomically(wTmp.string(), "mine", error)) << error;
  ASSERT_TRUE(writeFileAtomically(w.string(), "weights", error)) << error;
  ASSERT_TRUE(readWholeFile(wTmp.string(), bytes, error)) << error;
  EXPECT_EQ(bytes, "mine");
  ASSERT_TRUE(writeFilesAtomically(
      {{wTmp.string(), "profile"}, {w.string(), "new weights"}}, error))
      << error;
  ASSERT_TRUE(readWholeFile(wTmp.string(), bytes, error)) << error;
  EXPECT_EQ(bytes, "profile");
  ASSERT_TRUE(readWholeFile(w.string(), bytes, error)) << error;
  EXPECT_EQ(bytes, "new weights");
  size_t files = std::distance(fs::directory_iterator(directory),
                               fs::directory_iterator());
  EXPECT_EQ(files, 2u);

  auto mode = [](const fs::path &file) {
    struct stat status;
    return ::stat(file.string().c_str(), &status) == 0 ? status.st_mode & 07777
                                                       : mode_t(0);
  };
  ASSERT_EQ(::chmod(w.string().c_str(), 0640), 0);
  ASSERT_TRUE(writeFileAtomically(w.string(), "again", error)) << error;
  EXPECT_EQ(mode(w), mode_t(0640));
  mode_t mask = ::umask(022);
  fs::path made = directory / "made";
  bool written = writeFileAtomically(made.string(), "new", error);
  ::umask(mask);
  ASSERT_TRUE(written) << error;
  EXPECT_EQ(mode(made), mode_t(0644));
  fs::remove_all(directory);
}
