//===- DriverTest.cpp - The planned executable's driver, end to end -------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// Runs lethe-driver-test-program (TestProgram.cpp linked with the driver) as
// a user would and checks its output, its files and its errors against the
// same step computed directly (computeTestStep). Corrupt manifests are run
// in process through runDriver, as no executable can carry one.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"
#include "NpyFile.h"
#include "RandomData.h"
#include "TestProgram.h"
#include "WeightsFile.h"

#include "lethe_program.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

using namespace lethe::driver;
using namespace lethe::driver::test;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int64_t kXSize = kBatch * kInputs, kYSize = kBatch * kOutputs,
                  kWSize = kInputs * kOutputs;

std::string bytesOf(const void *data, size_t size) {
  return std::string(static_cast<const char *>(data), size);
}

std::string readText(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
}

/// What a run printed and returned.
struct RunResult {
  int exitCode = -1;
  std::string out, err;
};

/// The initial weights the tests start from.
struct Weights {
  float w[kWSize] = {0.5f, -0.25f, 0.125f, 1.0f, -0.75f, 0.375f};
  float v[kWSize] = {0, 0, 0, 0, 0, 0};
  float lr = 0.1f;

  std::vector<WeightsTensor> tensors() const {
    return {{"w", LETHE_RT_F32, {kInputs, kOutputs}, bytesOf(w, sizeof(w))},
            {"w.velocity",
             LETHE_RT_F32,
             {kInputs, kOutputs},
             bytesOf(v, sizeof(v))},
            {"lr", LETHE_RT_F32, {}, bytesOf(&lr, sizeof(lr))}};
  }
};

class DriverTest : public testing::Test {
protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "lethe-driver-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory = pattern;
    // The program under the name `prog` in the scratch directory, so that
    // its default weights file is prog.weights there.
    fs::create_symlink(fs::absolute(LETHE_TEST_PROGRAM), path("prog"));
    std::string error;
    ASSERT_TRUE(
        writeWeightsFile(path("prog.weights"), Weights().tensors(), error))
        << error;
  }
  void TearDown() override { fs::remove_all(directory); }

  std::string path(const std::string &name) const {
    return directory + "/" + name;
  }

  /// Runs `prog ARGUMENTS` (with `environment` prepended to the command).
  RunResult run(const std::string &arguments,
                const std::string &environment = "") {
    std::string command = "cd '" + directory + "' && " + environment +
                          " ./prog " + arguments + " >out.txt 2>err.txt";
    int status = std::system(command.c_str());
    RunResult result;
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = readText(path("out.txt"));
    result.err = readText(path("err.txt"));
    return result;
  }

  /// Expects `arguments` to fail with one error line containing `message`,
  /// having printed nothing else and written no file named in `noFiles`.
  void expectError(const std::string &arguments, const std::string &message,
                   const std::vector<std::string> &noFiles = {},
                   const std::string &environment = "") {
    RunResult result = run(arguments, environment);
    EXPECT_EQ(result.exitCode, 1) << arguments;
    EXPECT_EQ(result.err.rfind("prog: error: ", 0), 0u) << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << arguments << "\n"
                                                           << result.err;
    EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1)
        << result.err;
    for (const std::string &file : noFiles) {
      EXPECT_FALSE(fs::exists(path(file))) << file;
      // Nor a temporary of it (FILE.tmp.PID.N).
      for (const auto &entry : fs::directory_iterator(directory))
        EXPECT_NE(entry.path().filename().string().rfind(file + ".tmp", 0), 0u)
            << entry.path();
    }
  }

  std::string directory;
};

/// The losses printed by a run, as printed.
std::vector<std::string> printedLosses(const std::string &out) {
  std::vector<std::string> losses;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("step ", 0) != 0)
      continue;
    size_t at = line.find("  loss ");
    losses.push_back(line.substr(at + 7, line.find(' ', at + 7) - at - 7));
  }
  return losses;
}

std::string formatLoss(float loss) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.7g", loss);
  return buffer;
}

