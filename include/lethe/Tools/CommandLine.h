//===- CommandLine.h - One-line errors of the tools' options -*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// LLVM's option parser reports a mistake on two or three lines of its own
// ("Unknown command line argument '--los'.  Try: 'lethec --help'", then
// "Did you mean '--loss'?") and exits. Lethe's tools report every error on
// one line, "TOOL: error: ...": parseCommandLine parses as
// cl::ParseCommandLineOptions does and, on a mistake, prints LLVM's lines
// joined into one (POSIX: it captures stderr while LLVM parses), and
// installFatalErrorHandler gives LLVM's fatal errors the same form.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_TOOLS_COMMANDLINE_H
#define LETHE_TOOLS_COMMANDLINE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace lethe::tools {

/// Parses the command line (cl::ParseCommandLineOptions with `overview`);
/// on a mistake prints one line, "TOOL: error: " and LLVM's messages (each
/// without its "TOOL: " prefix) joined by spaces, and returns false: the
/// caller exits with 1. LLVM writes some of its messages (a value an option
/// cannot take) straight to stderr rather than to the stream it is given,
/// so stderr is captured while it parses.
inline bool parseCommandLine(int argc, char **argv, llvm::StringRef overview) {
  std::string messages;
  llvm::raw_string_ostream stream(messages);
  llvm::errs().flush();
  std::FILE *captured = std::tmpfile();
  int savedStderr = captured ? ::dup(STDERR_FILENO) : -1;
  bool redirected =
      savedStderr >= 0 && ::dup2(::fileno(captured), STDERR_FILENO) >= 0;
  bool parsed =
      llvm::cl::ParseCommandLineOptions(argc, argv, overview, &stream);
  llvm::errs().flush();
  if (redirected) {
    ::dup2(savedStderr, STDERR_FILENO);
    std::rewind(captured);
    char buffer[4096];
    std::string direct;
    size_t count;
    while ((count = std::fread(buffer, 1, sizeof(buffer), captured)) > 0)
      direct.append(buffer, count);
    messages = direct + messages;
  }
  if (savedStderr >= 0)
    ::close(savedStderr);
  if (captured)
    std::fclose(captured);
  if (parsed) {
    llvm::errs() << messages; // warnings, if any, as LLVM wrote them
    return true;
  }
  std::string tool = llvm::sys::path::filename(argv[0]).str();
  std::string prefix = tool + ": ";
  std::string joined;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(messages).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    line = line.trim();
    line.consume_front(prefix);
    if (line.empty())
      continue;
    joined += (joined.empty() ? "" : " ") + line.str();
  }
  if (joined.empty())
    joined = "the command line is not valid (see " + tool + " --help)";
  llvm::errs() << tool << ": error: " << joined << "\n";
  return false;
}

/// Makes LLVM's fatal errors one line in the tool's form, "TOOL: error:
/// REASON", where LLVM prints "LLVM ERROR: REASON" (an output stream that
/// could not be written, such as -o /dev/full, reports that way when it is
/// closed); LLVM then exits with 1 (or aborts, for an internal error that
/// asks for a crash report). Likewise an allocation that fails (a
/// tensor larger than the machine's memory), where LLVM would print "LLVM
/// ERROR: out of memory" and abort with a stack dump: the files registered
/// for removal on a signal (LLVM's ToolOutputFile) are removed, and the
/// tool exits with 1.
inline void installFatalErrorHandler(const char *argv0) {
  static std::string tool;
  tool = llvm::sys::path::filename(argv0).str();
  llvm::install_fatal_error_handler(
      [](void *, const char *reason, bool) {
        std::string line = tool + ": error: " + reason + "\n";
        std::fwrite(line.data(), 1, line.size(), stderr);
        std::fflush(stderr);
      },
      nullptr);
  // Memory is short here: the line is put together without allocating.
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *reason, bool) {
        char line[512];
        int length = std::snprintf(
            line, sizeof(line),
            "%s: error: out of memory (%s): the tensors do not fit in this "
            "machine's memory\n",
            tool.c_str(), reason);
        if (length > 0)
          (void)!::write(STDERR_FILENO, line,
                         std::min<size_t>(length, sizeof(line) - 1));
        llvm::sys::RunInterruptHandlers();
        std::_Exit(1);
      },
      nullptr);
}

} // namespace lethe::tools

#endif // LETHE_TOOLS_COMMANDLINE_H
