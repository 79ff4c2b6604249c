//===- BenchOptions.h - Command lines of the benchmarks ---------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Every benchmark takes `--name=value` and `--switch` arguments, with lists
// as comma-separated items, and refuses anything else with its usage and
// exit code 2: a mistyped argument must not quietly run the default sweep.
// These helpers are the parsing they share.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_BENCH_BENCHOPTIONS_H
#define LETHE_BENCH_BENCHOPTIONS_H

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace lethe::bench {

/// The value of `arg` when it is `flag=value`, else null.
inline const char *flagValue(const char *arg, const char *flag) {
  size_t length = std::strlen(flag);
  if (std::strncmp(arg, flag, length) == 0 && arg[length] == '=')
    return arg + length + 1;
  return nullptr;
}

/// The comma-separated items of `text`; empty items are errors, reported
/// as an empty list.
inline std::vector<std::string> splitList(const char *text) {
  std::vector<std::string> items;
  std::string current;
  for (const char *c = text;; ++c) {
    if (*c != ',' && *c != '\0') {
      current += *c;
      continue;
    }
    if (current.empty())
      return {};
    items.push_back(current);
    current.clear();
    if (*c == '\0')
      return items;
  }
}

/// Whether all of `text` is one number.
inline bool parseNumber(const std::string &text, double &number) {
  char *end = nullptr;
  number = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0';
}

/// A non-empty comma-separated list of numbers in [`least`, `most`].
inline bool parseNumberList(const char *text, std::vector<double> &numbers,
                            double least, double most) {
  numbers.clear();
  for (const std::string &item : splitList(text)) {
    double number = 0;
    if (!parseNumber(item, number) || number < least || number > most)
      return false;
    numbers.push_back(number);
  }
  return !numbers.empty();
}

/// The same for whole numbers.
inline bool parseIntegerList(const char *text, std::vector<int> &numbers,
                             int least, int most) {
  std::vector<double> values;
  numbers.clear();
  if (!parseNumberList(text, values, least, most))
    return false;
  for (double value : values) {
    if (value != static_cast<int>(value))
      return false;
    numbers.push_back(static_cast<int>(value));
  }
  return true;
}

} // namespace lethe::bench

#endif // LETHE_BENCH_BENCHOPTIONS_H