/// The test program's random data for `seed`: x, y (and c, drawn but
/// unused), as lethe-run --random-inputs draws them.
void drawData(uint64_t seed, float *x, float *y) {
  std::mt19937_64 rng(seed);
  std::string data;
  drawRandomTensor(rng, LETHE_RT_F32, {kBatch, kInputs}, 10, data);
  std::memcpy(x, data.data(), data.size());
  drawRandomTensor(rng, LETHE_RT_F32, {kBatch, kOutputs}, 10, data);
  std::memcpy(y, data.data(), data.size());
}

/// Reads w and its velocity from a weights file.
void readTrained(const std::string &file, float *w, float *v, float *lr) {
  std::vector<WeightsTensor> tensors;
  std::string error;
  ASSERT_TRUE(readWeightsFile(file, tensors, error)) << error;
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "w");
  EXPECT_EQ(tensors[1].name, "w.velocity");
  EXPECT_EQ(tensors[2].name, "lr");
  std::memcpy(w, tensors[0].data.data(), sizeof(float) * kWSize);
  std::memcpy(v, tensors[1].data.data(), sizeof(float) * kWSize);
  std::memcpy(lr, tensors[2].data.data(), sizeof(float));
}

TEST_F(DriverTest, TrainsBitExactlyWithRandomData) {
  RunResult result = run("--steps 5 --seed 7 --save-weights trained.weights");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(result.err, "");

  float x[kXSize], y[kYSize];
  drawData(7, x, y);
  Weights weights;
  std::vector<std::string> expectedLosses;
  for (int64_t step = 0; step < 5; ++step)
    expectedLosses.push_back(formatLoss(
        computeTestStep(x, y, weights.w, weights.v, weights.lr, step)));
  EXPECT_EQ(printedLosses(result.out), expectedLosses) << result.out;
  EXPECT_NE(result.out.find("step 1  loss "), std::string::npos);
  EXPECT_NE(result.out.find(" ms  peak device 3072 bytes\n"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("trained 5 steps of linear_step in "),
            std::string::npos)
      << result.out;

  float w[kWSize], v[kWSize], lr;
  readTrained(path("trained.weights"), w, v, &lr);
  EXPECT_EQ(std::memcmp(w, weights.w, sizeof(w)), 0);
  EXPECT_EQ(std::memcmp(v, weights.v, sizeof(v)), 0);
  EXPECT_EQ(lr, weights.lr);
  // The loss goes down.
  EXPECT_LT(std::stod(expectedLosses.back()), std::stod(expectedLosses[0]));
}

TEST_F(DriverTest, SavedWeightsContinueTraining) {
  // momentum's beta is 1, so a run restarted at step 0 continues exactly:
  // 3 steps then 2 more are 5 steps.
  ASSERT_EQ(run("--steps 3 --save-weights a.weights").exitCode, 0);
  RunResult second =
      run("--steps 2 --weights a.weights --save-weights b.weights");
  ASSERT_EQ(second.exitCode, 0) << second.err;
  ASSERT_EQ(run("--steps 5 --save-weights c.weights").exitCode, 0);
  EXPECT_EQ(readText(path("b.weights")), readText(path("c.weights")));
  // And a file saved and read back is the same bytes.
  ASSERT_EQ(run("--steps 1 --weights a.weights --save-weights d.weights "
                "--seed 3")
                .exitCode,
            0);
  std::vector<WeightsTensor> tensors;
  std::string error, bytes;
  ASSERT_TRUE(readWeightsFile(path("d.weights"), tensors, error));
  ASSERT_TRUE(serializeWeights(tensors, bytes, error));
  EXPECT_EQ(bytes, readText(path("d.weights")));
}

TEST_F(DriverTest, ReadsDataFromNpyFilesWithBatches) {
  fs::create_directory(path("data"));
  // x holds two batches: step i uses batch i mod 2.
  float x[2 * kXSize], y[kYSize];
  for (int64_t i = 0; i < 2 * kXSize; ++i)
    x[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  for (int64_t i = 0; i < kYSize; ++i)
    y[i] = 0.2f * static_cast<float>(i % 3);
  int32_t c[kBatch] = {0, 1, 2, 0};
  writeText(
      path("data/x.npy"),
      serializeNpy(LETHE_RT_F32, {2 * kBatch, kInputs}, bytesOf(x, sizeof(x))));
  writeText(path("data/y.npy"), serializeNpy(LETHE_RT_F32, {kBatch, kOutputs},
                                             bytesOf(y, sizeof(y))));
  writeText(path("data/c.npy"),
            serializeNpy(LETHE_RT_I32, {kBatch}, bytesOf(c, sizeof(c))));
  RunResult result = run("--steps 3 --data data --save-weights t.weights");
  ASSERT_EQ(result.exitCode, 0) << result.err;

  Weights weights;
  std::vector<std::string> expectedLosses;
  for (int64_t step = 0; step < 3; ++step)
    expectedLosses.push_back(formatLoss(computeTestStep(
        x + (step % 2) * kXSize, y, weights.w, weights.v, weights.lr, step)));
  EXPECT_EQ(printedLosses(result.out), expectedLosses);
  float w[kWSize], v[kWSize], lr;
  readTrained(path("t.weights"), w, v, &lr);
  EXPECT_EQ(std::memcmp(w, weights.w, sizeof(w)), 0);
  EXPECT_EQ(std::memcmp(v, weights.v, sizeof(v)), 0);
}

TEST_F(DriverTest, TrainsFromRandomWeightsWithoutAFile) {
  // The weights --random-weights 5 draws, by the rule RandomData.h states:
  // w (f32 [3, 2], fan in 2) uniform in [-1/sqrt(2), 1/sqrt(2)), its velocity
  // (state) zero, lr (f32 [], fan in 1) uniform in [-1, 1), in that order.
  std::mt19937_64 rng(5);
  Weights weights;
  std::uniform_real_distribution<double> wDistribution(-1 / std::sqrt(2.0),
                                                       1 / std::sqrt(2.0));
  for (float &value : weights.w)
    value = static_cast<float>(wDistribution(rng));
  for (float &value : weights.v)
    value = 0;
  std::uniform_real_distribution<double> lrDistribution(-1, 1);
  weights.lr = static_cast<float>(lrDistribution(rng));

  fs::remove(path("prog.weights"));
  RunResult result =
      run("--steps 3 --seed 7 --random-weights 5 --save-weights r.weights");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  float x[kXSize], y[kYSize];
  drawData(7, x, y);
  Weights expected = weights;
  std::vector<std::string> expectedLosses;
  for (int64_t step = 0; step < 3; ++step)
    expectedLosses.push_back(formatLoss(
        computeTestStep(x, y, expected.w, expected.v, expected.lr, step)));
  EXPECT_EQ(printedLosses(result.out), expectedLosses) << result.out;
  float w[kWSize], v[kWSize], lr;
  readTrained(path("r.weights"), w, v, &lr);
  EXPECT_EQ(std::memcmp(w, expected.w, sizeof(w)), 0);
  EXPECT_EQ(std::memcmp(v, expected.v, sizeof(v)), 0);
  EXPECT_EQ(lr, weights.lr);

  // Another seed draws other weights.
  RunResult other = run("--steps 3 --seed 7 --random-weights 6");
  ASSERT_EQ(other.exitCode, 0) << other.err;
  EXPECT_NE(printedLosses(other.out), expectedLosses);
}

TEST_F(DriverTest, TraceIsAMeasuredMemoryTimeline) {
  RunResult result = run("--steps 2 --trace trace.json");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json trace = json::parse(readText(path("trace.json")));
  EXPECT_EQ(trace["format"], "lethe-memory-timeline");
  EXPECT_EQ(trace["version"], 1);
  EXPECT_EQ(trace["source"], "measured");
  EXPECT_EQ(trace["function"], "linear_step");
  EXPECT_EQ(trace["strategy"], "hand-written");
  EXPECT_EQ(trace["arena_bytes"], 3072);
  EXPECT_EQ(trace["peak_bytes"], 2816);
  EXPECT_EQ(trace["peak_step"], 7);
  EXPECT_EQ(trace["budget_bytes"], 3072);
  EXPECT_TRUE(trace["budget_bytes"].is_number_integer());
  ASSERT_EQ(trace["steps"].size(), 8u);
  EXPECT_TRUE(trace["tensors"].is_array());
  json manifest = json::parse(lethe_program_manifest);
  double previousIssue = 0;
  for (size_t index = 0; index < 8; ++index) {
    const json &step = trace["steps"][index];
    EXPECT_EQ(step["index"], index);
    EXPECT_EQ(step["kind"], manifest["ops"][index]["kind"]);
    EXPECT_EQ(step["live_bytes"], manifest["ops"][index]["live_bytes"]);
    EXPECT_GE(step["issue"].get<double>(), previousIssue);
    EXPECT_GE(step["end"].get<double>(), step["start"].get<double>());
    previousIssue = step["issue"];
  }
  EXPECT_EQ(trace["steps"][3]["stream"], "d2h");
  EXPECT_EQ(trace["steps"][5]["stream"], "h2d");
  EXPECT_EQ(trace["steps"][4]["start"], trace["steps"][4]["end"]);
  EXPECT_GE(trace["seconds"].get<double>(),
            trace["steps"][7]["end"].get<double>());
}

TEST_F(DriverTest, ProfileHasOneEntryPerOp) {
  RunResult result = run("--steps 3 --profile profile.json");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json profile = json::parse(readText(path("profile.json")));
  EXPECT_EQ(profile["format"], "lethe-program-profile");
  EXPECT_EQ(profile["version"], 1);
  EXPECT_EQ(profile["steps"], 3);
  ASSERT_EQ(profile["ops"].size(), 8u);
  for (size_t index = 0; index < 8; ++index) {
    const json &op = profile["ops"][index];
    EXPECT_EQ(op["index"], index);
    EXPECT_TRUE(op["op"].is_string());
    EXPECT_TRUE(op.contains("node"));
    EXPECT_GE(op["seconds"].get<double>(), 0);
    EXPECT_EQ(op["calls"], index == 4 ? 0 : 3) << index;
    EXPECT_FALSE(op.contains("workspace_bytes")) << index;
  }
  EXPECT_EQ(profile["ops"][0]["op"], "lethe.matmul");
  EXPECT_EQ(profile["ops"][0]["node"], 0);
  EXPECT_EQ(profile["ops"][3]["op"], "offload");
  EXPECT_TRUE(profile["ops"][3]["node"].is_null());
  EXPECT_EQ(profile["ops"][4]["seconds"], 0.0);
  // The planner's times, where the manifest has them, beside the measured.
  EXPECT_EQ(profile["ops"][0]["predicted_seconds"], 2.5e-07);
  EXPECT_EQ(profile["ops"][3]["predicted_seconds"], 1e-06);
  EXPECT_FALSE(profile["ops"][1].contains("predicted_seconds"));
}

// An op whose calls asked for more workspace than they were given has the
// most they asked for in its entry, the last op of a step included; the
// others have none.
TEST_F(DriverTest, ProfileRecordsTheWorkspaceOpsAskedFor) {
  RunResult result = run("--steps 2 --profile profile.json",
                         std::string(kWantWorkspaceVariable) + "=1000000");
  ASSERT_EQ(result.exitCode, 0) << result.err;
  json profile = json::parse(readText(path("profile.json")));
  ASSERT_EQ(profile["ops"].size(), 8u);
  EXPECT_EQ(profile["ops"][0]["workspace_bytes"], 1000000);
  EXPECT_EQ(profile["ops"][7]["workspace_bytes"], 500000);
  for (size_t index = 1; index < 7; ++index)
    EXPECT_FALSE(profile["ops"][index].contains("workspace_bytes")) << index;
  // Without --profile or --trace nothing reads it, and training is the same.
  RunResult plain = run("--steps 2");
  RunResult asked =
      run("--steps 2", std::string(kWantWorkspaceVariable) + "=1000000");
  EXPECT_EQ(printedLosses(asked.out), printedLosses(plain.out));
}

TEST_F(DriverTest, Help) {
  RunResult result = run("--help");
  EXPECT_EQ(result.exitCode, 0);
  EXPECT_EQ(result.out.rfind("usage: prog [--steps N]", 0), 0u) << result.out;
}

TEST_F(DriverTest, CommandLineErrors) {
  expectError("--stepz 3", "unknown option '--stepz' (see --help)");
  expectError("extra", "unknown option 'extra'");
  expectError("--steps", "--steps needs a value");
  expectError("--steps 0", "--steps takes a whole number of steps >= 1, not "
                           "'0'");
  expectError("--steps=abc", "not 'abc'");
  expectError("--steps 99999999999999999999", "--steps takes");
  expectError("--seed -1", "--seed takes a whole number >= 0, not '-1'");
  expectError("--save-weights ''", "--save-weights needs a non-empty path");
  expectError("--random-weights x",
              "--random-weights takes a whole number >= 0, not 'x'");
  expectError("--weights prog.weights --random-weights 1",
              "--weights and --random-weights exclude each other");
}

TEST_F(DriverTest, WeightsErrors) {
  std::vector<std::string> outputs = {"out.weights", "t.json", "p.json"};
  std::string write = " --save-weights out.weights --trace t.json "
                      "--profile p.json";
  fs::remove(path("prog.weights"));
  expectError(write, "cannot read '", outputs);
  expectError(write,
              "prog.weights': No such file or directory (give the "
              "weights file with --weights FILE)",
              outputs);
  expectError("--weights missing.weights" + write,
              "cannot read 'missing.weights': No such file or directory",
              outputs);

  std::string error;
  Weights weights;
  std::vector<WeightsTensor> tensors = weights.tensors();
  tensors.erase(tensors.begin() + 1);
  ASSERT_TRUE(writeWeightsFile(path("partial.weights"), tensors, error));
  expectError("--weights partial.weights" + write,
              "'partial.weights' has no tensor 'w.velocity' for state "
              "argument 4 ('w.velocity')",
              outputs);

  tensors = weights.tensors();
  tensors[0].shape = {2, 3};
  ASSERT_TRUE(writeWeightsFile(path("shape.weights"), tensors, error));
  expectError("--weights shape.weights" + write,
              "tensor 'w' in 'shape.weights' is f32 [2, 3], but parameter "
              "argument 3 ('w') is f32 [3, 2]",
              outputs);

  writeText(path("magic.weights"), "GARBAGE!........");
  expectError("--weights magic.weights" + write,
              "'magic.weights' is not a Lethe weights file (bad magic",
              outputs);
  // A file of another kind is read no further than its first bytes:
  // /dev/zero never ends.
  expectError("--weights /dev/zero" + write,
              "'/dev/zero' is not a Lethe weights file (bad magic", outputs);

  std::string bytes;
  ASSERT_TRUE(serializeWeights(weights.tensors(), bytes, error));
  writeText(path("short.weights"), bytes.substr(0, bytes.size() - 3));
  expectError("--weights short.weights" + write,
              "'short.weights' is truncated (in tensor 'lr''s data)", outputs);
}

TEST_F(DriverTest, DataErrors) {
  std::vector<std::string> outputs = {"out.weights"};
  std::string write = " --save-weights out.weights";
  fs::create_directory(path("data"));
  expectError("--data data" + write,
              "cannot read 'data/x.npy': No such file or directory (--data "
              "DIR needs <name>.npy for data argument 0 ('x'))",
              outputs);
  float x[kXSize] = {}, y[kYSize] = {};
  writeText(path("data/x.npy"), "not numpy");
  expectError("--data data" + write,
              "'data/x.npy' is not a NumPy .npy file (bad magic)", outputs);
  fs::remove(path("data/x.npy"));
  fs::create_symlink("/dev/zero", path("data/x.npy"));
  expectError("--data data" + write,
              "'data/x.npy' is not a NumPy .npy file (bad magic)", outputs);
  fs::remove(path("data/x.npy"));
  writeText(path("data/x.npy"), serializeNpy(LETHE_RT_F64, {kBatch, kInputs},
                                             std::string(8 * kXSize, '\0')));
  expectError("--data data" + write,
              "'data/x.npy' holds '<f8' elements, but data argument 0 ('x') "
              "is f32 (save it with astype('<f4'))",
              outputs);
  writeText(path("data/x.npy"), serializeNpy(LETHE_RT_F32, {kInputs, kBatch},
                                             bytesOf(x, sizeof(x))));
  expectError("--data data" + write,
              "'data/x.npy' has shape [3, 4], but data argument 0 ('x') is "
              "[4, 3] (or k batches of it stacked along the first dimension)",
              outputs);
  writeText(path("data/x.npy"), serializeNpy(LETHE_RT_F32, {kBatch, kInputs},
                                             bytesOf(x, sizeof(x))));
  std::string truncated =
      serializeNpy(LETHE_RT_F32, {kBatch, kOutputs}, bytesOf(y, sizeof(y)));
  writeText(path("data/y.npy"), truncated.substr(0, truncated.size() - 1));
  expectError("--data data" + write, "(truncated)", outputs);
  writeText(path("data/y.npy"), truncated);
  expectError("--data data" + write, "'data/c.npy'", outputs);
  // A label outside the classes is found before the first step (the loss
  // would find it in the step that reads it), in any batch.
  int32_t c[2 * kBatch] = {0, 1, 2, 0, 2, 1, 3, 0};
  writeText(path("data/c.npy"),
            serializeNpy(LETHE_RT_I32, {2 * kBatch}, bytesOf(c, sizeof(c))));
  expectError("--steps 3 --data data" + write,
              "'data/c.npy' element 6 is 3, but label argument 2 ('c') takes "
              "class indices in [0, 3)",
              outputs);
  EXPECT_EQ(run("--steps 3 --data data").out, "");
}

TEST_F(DriverTest, RuntimeErrorStopsTraining) {
  std::string write = " --save-weights out.weights --trace t.json";
  expectError("--steps 3" + write, "step 2 failed: lethe_rt_matmul",
              {"out.weights", "t.json"},
              std::string(kFailAtStepVariable) + "=1");
  RunResult result = run("--steps 3", std::string(kFailAtStepVariable) + "=1");
  EXPECT_EQ(printedLosses(result.out).size(), 1u) << result.out;
}

// The runtime failing between steps (FaultInjection.cpp arms one call): one
// line saying what the driver was doing and the runtime's own error, and
// no output file.
TEST_F(DriverTest, RuntimeFailuresBetweenStepsAreOneLine) {
  auto failing = [](const std::string &call) {
    return std::string(kFailCallVariable) + "=" + call;
  };
  // The updated results are read at the last step (the third), after its
  // loss; between steps they are copied within the arena.
  const std::pair<const char *, const char *> cases[] = {
      {"copy_to_arena:1", "cannot write an argument into the arena: "
                          "lethe_rt_copy_to_arena: source is null"},
      {"copy_from_arena:2", "cannot read the loss: lethe_rt_copy_from_arena: "
                            "destination is null"},
      {"copy_from_arena:4", "cannot read result 1: lethe_rt_copy_from_arena: "
                            "destination is null"},
      {"copy:1", "cannot copy result 1 to the argument it updates: "
                 "lethe_rt_copy: out must be f32, got f64"}};
  for (const auto &[call, message] : cases)
    expectError("--steps 3 --save-weights out.weights --trace t.json", message,
                {"out.weights", "t.json"}, failing(call));
  // Unarmed, the wrapped calls change nothing.
  RunResult result = run("--steps 3", failing("copy:99"));
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(printedLosses(result.out).size(), 3u) << result.out;
  EXPECT_EQ(printedLosses(result.out), printedLosses(run("--steps 3").out));
}

TEST_F(DriverTest, UnwritableOutputIsAnError) {
  expectError("--save-weights nodir/out.weights",
              "cannot write 'nodir/out.weights': No such file or directory");
  // The outputs are written all or none: the weights, which could be
  // written, are not left behind by the profile, which cannot.
  expectError("--save-weights ok.weights --trace ok.json --profile "
              "nodir/profile.json",
              "cannot write 'nodir/profile.json': No such file or directory",
              {"ok.weights", "ok.json"});
  expectError("--save-weights ok.weights --trace nodir/trace.json",
              "cannot write 'nodir/trace.json': No such file or directory",
              {"ok.weights"});
  // A directory where the last file goes is found before the first is
  // renamed into place.
  fs::create_directory(path("dir.json"));
  expectError("--save-weights ok.weights --trace dir.json",
              "cannot write 'dir.json': it is a directory", {"ok.weights"});
  expectError("--save-weights ok.weights --trace same.json --profile "
              "same.json",
              "--profile and --trace name the same file 'same.json'; give "
              "each its own",
              {"ok.weights", "same.json"});
}

/// Runs the driver in process on `manifest`.
RunResult runInProcess(const std::string &manifest,
                       std::vector<const char *> arguments) {
  arguments.insert(arguments.begin(), "bin/prog");
  std::ostringstream out, err;
  RunResult result;
  result.exitCode =
      runDriver(static_cast<int>(arguments.size()), arguments.data(),
                manifest.c_str(), lethe_program_step, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

TEST(DriverInProcessTest, CorruptManifest) {
  RunResult result = runInProcess("{\"format\": \"lethe-program\"", {});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "prog: error: the program's manifest is corrupt: the "
                        "manifest is not valid JSON (rebuild the executable "
                        "with lethec)\n");
  json manifest = json::parse(lethe_program_manifest);
  manifest["results"][0]["offset"] = 3070;
  result = runInProcess(manifest.dump(), {"--steps", "2"});
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.err,
            "prog: error: the program's manifest is corrupt: results[0] "
            "(offset 3070, 4 bytes) ends past the arena (3072 bytes) "
            "(rebuild the executable with lethec)\n");
}

TEST(DriverInProcessTest, ManifestWithoutWeightsNeedsNoFile) {
  // Every parameter turned into data: no weights file is read.
  json manifest = json::parse(lethe_program_manifest);
  for (int index : {3, 4, 5})
    manifest["arguments"][index]["kind"] = "data";
  RunResult result = runInProcess(manifest.dump(), {"--steps", "1"});
  EXPECT_EQ(result.exitCode, 0) << result.err;
  EXPECT_EQ(printedLosses(result.out).size(), 1u);
}

TEST(DriverInProcessTest, LabelsMayHoldTheIgnoreIndex) {
  json manifest = json::parse(lethe_program_manifest);
  manifest["arguments"][2]["ignore_index"] = -100;
  std::string data = testing::TempDir() + "/ignore-index-data";
  fs::create_directories(data);
  float x[kXSize] = {}, y[kYSize] = {};
  writeText(data + "/x.npy", serializeNpy(LETHE_RT_F32, {kBatch, kInputs},
                                          bytesOf(x, 4 * kXSize)));
  writeText(data + "/y.npy", serializeNpy(LETHE_RT_F32, {kBatch, kOutputs},
                                          bytesOf(y, 4 * kYSize)));
  std::vector<const char *> arguments = {"--random-weights", "1", "--data",
                                         data.c_str()};
  // Runs with c = {0, label, 2, 1}.
  auto runWithLabel = [&](int32_t label) {
    int32_t c[kBatch] = {0, label, 2, 1};
    writeText(data + "/c.npy",
              serializeNpy(LETHE_RT_I32, {kBatch}, bytesOf(c, sizeof(c))));
    return runInProcess(manifest.dump(), arguments);
  };
  RunResult result = runWithLabel(-100);
  EXPECT_EQ(result.exitCode, 0) << result.err;
  result = runWithLabel(-5);
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "prog: error: '" + data +
                            "/c.npy' element 1 is -5, but label argument 2 "
                            "('c') takes class indices in [0, 3) or the "
                            "ignore_index -100\n");
  // Without an integer_bound only negative labels are refused.
  manifest["arguments"][2].erase("integer_bound");
  result = runWithLabel(7);
  EXPECT_EQ(result.exitCode, 0) << result.err;
  result = runWithLabel(-7);
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.err, "prog: error: '" + data +
                            "/c.npy' element 1 is -7, but label argument 2 "
                            "('c') takes class indices in [0, the class "
                            "count) or the ignore_index -100\n");
}

} // namespace

