//===- FileIO.h - Whole-file reads and all-or-nothing writes --------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The driver's files (weights, profile, trace) are read whole and written
// all at once: a write goes to a new file PATH.tmp.PID.N (a suffix no file
// has yet, so that none of the user's is overwritten) and is renamed over
// PATH, so that a failure leaves no partial output file. A PATH that is a
// symbolic link is followed (the file it leads to is replaced, the link
// kept), and a PATH that is no regular file (a device such as /dev/null, a
// FIFO) is written in place: a rename would put a regular file where it
// stands.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_FILEIO_H
#define LETHE_DRIVER_FILEIO_H

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lethe::driver {

/// `text` read from a file, fit to quote in a one-line message: bytes
/// outside printable ASCII as \xNN, and at most 64 of them, then "...".
std::string printable(std::string_view text);

/// Reads the file at `path` into `bytes`; false, with a one-line `error`
/// ("cannot read 'PATH': REASON"), when it cannot. With a `magic`, a file
/// whose first bytes are not it is read no further than they: `bytes` then
/// holds what was read, for the caller's parser to call a bad magic, so that
/// a large file of another kind (or /dev/zero, which never ends) is refused
/// at once.
bool readWholeFile(const std::string &path, std::string &bytes,
                   std::string &error, std::string_view magic = {});

/// Writes `bytes` to `path` through a temporary and a rename; false, with a
/// one-line `error`, when it cannot (the temporary is removed).
bool writeFileAtomically(const std::string &path, const std::string &bytes,
                         std::string &error);

/// Writes every (path, bytes) of `files` all or nothing: each to a
/// temporary beside it first, then renames them all once all are written;
/// false, with a one-line `error`, when one cannot be written (the
/// temporaries are removed, and no path is touched, but a device or FIFO
/// written in place before the failure). Two paths that name one file
/// (through links) are refused before anything is written (the driver
/// refuses equal paths before training already).
bool writeFilesAtomically(
    const std::vector<std::pair<std::string, std::string>> &files,
    std::string &error);

} // namespace lethe::driver

#endif // LETHE_DRIVER_FILEIO_H
