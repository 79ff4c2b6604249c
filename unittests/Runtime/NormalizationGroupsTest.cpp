//===- NormalizationGroupsTest.cpp - CUDA normalization math on the host --===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// The per-channel and per-row arithmetic of the CUDA backend's normalization
// kernels (runtime/cuda/NormalizationGroups.h), run here without a GPU. With
// one lane, as the kernels fold a group shorter than a block, it must give
// the CPU backend's bits for every float dtype, parameters of another dtype,
// a broadcast scale and no bias. With several lanes on threads, as a block
// folds a longer group, and split into chunks, as the kernels fold a batch
// norm's long channels, it must cover every element once and agree with the
// CPU backend within rounding.
//
//===----------------------------------------------------------------------===//

#include "cuda/NormalizationGroups.h"
#include "TypedTensor.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

using namespace lethe::rt;
using namespace lethe::rt::testing;

namespace {

using NormalizationGroupsTest = RuntimeTest;

FloatValues valuesOf(TypedTensor &tensor) {
  return FloatValues{tensor.bytes.data(), tensor.dtype};
}

ChannelLayout channelLayout(const std::vector<int64_t> &shape) {
  return ChannelLayout::of(shape.data(), shape.size());
}

/// `lanes` threads that fold one group together: `sum` adds the lanes'
/// partial sums in lane order and returns the total to every lane, as a
/// block's threads combine theirs (in another fixed order).
class ThreadLanes {
public:
  explicit ThreadLanes(int lanes) : lanes(lanes), partials(lanes) {}

  /// Runs `fold(lane, sum)` on each lane's thread and waits for them.
  template <typename Fold> void run(Fold fold) {
    std::vector<std::thread> threads;
    for (int lane = 0; lane < lanes; ++lane)
      threads.emplace_back([this, lane, &fold] {
        fold(lane, [this, lane](double value) { return sum(lane, value); });
      });
    for (std::thread &thread : threads)
      thread.join();
  }

private:
  double sum(int lane, double value) {
    std::unique_lock<std::mutex> lock(mutex);
    partials[lane] = value;
    uint64_t round = rounds;
    if (++arrived == lanes) {
      total = 0;
      for (double partial : partials)
        total += partial;
      arrived = 0;
      ++rounds;
      changed.notify_all();
    } else {
      changed.wait(lock, [&] { return rounds != round; });
    }
    // No lane can complete the next round before this one has arrived.
    return total;
  }

  int lanes;
  std::vector<double> partials;
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0;
  uint64_t rounds = 0;
  double total = 0;
};

/// Folds groups [0, count) of `groups` over storage dtype `dtype`: with one
/// lane (SingleLane) when `lanes` is 1, else with `lanes` threads per group.
template <typename Groups>
void foldGroups(const Groups &groups, lethe_rt_dtype dtype, int64_t count,
                int lanes) {
  dispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int64_t group = 0; group < count; ++group) {
      if (lanes == 1) {
        groups.template group<T>(group, 0, 1, SingleLane());
        continue;
      }
      ThreadLanes(lanes).run([&](int lane, auto sum) {
        groups.template group<T>(group, lane, lanes, sum);
      });
    }
  });
}

/// Runs `pass(item, lane, lanes, sum)` for block items [0, items) of a
/// split fold, in order, each as `lanes` lanes (as foldGroups folds groups).
template <typename Pass> void forEachItem(int64_t items, int lanes, Pass pass) {
  for (int64_t item = 0; item < items; ++item) {
    if (lanes == 1) {
      pass(item, 0, 1, SingleLane());
      continue;
    }
    ThreadLanes(lanes).run(
        [&](int lane, auto sum) { pass(item, lane, lanes, sum); });
  }
}