namespace {

/// A program whose updated results sit in each other's argument slots:
/// a' = b + 1 is written over b, b' = 2 a over a, and the loss is a. Writing
/// the updates back one by one without staging them would mix them up.
constexpr const char *kSwapManifest = R"json({
  "format": "lethe-program", "version": 1, "function": "swap",
  "arena_bytes": 768, "host_pool_bytes": 0, "alignment": 256,
  "arguments": [
    {"index": 0, "name": "a", "kind": "parameter", "dtype": "f32",
     "shape": [], "offset": 0, "bytes": 4},
    {"index": 1, "name": "b", "kind": "parameter", "dtype": "f32",
     "shape": [], "offset": 256, "bytes": 4}
  ],
  "results": [
    {"index": 0, "name": "loss", "loss": true, "updates": -1,
     "dtype": "f32", "shape": [], "offset": 512, "bytes": 4},
    {"index": 1, "name": "a", "loss": false, "updates": 0,
     "dtype": "f32", "shape": [], "offset": 256, "bytes": 4},
    {"index": 2, "name": "b", "loss": false, "updates": 1,
     "dtype": "f32", "shape": [], "offset": 0, "bytes": 4}
  ],
  "plan": {},
  "ops": [{"index": 0, "kind": "compute", "op": "swap", "node": 0,
           "live_bytes": 12}]
})json";

