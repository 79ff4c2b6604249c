//===- FileIO.cpp - Whole-file reads and all-or-nothing writes ------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

using namespace lethe::driver;

bool lethe::driver::readWholeFile(const std::string &path, std::string &bytes,
                                  std::string &error) {
  struct stat status;
  if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
    error = "cannot read '" + path + "': it is a directory";
    return false;
  }
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  bytes.clear();
  char buffer[1 << 16];
  size_t count;
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    bytes.append(buffer, count);
  bool failed = std::ferror(file);
  int savedErrno = errno;
  std::fclose(file);
  if (failed) {
    error = "cannot read '" + path + "': " + std::strerror(savedErrno);
    return false;
  }
  return true;
}

namespace {

/// Writes `bytes` to `temporary`; false with an error naming `path` (the
/// file meant) when it cannot, the temporary removed.
bool writeTemporary(const std::string &path, const std::string &temporary,
                    const std::string &bytes, std::string &error) {
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  // errno is read only after a call that failed: an earlier call's (a stat
  // of a file not there yet) would name the wrong cause.
  bool written =
      std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  int savedErrno = written ? 0 : errno;
  if (std::fclose(file) != 0) {
    written = false;
    if (savedErrno == 0)
      savedErrno = errno;
  }
  if (!written) {
    std::remove(temporary.c_str());
    error = "cannot write '" + path + "': " + std::strerror(savedErrno);
    return false;
  }
  return true;
}

} // namespace

bool lethe::driver::writeFileAtomically(const std::string &path,
                                        const std::string &bytes,
                                        std::string &error) {
  return writeFilesAtomically({{path, bytes}}, error);
}

bool lethe::driver::writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files,
    std::string &error) {
  // A directory in a file's place would fail its rename after the earlier
  // files' (which cannot be undone): it is refused before anything is
  // written.
  for (const auto &[path, bytes] : files) {
    struct stat status;
    if (::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode)) {
      error = "cannot write '" + path + "': it is a directory";
      return false;
    }
  }
  for (size_t index = 0; index < files.size(); ++index) {
    const auto &[path, bytes] = files[index];
    if (!writeTemporary(path, path + ".tmp", bytes, error)) {
      for (size_t written = 0; written < index; ++written)
        std::remove((files[written].first + ".tmp").c_str());
      return false;
    }
  }
  // Renames do not fail for want of space; one that fails for another
  // reason (the path became a directory since the check) leaves the
  // earlier ones done.
  for (size_t index = 0; index < files.size(); ++index) {
    const std::string &path = files[index].first;
    std::string temporary = path + ".tmp";
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      int savedErrno = errno;
      for (size_t left = index; left < files.size(); ++left)
        std::remove((files[left].first + ".tmp").c_str());
      error = "cannot write '" + path + "': " + std::strerror(savedErrno);
      return false;
    }
  }
  return true;
}
