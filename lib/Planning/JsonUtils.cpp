//===- JsonUtils.cpp - Strict JSON reading for the planner ----------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//

#include "JsonUtils.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

namespace lethe::planning::json_utils {

json parseDocument(std::string_view text) {
  // The keys of each object being read, innermost last, and the first key
  // an object repeats.
  std::vector<std::set<std::string>> keys;
  std::optional<std::string> repeated;
  auto noteKeys = [&](int, json::parse_event_t event, json &parsed) {
    if (event == json::parse_event_t::object_start)
      keys.emplace_back();
    else if (event == json::parse_event_t::object_end && !keys.empty())
      keys.pop_back();
    else if (event == json::parse_event_t::key && !keys.empty() &&
             !keys.back().insert(parsed.get<std::string>()).second && !repeated)
      repeated = parsed.get<std::string>();
    return true;
  };
  json document;
  try {
    document = json::parse(text, noteKeys);
  } catch (const json::exception &jsonError) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at
    // line 3, column 5: ..." (or out_of_range.406 for a number beyond a
    // double's range); keep what follows the bracketed id.
    std::string message = jsonError.what();
    size_t start = message.find("] ");
    throw SchemaError("invalid JSON: " + (start == std::string::npos
                                              ? message
                                              : message.substr(start + 2)));
  }
  if (repeated)
    throw SchemaError("invalid JSON: an object names the field '" + *repeated +
                      "' twice");
  return document;
}

void checkKeys(const json &object, std::initializer_list<const char *> known,
               const std::string &where) {
  if (!object.is_object())
    throw SchemaError((where.empty() ? "the document" : where) +
                      " must be a JSON object");
  for (const auto &item : object.items())
    if (std::none_of(known.begin(), known.end(),
                     [&](const char *key) { return item.key() == key; }))
      throw SchemaError("unknown field '" + item.key() + "'" +
                        (where.empty() ? "" : " in " + where));
}

const json &getMember(const json &object, const char *key,
                      const std::string &where) {
  auto it = object.find(key);
  if (it == object.end())
    throw SchemaError(where + " has no '" + key + "'");
  return *it;
}

int64_t getInteger(const json &value, const std::string &what, int64_t minimum,
                   int64_t maximum) {
  if (!value.is_number_integer())
    throw SchemaError(what + " must be a whole number, got " + value.dump());
  // Unsigned values above 2^63 do not fit; compare before converting.
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > static_cast<uint64_t>(maximum))
    throw SchemaError(what + " must be at most " + std::to_string(maximum) +
                      ", got " + value.dump());
  int64_t number = value.get<int64_t>();
  if (number < minimum || number > maximum)
    throw SchemaError(what + " must be in [" + std::to_string(minimum) + ", " +
                      std::to_string(maximum) + "], got " + value.dump());
  return number;
}

double getNonNegative(const json &value, const std::string &what) {
  if (!value.is_number())
    throw SchemaError(what + " must be a number, got " + value.dump());
  double number = value.get<double>();
  if (!std::isfinite(number) || number < 0)
    throw SchemaError(what + " must be finite and not negative, got " +
                      value.dump());
  return number;
}

double getPositive(const json &value, const std::string &what) {
  if (!value.is_number())
    throw SchemaError(what + " must be a number, got " + value.dump());
  double number = value.get<double>();
  if (!std::isfinite(number) || number <= 0)
    throw SchemaError(what + " must be positive and finite, got " +
                      value.dump());
  return number;
}

std::string getString(const json &value, const std::string &what) {
  if (!value.is_string())
    throw SchemaError(what + " must be a string, got " + value.dump());
  return value.get<std::string>();
}

bool getBool(const json &value, const std::string &what) {
  if (!value.is_boolean())
    throw SchemaError(what + " must be true or false, got " + value.dump());
  return value.get<bool>();
}

} // namespace lethe::planning::json_utils