/// A batch norm's channels split into chunks (SplitFold.h), the passes of
/// `passes` (BatchNormTraining or BatchNormGradient) run in order over every
/// block item, as the CUDA backend's kernels run them.
template <typename Passes>
void foldSplit(const Passes &passes, lethe_rt_dtype dtype, int lanes) {
  const ChannelLayout &layout = passes.layout;
  ASSERT_TRUE(isSplit(layout.count(), layout.spatial));
  int64_t chunks = splitChunks(layout.count());
  int64_t items = layout.channels * chunks;
  std::vector<double> first(items, NAN), second(items, NAN);
  dispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int pass = 0; pass < Passes::kSplitPasses; ++pass)
      forEachItem(
          items, lanes, [&](int64_t item, int lane, int count, auto sum) {
            passes.template splitPass<T>(pass, item, chunks, lane, count, sum,
                                         first.data(), second.data());
          });
  });
}

/// Expects `got` to hold `expected`'s bits (`exact`: one lane, unsplit) or
/// its values within the dtype's tolerance.
void expectSame(const TypedTensor &got, const TypedTensor &expected, bool exact,
                const char *what) {
  SCOPED_TRACE(what);
  if (exact)
    EXPECT_EQ(got.bytes, expected.bytes);
  else
    expectAllNear(got.values(), expected.values(),
                  toleranceFor(expected.dtype) * 4);
}

/// Names a case in failure messages.
std::string caseName(lethe_rt_dtype dtype, lethe_rt_dtype parameterType,
                     int lanes, uint64_t seed) {
  return std::string(dtypeName(dtype)) + " parameters " +
         dtypeName(parameterType) + " lanes " + std::to_string(lanes) +
         " seed " + std::to_string(seed);
}

/// The dtypes of the parameters of a normalization of x's `dtype`: its
/// own, and another one.
std::vector<lethe_rt_dtype> parameterDtypes(lethe_rt_dtype dtype) {
  return {dtype, dtype == LETHE_RT_F64 ? LETHE_RT_BF16 : LETHE_RT_F64};
}

const std::vector<std::vector<int64_t>> &batchNormShapes() {
  // Channels of 2 to 120 elements; and an empty batch, whose statistics are
  // NaN.
  static const std::vector<std::vector<int64_t>> shapes{
      {2, 3}, {2, 3, 4, 5}, {4, 2, 3}, {3, 2, 40}, {0, 3, 2}};
  return shapes;
}

/// Channels that the CUDA backend splits into chunks: 20,480 elements in
/// runs of 10,240 (three chunks, the last one short), and 16,384 in runs of
/// 32 (two).
const std::vector<std::vector<int64_t>> &splitShapes() {
  static const std::vector<std::vector<int64_t>> shapes{{2, 2, 128, 80},
                                                        {512, 3, 32}};
  return shapes;
}

/// How the tests fold a batch norm's channels: whole, in `lanes` lanes, or
/// split into chunks of `lanes` lanes each.
struct ChannelFold {
  int lanes;
  bool split;

  /// Whether the fold must give the CPU backend's bits.
  bool exact() const { return lanes == 1 && !split; }
  const std::vector<std::vector<int64_t>> &shapes() const {
    return split ? splitShapes() : batchNormShapes();
  }
  template <typename Passes>
  void run(const Passes &passes, lethe_rt_dtype dtype) const {
    if (split)
      foldSplit(passes, dtype, lanes);
    else
      foldGroups(passes, dtype, passes.layout.channels, lanes);
  }
};

std::string caseName(lethe_rt_dtype dtype, lethe_rt_dtype parameterType,
                     const ChannelFold &fold, uint64_t seed) {
  return caseName(dtype, parameterType, fold.lanes, seed) +
         (fold.split ? " split" : "");
}

std::vector<ChannelFold> channelFolds(int lanes) {
  return {{1, false}, {lanes, false}, {1, true}, {lanes, true}};
}

