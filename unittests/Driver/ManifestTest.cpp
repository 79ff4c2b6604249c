//===- ManifestTest.cpp - The manifest's checks ---------------------------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Each case corrupts one field of the test program's manifest and checks the
// one-line message.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "lethe_program.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>

using namespace lethe::driver;
using json = nlohmann::json;

namespace {

TEST(ManifestTest, ParsesTheTestProgram) {
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(lethe_program_manifest, manifest, error)) << error;
  EXPECT_EQ(manifest.function, "linear_step");
  EXPECT_EQ(manifest.arenaBytes, 3072u);
  EXPECT_EQ(manifest.hostPoolBytes, 256u);
  ASSERT_EQ(manifest.arguments.size(), 7u);
  EXPECT_EQ(manifest.arguments[2].kind, ArgumentKind::Label);
  EXPECT_EQ(manifest.arguments[2].integerBound, 3);
  EXPECT_EQ(manifest.arguments[1].integerBound, 10);
  EXPECT_EQ(manifest.arguments[3].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(manifest.stepArgument, 6);
  EXPECT_EQ(manifest.lossResult, 0u);
  EXPECT_EQ(manifest.results[2].updates, 4);
  ASSERT_EQ(manifest.ops.size(), 8u);
  EXPECT_EQ(manifest.ops[4].kind, "release");
  EXPECT_EQ(manifest.ops[4].valueName, "diff");
  EXPECT_EQ(manifest.ops[7].op, "lethe.momentum");
  EXPECT_EQ(*manifest.plan.strategy, "hand-written");
  EXPECT_EQ(manifest.ops[0].predictedSeconds, 2.5e-07);
  EXPECT_FALSE(manifest.ops[1].predictedSeconds.has_value());
}

struct Corruption {
  std::function<void(json &)> apply;
  std::string error;
};

TEST(ManifestTest, EveryCorruptionIsOneLine) {
  std::vector<Corruption> corruptions = {
      {[](json &m) { m = json::array(); }, "the manifest is not a JSON object"},
      {[](json &m) { m["format"] = "onnx"; },
       "format is 'onnx', not 'lethe-program'"},
      {[](json &m) { m.erase("format"); }, "the manifest has no 'format'"},
      {[](json &m) { m["version"] = 2; },
       "version 2 is not the version this driver reads (1)"},
      {[](json &m) { m["function"] = 3; }, "function must be a string"},
      {[](json &m) { m["arena_bytes"] = -1; },
       "arena_bytes is -1, less than 0"},
      {[](json &m) { m["arena_bytes"] = 1540; },
       "arguments[6] (offset 1536, 8 bytes) ends past the arena (1540 bytes)"},
      {[](json &m) { m["arena_bytes"] = 2000; },
       "results[0] (offset 2048, 4 bytes) ends past the arena (2000 bytes)"},
      {[](json &m) { m["alignment"] = 3; },
       "alignment 3 is not a power of two"},
      {[](json &m) { m["host_pool_bytes"] = "big"; },
       "host_pool_bytes must be an integer"},
      {[](json &m) { m["arguments"] = 1; }, "arguments must be an array"},
      {[](json &m) { m["arguments"][1]["index"] = 5; },
       "arguments[1].index is 5, expected 1 (entries are listed in index "
       "order)"},
      {[](json &m) { m["arguments"][0]["kind"] = "input"; },
       "arguments[0].kind 'input' is not data, label, parameter, state or "
       "step"},
      {[](json &m) { m["arguments"][0]["dtype"] = "float"; },
       "arguments[0].dtype 'float' is not a runtime dtype"},
      {[](json &m) {
         m["arguments"][0]["shape"] = {4, -3};
       },
       "arguments[0].shape[1] must be a non-negative integer"},
      {[](json &m) { m["arguments"][0]["bytes"] = 40; },
       "arguments[0].bytes is 40, but f32 [4, 3] needs 48"},
      {[](json &m) { m["arguments"][1]["offset"] = 32; },
       "arguments 0 and 1 overlap in the arena"},
      {[](json &m) { m["arguments"][2]["integer_bound"] = 0; },
       "arguments[2].integer_bound is 0, less than 1"},
      {[](json &m) {
         m["arguments"][6]["dtype"] = "i32";
         m["arguments"][6]["bytes"] = 4;
       },
       "arguments[6] is the step counter but is i32 [], not i64 []"},
      {[](json &m) {
         m["arguments"][5]["kind"] = "step";
         m["arguments"][5]["dtype"] = "i64";
         m["arguments"][5]["bytes"] = 8;
       },
       "arguments[6] is a second step argument (the first is argument 5)"},
      {[](json &m) { m["arguments"][4]["name"] = "w"; },
       "arguments[4].name 'w' is argument 3's too (weights and data files "
       "are found by name)"},
      {[](json &m) { m["arguments"][3].erase("name"); },
       "arguments[3] has no 'name'"},
      {[](json &m) { m["arguments"][3]["name"] = ""; },
       "arguments[3].name is empty"},
      {[](json &m) { m["arguments"][2] = 7; },
       "arguments[2] must be an object"},
      {[](json &m) {
         m["arguments"][0]["shape"] = {int64_t(1) << 40, int64_t(1) << 40};
       },
       "arguments[0].shape is too large"},
      {[](json &m) { m["arguments"][2]["ignore_index"] = "none"; },
       "arguments[2].ignore_index must be an integer"},
      {[](json &m) { m["results"][0]["loss"] = false; },
       "no result has \"loss\": true"},
      {[](json &m) { m["results"][1]["loss"] = true; },
       "results[1] is a second loss (the first is result 0)"},
      {[](json &m) { m["results"][0]["loss"] = 1; },
       "results[0].loss must be true or false"},
      {[](json &m) { m["results"][0]["dtype"] = "i32"; },
       "results[0] is the loss but is i32 [], not one floating-point element"},
      {[](json &m) { m["results"][1]["updates"] = 9; },
       "results[1] updates argument 9, but there are 7"},
      {[](json &m) { m["results"][1]["updates"] = 6; },
       "results[1] updates the step argument 6; the driver counts the steps "
       "itself"},
      {[](json &m) { m["results"][1]["updates"] = 4; },
       "results[2] updates argument 4, which an earlier result updates too"},
      {[](json &m) { m["results"][1]["updates"] = 0; },
       "results[1] is f32 [3, 2] but updates argument 0 ('x'), which is f32 "
       "[4, 3]"},
      {[](json &m) { m["results"][1]["offset"] = 1024; },
       "results 1 and 2 overlap in the arena"},
      {[](json &m) { m["results"][1] = "w"; }, "results[1] must be an object"},
      {[](json &m) { m.erase("plan"); }, "the manifest has no 'plan'"},
      {[](json &m) { m["plan"] = json::array(); }, "plan must be an object"},
      {[](json &m) { m["plan"]["strategy"] = 3; },
       "plan.strategy must be a string or null"},
      {[](json &m) { m["plan"]["budget_bytes"] = "lots"; },
       "plan.budget_bytes must be a non-negative number or null"},
      {[](json &m) { m["ops"][0]["kind"] = "launch"; },
       "ops[0].kind 'launch' is not compute, recompute, offload, prefetch or "
       "release"},
      {[](json &m) { m["ops"][0].erase("node"); }, "ops[0] has no 'node'"},
      {[](json &m) { m["ops"][1] = nullptr; }, "ops[1] must be an object"},
      {[](json &m) { m["ops"][3].erase("name"); }, "ops[3] has no 'name'"},
      {[](json &m) { m["ops"][7]["live_bytes"] = 1.5; },
       "ops[7].live_bytes must be an integer"},
      {[](json &m) { m["ops"][2]["predicted_seconds"] = -1; },
       "ops[2].predicted_seconds must be a non-negative number or null"},
  };
  for (const Corruption &corruption : corruptions) {
    json document = json::parse(lethe_program_manifest);
    corruption.apply(document);
    Manifest manifest;
    std::string error;
    EXPECT_FALSE(parseManifest(document.dump(), manifest, error))
        << corruption.error;
    EXPECT_EQ(error, corruption.error);
  }
  Manifest manifest;
  std::string error;
  EXPECT_FALSE(parseManifest("{\"format\": ", manifest, error));
  EXPECT_EQ(error, "the manifest is not valid JSON");
}

TEST(ManifestTest, UnknownFieldsAndNullPlanNumbersAreAccepted) {
  json document = json::parse(lethe_program_manifest);
  document["compiler"] = "lethec 0.1";
  document["arguments"][0]["layout"] = "row-major";
  document["plan"]["budget_bytes"] = nullptr;
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(document.dump(), manifest, error)) << error;
  EXPECT_FALSE(manifest.plan.budgetBytes.has_value());
}

