//===- JsonUtils.h - Strict JSON reading for the planner --------*- C++ -*-===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Helpers for the planner's JSON readers (profiles, problems, plans). They
// throw SchemaError with a message naming the field and what it must be; the
// public parse functions catch it and return it as their one-line error.
//
//===----------------------------------------------------------------------===//

#ifndef LETHE_LIB_PLANNING_JSONUTILS_H
#define LETHE_LIB_PLANNING_JSONUTILS_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

namespace lethe::planning::json_utils {

using json = nlohmann::json;

/// A document that parses as JSON but does not follow its schema.
struct SchemaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Parses `text`; on a syntax error throws SchemaError with nlohmann's
/// position and reason ("invalid JSON: parse error at line 3, column 5: ..."),
/// and likewise on a number beyond a double's range and on an object that
/// names a field twice (which JSON leaves undefined: nlohmann keeps the last,
/// so that `"strategy": 42, "strategy": "greedy"` would pass unseen).
json parseDocument(std::string_view text);

/// Throws when `object` (which must be an object; `where` names it) has a key
/// not in `known`, so that a misspelt field is not silently ignored. An empty
/// `where` stands for the whole document, whose errors name it already:
/// "unknown field 'k'" rather than "unknown field 'k' in <where>".
void checkKeys(const json &object, std::initializer_list<const char *> known,
               const std::string &where);

/// The member `key` of `object`; throws when it is missing.
const json &getMember(const json &object, const char *key,
                      const std::string &where);

/// `value` as a whole number in [minimum, maximum]; throws otherwise.
int64_t getInteger(const json &value, const std::string &what, int64_t minimum,
                   int64_t maximum);

/// `value` as a finite number >= 0; throws otherwise.
double getNonNegative(const json &value, const std::string &what);

/// `value` as a finite number > 0; throws otherwise.
double getPositive(const json &value, const std::string &what);

/// `value` as a string; throws otherwise.
std::string getString(const json &value, const std::string &what);

/// `value` as true or false; throws otherwise.
bool getBool(const json &value, const std::string &what);

} // namespace lethe::planning::json_utils

#endif // LETHE_LIB_PLANNING_JSONUTILS_H