/// The op index the swap step announces (an index outside the manifest's
/// ops is a lethec bug the driver reports).
int32_t swapOpIndex = 0;

lethe_rt_status swapStep(lethe_rt_context *context) {
  char *arena = static_cast<char *>(lethe_rt_arena_base(context));
  lethe_rt_op_begin(context, swapOpIndex);
  float a, b;
  std::memcpy(&a, arena, 4);
  std::memcpy(&b, arena + 256, 4);
  float newA = b + 1, newB = 2 * a;
  std::memcpy(arena + 512, &a, 4);
  std::memcpy(arena + 256, &newA, 4);
  std::memcpy(arena, &newB, 4);
  return LETHE_RT_OK;
}

RunResult runSwap(std::vector<const char *> arguments) {
  std::string weights = testing::TempDir() + "/swap.weights";
  float a = 1, b = 10;
  std::string error;
  EXPECT_TRUE(writeWeightsFile(weights,
                               {{"a", LETHE_RT_F32, {}, bytesOf(&a, 4)},
                                {"b", LETHE_RT_F32, {}, bytesOf(&b, 4)}},
                               error));
  arguments.insert(arguments.begin(), {"swap", "--weights", weights.c_str()});
  std::ostringstream out, err;
  RunResult result;
  result.exitCode =
      runDriver(static_cast<int>(arguments.size()), arguments.data(),
                kSwapManifest, swapStep, out, err);
  result.out = out.str();
  result.err = err.str();
  return result;
}

TEST(DriverInProcessTest, UpdatesAreStagedThroughTheHost) {
  swapOpIndex = 0;
  RunResult result = runSwap({"--steps", "4", "--profile",
                              (testing::TempDir() + "/swap.json").c_str()});
  ASSERT_EQ(result.exitCode, 0) << result.err;
  // (a, b): (1, 10) -> (11, 2) -> (3, 22) -> (23, 6).
  EXPECT_EQ(printedLosses(result.out),
            (std::vector<std::string>{"1", "11", "3", "23"}));
}

TEST(DriverInProcessTest, AnOpIndexOutsideTheManifestIsAnError) {
  swapOpIndex = 5;
  std::string trace = testing::TempDir() + "/swap-trace.json";
  std::remove(trace.c_str());
  RunResult result = runSwap({"--trace", trace.c_str()});
  swapOpIndex = 0;
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_EQ(result.err, "swap: error: step 1 announced op 5, but the "
                        "manifest has 1 ops (a lethec bug)\n");
  EXPECT_FALSE(std::filesystem::exists(trace));
}

} // namespace
