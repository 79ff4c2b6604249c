//===- FileIO.cpp - Whole-file reads and all-or-nothing writes ------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace lethe::driver;

std::string lethe::driver::printable(std::string_view text) {
  constexpr size_t kMostShown = 64;
  std::string shown;
  for (size_t index = 0; index < text.size(); ++index) {
    if (index == kMostShown)
      return shown + "...";
    unsigned char byte = static_cast<unsigned char>(text[index]);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      shown += static_cast<char>(byte);
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    shown += "\\x";
    shown += kHex[byte >> 4];
    shown += kHex[byte & 15];
  }
  return shown;
}

bool lethe::driver::readWholeFile(const std::string &path, std::string &bytes,
                                  std::string &error, std::string_view magic) {
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
  while ((count = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    bytes.append(buffer, count);
    size_t compared = std::min(bytes.size(), magic.size());
    if (bytes.compare(0, compared, magic, 0, compared) != 0)
      break;
  }
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

/// Where the bytes meant for a path go.
struct Destination {
  /// The file replaced through a temporary and a rename: the path, or what
  /// its symbolic links lead to. Empty for a file written in place.
  std::string replaced;
  /// Whether the path is written in place: a device, a FIFO or the like,
  /// a path under /dev or /proc (/dev/stdout leads to whatever standard
  /// output is, a file too), or a link to a file that does not exist yet
  /// (opening it makes it).
  bool inPlace = false;
  /// Whether writing makes the file a dangling link leads to (removed again
  /// when the write fails), and the path the link names, as seen from here
  /// (a relative one taken from the link's directory).
  bool makesLinkTarget = false;
  std::string linkTarget;
};

/// Whether `path` lies under /dev or /proc.
bool isSystemPath(const std::string &path) {
  return path.rfind("/dev/", 0) == 0 || path.rfind("/proc/", 0) == 0;
}

/// Where the bytes meant for `path` go; false with an error when the path
/// is (or leads to) a directory.
bool findDestination(const std::string &path, Destination &destination,
                     std::string &error) {
  struct stat status;
  if (::lstat(path.c_str(), &status) != 0) {
    destination.replaced = path; // a new file (or one that cannot be made)
    return true;
  }
  std::string target = path;
  if (S_ISLNK(status.st_mode)) {
    char link[PATH_MAX];
    ssize_t length = ::readlink(path.c_str(), link, sizeof(link) - 1);
    std::string named = length > 0 ? std::string(link, size_t(length)) : "";
    bool system = isSystemPath(path) || isSystemPath(named);
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved) || ::stat(resolved, &status) != 0) {
      destination.inPlace = true; // a dangling link: opening makes its file
      destination.makesLinkTarget = true;
      size_t slash = path.rfind('/');
      destination.linkTarget =
          named.empty() || named[0] == '/' || slash == std::string::npos
              ? named
              : path.substr(0, slash + 1) + named;
      return true;
    }
    if (system && !S_ISDIR(status.st_mode)) {
      destination.inPlace = true;
      return true;
    }
    target = resolved;
  }
  if (S_ISDIR(status.st_mode)) {
    error = "cannot write '" + path + "': it is a directory";
    return false;
  }
  if (S_ISREG(status.st_mode) && !isSystemPath(path))
    destination.replaced = target;
  else
    destination.inPlace = true;
  return true;
}

/// What identifies the file `path` names: its device and inode when it
/// exists, else its directory's real path and its name.
std::string identify(const std::string &path) {
  struct stat status;
  if (::stat(path.c_str(), &status) == 0)
    return "inode " + std::to_string(status.st_dev) + ":" +
           std::to_string(status.st_ino);
  size_t slash = path.rfind('/');
  std::string directory =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  char resolved[PATH_MAX];
  if (!::realpath(directory.c_str(), resolved))
    return "path " + path;
  return "path " + std::string(resolved) + "/" +
         (slash == std::string::npos ? path : path.substr(slash + 1));
}

/// Writes `bytes` to `stream` and closes it; false with an error naming
/// `path` (the file meant) when it cannot.
bool writeAndClose(const std::string &path, std::FILE *stream,
                   const std::string &bytes, std::string &error) {
  // errno is read only after a call that failed: an earlier call's (a stat
  // of a file not there yet) would name the wrong cause.
  bool written =
      std::fwrite(bytes.data(), 1, bytes.size(), stream) == bytes.size();
  int savedErrno = written ? 0 : errno;
  if (std::fclose(stream) != 0) {
    written = false;
    if (savedErrno == 0)
      savedErrno = errno;
  }
  if (!written)
    error = "cannot write '" + path + "': " + std::strerror(savedErrno);
  return written;
}

