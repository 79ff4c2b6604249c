//===- FileIO.h - Whole-file reads and all-or-nothing writes --------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The driver's files (weights, profile, trace) are read whole and written
// all at once: a write goes to PATH.tmp and is renamed over PATH, so that a
// failure leaves no partial output file.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_DRIVER_FILEIO_H
#define LETHE_DRIVER_FILEIO_H

#include <string>

namespace lethe::driver {

/// Reads the file at `path` into `bytes`; false, with a one-line `error`
/// ("cannot read 'PATH': REASON"), when it cannot.
bool readWholeFile(const std::string &path, std::string &bytes,
                   std::string &error);

/// Writes `bytes` to `path` through `path`.tmp and a rename; false, with a
/// one-line `error`, when it cannot (the temporary is removed).
bool writeFileAtomically(const std::string &path, const std::string &bytes,
                         std::string &error);

} // namespace lethe::driver

#endif // LETHE_DRIVER_FILEIO_H