/// A manifest of parameters of `bytes` bytes each at `arguments` and
/// results at `results` updating `updates` (the planner's view only).
Manifest stateManifest(const std::vector<uint64_t> &arguments,
                       const std::vector<uint64_t> &results,
                       const std::vector<int64_t> &updates,
                       uint64_t bytes = 256) {
  Manifest manifest;
  for (uint64_t offset : arguments) {
    ManifestArgument argument;
    argument.kind = ArgumentKind::Parameter;
    argument.offset = offset;
    argument.bytes = bytes;
    manifest.arguments.push_back(argument);
  }
  for (size_t index = 0; index < results.size(); ++index) {
    ManifestResult result;
    result.offset = results[index];
    result.bytes = bytes;
    result.updates = updates[index];
    manifest.results.push_back(result);
  }
  return manifest;
}

TEST(ManifestTest, StateStaysOnTheDevice) {
  // The test program: w's update is copied from 2816 to 768, w.velocity's
  // is in place; the data, lr and the step are written every step.
  Manifest manifest;
  std::string error;
  ASSERT_TRUE(parseManifest(lethe_program_manifest, manifest, error)) << error;
  StateUpdates updates = planStateUpdates(manifest);
  EXPECT_EQ(updates.deviceCopies, std::vector<size_t>{1});
  EXPECT_TRUE(updates.throughHost.empty());
  EXPECT_EQ(updates.onDevice,
            (std::vector<bool>{false, false, false, true, true, false, false}));
}