TEST_F(NormalizationGroupsTest, BatchNormInferenceGivesTheCpuBits) {
  uint64_t seed = 1;
  for (lethe_rt_dtype dtype : floatDtypes())
    for (const std::vector<int64_t> &shape : batchNormShapes())
      for (lethe_rt_dtype parameterType : parameterDtypes(dtype)) {
        SCOPED_TRACE(caseName(dtype, parameterType, 1, seed));
        int64_t channels = shape[1];
        TypedTensor x = randomTensor(shape, dtype, seed++, -3, 3);
        TypedTensor scale = randomTensor({channels}, parameterType, seed++);
        TypedTensor bias = randomTensor({channels}, parameterType, seed++);
        TypedTensor mean = randomTensor({channels}, parameterType, seed++);
        TypedTensor var =
            randomTensor({channels}, parameterType, seed++, 0.1, 2);
        TypedTensor cpuY(shape, dtype), groupY(shape, dtype);
        lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                        mv = mean.view(), vv = var.view(), yv = cpuY.view();
        ASSERT_EQ(
            lethe_rt_batch_norm(context, &xv, &sv, &bv, &mv, &vv, 1e-3, &yv),
            LETHE_RT_OK)
            << lastError();
        BatchNormInference inference;
        inference.x = x.bytes.data();
        inference.y = groupY.bytes.data();
        inference.scale = valuesOf(scale);
        inference.bias = valuesOf(bias);
        inference.mean = valuesOf(mean);
        inference.var = valuesOf(var);
        inference.epsilon = 1e-3;
        inference.layout = channelLayout(shape);
        dispatchFloat(dtype, [&](auto tag) {
          for (int64_t i = 0; i < x.size(); ++i)
            inference.element<decltype(tag)>(i);
        });
        EXPECT_EQ(groupY.bytes, cpuY.bytes);
      }
}

TEST_F(NormalizationGroupsTest, BatchNormTrainingMatchesTheCpu) {
  uint64_t seed = 100;
  for (const ChannelFold &fold : channelFolds(3))
    for (lethe_rt_dtype dtype : floatDtypes())
      for (const std::vector<int64_t> &shape : fold.shapes()) {
        lethe_rt_dtype parameterType = parameterDtypes(dtype)[seed % 2];
        SCOPED_TRACE(caseName(dtype, parameterType, fold, seed));
        int64_t channels = shape[1];
        TypedTensor x = randomTensor(shape, dtype, seed++, -2, 4);
        TypedTensor scale = randomTensor({channels}, parameterType, seed++);
        TypedTensor bias = randomTensor({channels}, parameterType, seed++);
        TypedTensor runningMean =
            randomTensor({channels}, LETHE_RT_F32, seed++);
        TypedTensor runningVar =
            randomTensor({channels}, LETHE_RT_F32, seed++, 0.5, 2);
        // Outputs: y, the running statistics in place of the inputs (as a
        // training step updates them), the saved statistics.
        auto outputs = [&] {
          return std::vector<TypedTensor>{
              TypedTensor(shape, dtype), runningMean, runningVar,
              TypedTensor({channels}, parameterType),
              TypedTensor({channels}, dtype)};
        };
        std::vector<TypedTensor> cpu = outputs(), groups = outputs();
        lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                        yv = cpu[0].view(), mv = cpu[1].view(),
                        vv = cpu[2].view(), smv = cpu[3].view(),
                        siv = cpu[4].view();
        ASSERT_EQ(lethe_rt_batch_norm_train(context, &xv, &sv, &bv, &mv, &vv,
                                            1e-5, 0.9, &yv, &mv, &vv, &smv,
                                            &siv),
                  LETHE_RT_OK)
            << lastError();
        BatchNormTraining training;
        training.x = x.bytes.data();
        training.y = groups[0].bytes.data();
        training.scale = valuesOf(scale);
        training.bias = valuesOf(bias);
        training.runningMean = training.runningMeanOut = valuesOf(groups[1]);
        training.runningVar = training.runningVarOut = valuesOf(groups[2]);
        training.savedMean = valuesOf(groups[3]);
        training.savedInvStd = valuesOf(groups[4]);
        training.epsilon = 1e-5;
        training.momentum = 0.9;
        training.layout = channelLayout(shape);
        fold.run(training, dtype);
        const char *names[] = {"y", "running_mean", "running_var", "saved_mean",
                               "saved_inv_std"};
        for (size_t k = 0; k < cpu.size(); ++k)
          expectSame(groups[k], cpu[k], fold.exact(), names[k]);
      }
}