/// Writes `bytes` to `file`, which is created or truncated; false with an
/// error naming `path` (the file meant) when it cannot.
bool writeFile(const std::string &path, const std::string &file,
               const std::string &bytes, std::string &error) {
  std::FILE *stream = std::fopen(file.c_str(), "wb");
  if (!stream) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  return writeAndClose(path, stream, bytes, error);
}

/// Writes `bytes` to a new file beside `replaced` (the file they are meant
/// to replace), named `replaced`.tmp.PID.N with the first N no file has, so
/// that no file of the user's is overwritten, and with the mode of the file
/// replaced (where the file system allows it) or, for a new one, the mode a
/// new file gets (0666 less the umask). Sets `temporary` to its name; false
/// with an error naming `path` (the file meant) when it cannot, nothing left.
bool writeTemporary(const std::string &path, const std::string &replaced,
                    const std::string &bytes, std::string &temporary,
                    std::string &error) {
  std::string name;
  int descriptor = -1;
  for (unsigned attempt = 0; descriptor < 0; ++attempt) {
    name = replaced + ".tmp." + std::to_string(::getpid()) + "." +
           std::to_string(attempt);
    descriptor =
        ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (descriptor < 0 && (errno != EEXIST || attempt == 1000)) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      return false;
    }
  }
  // The mode is copied where the file system allows it (not on vfat, say).
  struct stat status;
  if (::stat(replaced.c_str(), &status) == 0)
    (void)::fchmod(descriptor, status.st_mode & 07777);
  std::FILE *stream = ::fdopen(descriptor, "wb");
  if (!stream) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    ::close(descriptor);
    std::remove(name.c_str());
    return false;
  }
  if (!writeAndClose(path, stream, bytes, error)) {
    std::remove(name.c_str());
    return false;
  }
  temporary = name;
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
  std::vector<Destination> destinations(files.size());
  for (size_t index = 0; index < files.size(); ++index)
    if (!findDestination(files[index].first, destinations[index], error))
      return false;
  // Two paths may name one file through links: each would overwrite the
  // other's bytes. Devices and streams written in place take each write in
  // turn (say /dev/stdout and /dev/stderr, both the terminal).
  std::vector<std::pair<std::string, size_t>> identities;
  for (size_t index = 0; index < files.size(); ++index) {
    const std::string &path = files[index].first;
    if (destinations[index].makesLinkTarget) {
      // The file the dangling link will make.
      if (!destinations[index].linkTarget.empty())
        identities.emplace_back(identify(destinations[index].linkTarget),
                                index);
      continue;
    }
    if (destinations[index].inPlace)
      continue;
    identities.emplace_back(identify(path), index);
  }
  for (size_t first = 0; first < identities.size(); ++first)
    for (size_t second = first + 1; second < identities.size(); ++second)
      if (identities[first].first == identities[second].first &&
          identities[first].second != identities[second].second) {
        error = "'" + files[identities[first].second].first + "' and '" +
                files[identities[second].second].first +
                "' name the same file; give each its own";
        return false;
      }
  // The temporaries of the files replaced, then the files written in place,
  // then the renames.
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&]() {
    for (const std::string &temporary : temporaries)
      std::remove(temporary.c_str());
  };
  for (size_t index = 0; index < files.size(); ++index) {
    if (destinations[index].inPlace)
      continue;
    std::string temporary;
    if (!writeTemporary(files[index].first, destinations[index].replaced,
                        files[index].second, temporary, error)) {
      removeTemporaries();
      return false;
    }
    temporaries.push_back(temporary);
  }
  for (size_t index = 0; index < files.size(); ++index)
    if (destinations[index].inPlace &&
        !writeFile(files[index].first, files[index].first, files[index].second,
                   error)) {
      removeTemporaries();
      char made[PATH_MAX];
      if (destinations[index].makesLinkTarget &&
          ::realpath(files[index].first.c_str(), made))
        std::remove(made);
      return false;
    }
  // Renames do not fail for want of space; one that fails for another
  // reason (the path became a directory since the check) leaves the
  // earlier ones done.
  size_t renamed = 0;
  for (size_t index = 0; index < files.size(); ++index) {
    if (destinations[index].inPlace)
      continue;
    const std::string &temporary = temporaries[renamed++];
    if (std::rename(temporary.c_str(), destinations[index].replaced.c_str()) !=
        0) {
      int savedErrno = errno;
      for (size_t left = renamed - 1; left < temporaries.size(); ++left)
        std::remove(temporaries[left].c_str());
      error = "cannot write '" + files[index].first +
              "': " + std::strerror(savedErrno);
      return false;
    }
  }
  return true;
}
