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

bool lethe::driver::writeFileAtomically(const std::string &path,
                                        const std::string &bytes,
                                        std::string &error) {
  std::string temporary = path + ".tmp";
  std::FILE *file = std::fopen(temporary.c_str(), "wb");
  if (!file) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool written =
      std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  int savedErrno = errno;
  written &= std::fclose(file) == 0;
  if (!written) {
    if (savedErrno == 0)
      savedErrno = errno;
    std::remove(temporary.c_str());
    error = "cannot write '" + path + "': " + std::strerror(savedErrno);
    return false;
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    savedErrno = errno;
    std::remove(temporary.c_str());
    error = "cannot write '" + path + "': " + std::strerror(savedErrno);
    return false;
  }
  return true;
}