TEST(ManifestTest, StateCopiesNeverOverwriteAResultStillToCopy) {
  // p's update lies in q's slot, q's elsewhere: p's copy reads before q's
  // writes, whatever their order in the manifest.
  StateUpdates chain =
      planStateUpdates(stateManifest({0, 256}, {1024, 256}, {1, 0}));
  EXPECT_EQ(chain.deviceCopies, (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(chain.throughHost.empty());
  // Each update in the other's slot: a cycle, through the host; a third,
  // independent update is still copied.
  StateUpdates cycle =
      planStateUpdates(stateManifest({0, 256, 512}, {256, 0, 2048}, {0, 1, 2}));
  EXPECT_EQ(cycle.deviceCopies, std::vector<size_t>{2});
  EXPECT_EQ(cycle.throughHost, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(cycle.onDevice, (std::vector<bool>{false, false, true}));
  // An update overlapping its own argument, not in place: through the
  // host; results that update nothing are left alone.
  StateUpdates shifted =
      planStateUpdates(stateManifest({0, 512}, {128, 1024}, {0, -1}));
  EXPECT_TRUE(shifted.deviceCopies.empty());
  EXPECT_EQ(shifted.throughHost, std::vector<size_t>{0});
  EXPECT_EQ(shifted.onDevice, (std::vector<bool>{false, false}));
}

} // namespace