TEST_F(NormalizationGroupsTest, BatchNormGradientMatchesTheCpu) {
  uint64_t seed = 200;
  for (const ChannelFold &fold : channelFolds(4))
    for (lethe_rt_dtype dtype : floatDtypes())
      for (const std::vector<int64_t> &shape : fold.shapes()) {
        lethe_rt_dtype parameterType = parameterDtypes(dtype)[seed % 2];
        SCOPED_TRACE(caseName(dtype, parameterType, fold, seed));
        int64_t channels = shape[1];
        TypedTensor x = randomTensor(shape, dtype, seed++, -2, 2);
        TypedTensor dy = randomTensor(shape, dtype, seed++);
        TypedTensor scale = randomTensor({channels}, parameterType, seed++);
        TypedTensor mean =
            randomTensor({channels}, parameterType, seed++, -0.5, 0.5);
        TypedTensor invStd =
            randomTensor({channels}, parameterType, seed++, 0.5, 2);
        auto outputs = [&] {
          return std::vector<TypedTensor>{
              TypedTensor(shape, dtype), TypedTensor({channels}, dtype),
              TypedTensor({channels}, parameterType)};
        };
        std::vector<TypedTensor> cpu = outputs(), groups = outputs();
        lethe_rt_tensor dyv = dy.view(), xv = x.view(), sv = scale.view(),
                        mv = mean.view(), iv = invStd.view(),
                        dxv = cpu[0].view(), dsv = cpu[1].view(),
                        dbv = cpu[2].view();
        ASSERT_EQ(lethe_rt_batch_norm_grad(context, &dyv, &xv, &sv, &mv, &iv,
                                           &dxv, &dsv, &dbv),
                  LETHE_RT_OK)
            << lastError();
        BatchNormGradient gradient;
        gradient.dy = dy.bytes.data();
        gradient.x = x.bytes.data();
        gradient.dx = groups[0].bytes.data();
        gradient.scale = valuesOf(scale);
        gradient.savedMean = valuesOf(mean);
        gradient.savedInvStd = valuesOf(invStd);
        gradient.dscale = valuesOf(groups[1]);
        gradient.dbias = valuesOf(groups[2]);
        gradient.layout = channelLayout(shape);
        fold.run(gradient, dtype);
        const char *names[] = {"dx", "dscale", "dbias"};
        for (size_t k = 0; k < cpu.size(); ++k)
          expectSame(groups[k], cpu[k], fold.exact(), names[k]);
      }
}

/// Scale and bias offsets over the normalized shape, as BroadcastMap<2>
/// gives them on the device.
struct HostOffsets {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides[2];

  void offsetsAt(int64_t k, int64_t (&offsets)[2]) const {
    std::vector<int64_t> index = unravel(k, shape);
    for (int operand = 0; operand < 2; ++operand) {
      offsets[operand] = 0;
      for (size_t dim = 0; dim < shape.size(); ++dim)
        offsets[operand] += index[dim] * strides[operand][dim];
    }
  }
};

/// A layer norm: x's shape, the axis, scale's shape, whether it has a bias.
struct LayerCase {
  std::vector<int64_t> shape;
  int64_t axis;
  std::vector<int64_t> scaleShape;
  bool bias;
};

const std::vector<LayerCase> &layerCases() {
  static const std::vector<LayerCase> cases{
      {{2, 3, 4}, 0, {2, 3, 4}, true}, {{2, 3, 4}, 1, {3, 4}, true},
      {{2, 3, 4}, 1, {4}, false},      {{2, 3, 4}, 1, {3, 1}, true},
      {{5, 7}, 1, {7}, false},         {{4, 300}, 1, {300}, true},
      {{3, 1}, 1, {1}, true},          {{0, 5}, 1, {5}, true},
  };
  return cases;
}

/// x's shape with the dims from `axis` on set to 1.
std::vector<int64_t> statisticsShape(std::vector<int64_t> shape, int64_t axis) {
  std::fill(shape.begin() + axis, shape.end(), 1);
  return shape;
}

TEST_F(NormalizationGroupsTest, LayerNormMatchesTheCpu) {
  uint64_t seed = 300;
  for (int lanes : {1, 4})
    for (lethe_rt_dtype dtype : floatDtypes())
      for (const LayerCase &layer : layerCases()) {
        lethe_rt_dtype parameterType = parameterDtypes(dtype)[seed % 2];
        SCOPED_TRACE(caseName(dtype, parameterType, lanes, seed));
        TypedTensor x = randomTensor(layer.shape, dtype, seed++, -2, 3);
        TypedTensor scale =
            randomTensor(layer.scaleShape, parameterType, seed++);
        TypedTensor bias =
            randomTensor(layer.scaleShape, parameterType, seed++);
        std::vector<int64_t> statShape =
            statisticsShape(layer.shape, layer.axis);
        auto outputs = [&] {
          return std::vector<TypedTensor>{TypedTensor(layer.shape, dtype),
                                          TypedTensor(statShape, LETHE_RT_F32),
                                          TypedTensor(statShape, dtype)};
        };
        std::vector<TypedTensor> cpu = outputs(), groups = outputs();
        lethe_rt_tensor xv = x.view(), sv = scale.view(), bv = bias.view(),
                        yv = cpu[0].view(), mv = cpu[1].view(),
                        iv = cpu[2].view();
        lethe_rt_tensor *bp = layer.bias ? &bv : nullptr;
        ASSERT_EQ(lethe_rt_layer_norm(context, &xv, &sv, bp, layer.axis, 1e-5,
                                      &yv, &mv, &iv),
                  LETHE_RT_OK)
            << lastError();

        LayerNormForward<HostOffsets> forward;
        forward.offsets.shape.assign(layer.shape.begin() + layer.axis,
                                     layer.shape.end());
        std::vector<int64_t> &scaleStrides = forward.offsets.strides[0];
        std::vector<int64_t> &biasStrides = forward.offsets.strides[1];
        ASSERT_EQ(layerNormShapesError(xv, layer.axis, sv, bp, mv, iv,
                                       scaleStrides, biasStrides),
                  "");
        if (!layer.bias)
          biasStrides.assign(forward.offsets.shape.size(), 0);
        forward.x = x.bytes.data();
        forward.y = groups[0].bytes.data();
        forward.scale = valuesOf(scale);
        if (layer.bias)
          forward.bias = valuesOf(bias);
        forward.mean = valuesOf(groups[1]);
        forward.invStdDev = valuesOf(groups[2]);
        forward.size = 1;
        for (int64_t dim : forward.offsets.shape)
          forward.size *= dim;
        forward.epsilon = 1e-5;
        foldGroups(forward, dtype, cpu[1].size(), lanes);
        const char *names[] = {"y", "mean", "inv_std_dev"};
        for (size_t k = 0; k < cpu.size(); ++k)
          expectSame(groups[k], cpu[k], lanes == 1, names[k]);
      }
}

TEST_F(NormalizationGroupsTest, LayerNormGradientMatchesTheCpu) {
  uint64_t seed = 400;
  for (int lanes : {1, 4})
    for (lethe_rt_dtype dtype : floatDtypes())
      for (const LayerCase &layer : layerCases()) {
        lethe_rt_dtype parameterType = parameterDtypes(dtype)[seed % 2];
        SCOPED_TRACE(caseName(dtype, parameterType, lanes, seed));
        std::vector<int64_t> normalized(layer.shape.begin() + layer.axis,
                                        layer.shape.end());
        std::vector<int64_t> statShape =
            statisticsShape(layer.shape, layer.axis);
        TypedTensor x = randomTensor(layer.shape, dtype, seed++, -2, 3);
        TypedTensor dy = randomTensor(layer.shape, dtype, seed++);
        TypedTensor scale = randomTensor(normalized, parameterType, seed++);
        TypedTensor mean =
            randomTensor(statShape, parameterType, seed++, -0.5, 0.5);
        TypedTensor invStd =
            randomTensor(statShape, parameterType, seed++, 0.5, 2);
        auto outputs = [&] {
          return std::vector<TypedTensor>{
              TypedTensor(layer.shape, dtype), TypedTensor(normalized, dtype),
              TypedTensor(normalized, LETHE_RT_F64)};
        };
        std::vector<TypedTensor> cpu = outputs(), groups = outputs();
        lethe_rt_tensor dyv = dy.view(), xv = x.view(), sv = scale.view(),
                        mv = mean.view(), iv = invStd.view(),
                        dxv = cpu[0].view(), dsv = cpu[1].view(),
                        dbv = cpu[2].view();
        ASSERT_EQ(lethe_rt_layer_norm_grad(context, &dyv, &xv, &sv, &mv, &iv,
                                           layer.axis, &dxv, &dsv, &dbv),
                  LETHE_RT_OK)
            << lastError();

        LayerNormGradient gradient;
        gradient.dy = dy.bytes.data();
        gradient.x = x.bytes.data();
        gradient.dx = groups[0].bytes.data();
        gradient.scale = valuesOf(scale);
        gradient.mean = valuesOf(mean);
        gradient.invStdDev = valuesOf(invStd);
        gradient.dscale = valuesOf(groups[1]);
        gradient.dbias = valuesOf(groups[2]);
        gradient.rows = mean.size();
        gradient.size = scale.size();
        dispatchFloat(dtype, [&](auto tag) {
          for (int64_t k = 0; k < gradient.size; ++k)
            gradient.column<decltype(tag)>(
                k, lanes,
                ColumnSplit::of(gradient.rows, (gradient.size + 31) / 32));
        });
        foldGroups(gradient, dtype, gradient.rows, lanes);
        // One lane adds each column's rows in order, as the CPU does; more
        // share them out, and the sums agree within rounding.
        expectSame(groups[1], cpu[1], lanes == 1, "dscale");
        expectSame(groups[2], cpu[2], lanes == 1, "dbias");
        expectSame(groups[0], cpu[0], lanes == 1, "dx");
      }
}

// Rows enough for the column kernel to cut them into chunks (ColumnSplit),
// the last one shorter: dscale and dbias, folded as the kernel folds them,
// within rounding of the CPU's.
TEST_F(NormalizationGroupsTest, LayerNormGradientColumnChunks) {
  std::vector<int64_t> shape{4200, 3}, normalized{3}, statShape{4200, 1};
  ColumnSplit split = ColumnSplit::of(4200, 1);
  ASSERT_EQ(split.chunks, 3);
  ASSERT_EQ(split.end(2, 4200) - split.first(2), 1400);
  uint64_t seed = 600;
  for (lethe_rt_dtype dtype : floatDtypes()) {
    SCOPED_TRACE(caseName(dtype, dtype, 32, seed));
    TypedTensor x = randomTensor(shape, dtype, seed++, -2, 3);
    TypedTensor dy = randomTensor(shape, dtype, seed++);
    TypedTensor scale = randomTensor(normalized, dtype, seed++);
    TypedTensor mean = randomTensor(statShape, dtype, seed++, -0.5, 0.5);
    TypedTensor invStd = randomTensor(statShape, dtype, seed++, 0.5, 2);
    std::vector<TypedTensor> cpu{TypedTensor(shape, dtype),
                                 TypedTensor(normalized, dtype),
                                 TypedTensor(normalized, LETHE_RT_F64)};
    std::vector<TypedTensor> chunked = cpu;
    lethe_rt_tensor dyv = dy.view(), xv = x.view(), sv = scale.view(),
                    mv = mean.view(), iv = invStd.view(), dxv = cpu[0].view(),
                    dsv = cpu[1].view(), dbv = cpu[2].view();
    ASSERT_EQ(lethe_rt_layer_norm_grad(context, &dyv, &xv, &sv, &mv, &iv, 1,
                                       &dxv, &dsv, &dbv),
              LETHE_RT_OK)
        << lastError();

    LayerNormGradient gradient;
    gradient.dy = dy.bytes.data();
    gradient.x = x.bytes.data();
    gradient.scale = valuesOf(scale);
    gradient.mean = valuesOf(mean);
    gradient.invStdDev = valuesOf(invStd);
    gradient.dscale = valuesOf(chunked[1]);
    gradient.dbias = valuesOf(chunked[2]);
    gradient.rows = 4200;
    gradient.size = 3;
    dispatchFloat(dtype, [&](auto tag) {
      for (int64_t k = 0; k < gradient.size; ++k)
        gradient.column<decltype(tag)>(k, 32, split);
    });
    expectSame(chunked[1], cpu[1], false, "dscale");
    expectSame(chunked[2], cpu[2], false, "dbias");
  }
}

} // namespace
