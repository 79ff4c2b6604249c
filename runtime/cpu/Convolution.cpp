//===- Convolution.cpp - Convolution kernels of the CPU backend -----------===//
//
// Part of the Lethe project.
//
//===----------------------------------------------------------------------===//
//
// conv and conv_transpose on N, C, D1..Dn tensors (n = 1 to 3) as im2col +
// GEMM (Gemm.h), one image and one group at a time: the column buffer has
// (C/group) * prod(kernel) rows and prod(output spatial) columns, which is
// the workspace the cost model assumes (getWorkspaceBytes), and lives in the
// caller's workspace when it passes one (a planned step's arena block), else
// on the heap. The transposed convolution is the
// adjoint: a GEMM with the transposed weight into a column buffer, then
// col2im, which adds the columns into the output in a fixed order. The
// weight gradient multiplies the output gradient by the forward's columns
// transposed, summing the images in order.
//
//===----------------------------------------------------------------------===//

#include "CpuRuntime.h"
#include "Gemm.h"

using namespace lethe::rt;

namespace {

/// The geometry of a checked convolution (common/Checks.h).
using Geometry = ConvolutionGeometry;

/// For every kernel position and output position, the input offset it reads
/// (within one channel plane), or -1 for padding. Row-major [kernel][output].
std::vector<int64_t> makeIndexMap(const Geometry &geometry) {
  int32_t rank = geometry.rank;
  std::vector<int64_t> strides(rank, 1);
  for (int32_t dim = rank - 1; dim > 0; --dim)
    strides[dim - 1] = strides[dim] * geometry.input[dim];
  std::vector<int64_t> map;
  map.reserve(geometry.kernelSize * geometry.outputSize);
  std::vector<int64_t> k(rank, 0);
  for (int64_t kernel = 0; kernel < geometry.kernelSize; ++kernel) {
    std::vector<int64_t> o(rank, 0);
    for (int64_t output = 0; output < geometry.outputSize; ++output) {
      int64_t offset = 0;
      for (int32_t dim = 0; dim < rank && offset >= 0; ++dim) {
        int64_t position = o[dim] * geometry.strides[dim] -
                           geometry.padBegin[dim] +
                           k[dim] * geometry.dilations[dim];
        offset = position < 0 || position >= geometry.input[dim]
                     ? -1
                     : offset + position * strides[dim];
      }
      map.push_back(offset);
      for (int32_t dim = rank; dim-- > 0;) {
        if (++o[dim] < geometry.output[dim])
          break;
        o[dim] = 0;
      }
    }
    for (int32_t dim = rank; dim-- > 0;) {
      if (++k[dim] < geometry.kernel[dim])
        break;
      k[dim] = 0;
    }
  }
  return map;
}

/// im2col for `channels` channel planes from `plane`: row (c, k) of
/// `column` holds, for every output position, the input element that kernel
/// position k of channel c reads (0 in padding).
template <typename T>
void im2col(const T *plane, int64_t channels, const Geometry &geometry,
            const std::vector<int64_t> &indexMap, T *column) {
  int64_t columns = geometry.outputSize;
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t k = 0; k < geometry.kernelSize; ++k) {
      T *row = column + (c * geometry.kernelSize + k) * columns;
      const int64_t *map = indexMap.data() + k * columns;
      const T *channel = plane + c * geometry.inputSize;
      for (int64_t o = 0; o < columns; ++o)
        row[o] = map[o] < 0 ? T{} : channel[map[o]];
    }
}

/// The alignment lethe_rt.h promises a workspace's data: enough for every
/// element type.
constexpr size_t kWorkspaceAlignment = 8;

/// A kernel's column buffer: in the caller's workspace when it gives one,
/// else on the heap.
template <typename U> struct ColumnBuffer {
  U *data = nullptr;
  std::vector<U> heap;

  /// Points `data` at room for `count` elements: `workspace`, which must
  /// hold them, or the heap when it is null. False after recording an error.
  bool acquire(lethe_rt_context *context, const char *kernel,
               const lethe_rt_tensor *workspace, int64_t count) {
    if (!workspace) {
      heap.resize(count);
      data = heap.data();
      return true;
    }
    if (!checkWorkspace(context, kernel, workspace,
                        count * static_cast<int64_t>(sizeof(U)),
                        "the column buffer", kWorkspaceAlignment))
      return false;
    data = static_cast<U *>(workspace->data);
    return true;
  }
};

} // namespace

extern "C" lethe_rt_status
lethe_rt_conv(lethe_rt_context *context, const lethe_rt_tensor *x,
              const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
              const int64_t *strides, const int64_t *pads,
              const int64_t *dilations, int64_t group,
              const lethe_rt_tensor *out, const lethe_rt_tensor *workspace) {
  const char *kernel = "lethe_rt_conv";
  Geometry geometry;
  if (!checkConvolution(context, kernel, x, w, bias, out, strides, pads,
                        dilations, group, {"w", "out"}, geometry))
    return LETHE_RT_ERROR;
  int64_t batch = x->shape[0], channels = x->shape[1], filters = w->shape[0];
  std::vector<int64_t> indexMap = makeIndexMap(geometry);
  int64_t groupChannels = channels / group, groupFilters = filters / group;
  int64_t rows = groupChannels * geometry.kernelSize;
  int64_t columns = geometry.outputSize;

  lethe_rt_status status = LETHE_RT_OK;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T *input = static_cast<const T *>(x->data);
    const T *weight = static_cast<const T *>(w->data);
    ColumnBuffer<T> buffer;
    if (!buffer.acquire(context, kernel, workspace, rows * columns)) {
      status = LETHE_RT_ERROR;
      return;
    }
    T *column = buffer.data;
    std::vector<C> product(groupFilters * columns);
    GemmWorkspace<C> gemm;
    for (int64_t image = 0; image < batch; ++image) {
      for (int64_t g = 0; g < group; ++g) {
        im2col(input +
                   (image * channels + g * groupChannels) * geometry.inputSize,
               groupChannels, geometry, indexMap, column);
        multiplyMatrices<T>(
            groupFilters, columns, rows,
            MatrixRef<T>{weight + g * groupFilters * rows, rows, 1},
            MatrixRef<T>{column, columns, 1}, product.data(), columns, gemm);
        for (int64_t f = 0; f < groupFilters; ++f) {
          int64_t filter = g * groupFilters + f;
          C shift = bias ? load<T>(bias->data, filter) : C(0);
          int64_t base = (image * filters + filter) * columns;
          for (int64_t o = 0; o < columns; ++o)
            store<T>(out->data, base + o,
                     bias ? product[f * columns + o] + shift
                          : product[f * columns + o]);
        }
      }
    }
  });
  return status;
}

extern "C" lethe_rt_status
lethe_rt_conv_transpose(lethe_rt_context *context, const lethe_rt_tensor *x,
                        const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
                        const int64_t *strides, const int64_t *pads,
                        const int64_t *dilations, const int64_t *output_padding,
                        int64_t group, const lethe_rt_tensor *out,
                        const lethe_rt_tensor *workspace) {
  const char *kernel = "lethe_rt_conv_transpose";
  Geometry geometry;
  if (!checkConvTranspose(context, kernel, x, w, bias, out, strides, pads,
                          dilations, output_padding, group, geometry))
    return LETHE_RT_ERROR;
  int64_t batch = x->shape[0], channels = x->shape[1], filters = out->shape[1];
  std::vector<int64_t> indexMap = makeIndexMap(geometry);
  int64_t groupChannels = channels / group, groupFilters = filters / group;
  int64_t rows = groupFilters * geometry.kernelSize;
  int64_t columns = geometry.outputSize; // positions of x

  lethe_rt_status status = LETHE_RT_OK;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T *input = static_cast<const T *>(x->data);
    const T *weight = static_cast<const T *>(w->data);
    // The columns hold the GEMM's products, in the compute precision.
    ColumnBuffer<C> buffer;
    if (!buffer.acquire(context, kernel, workspace, rows * columns)) {
      status = LETHE_RT_ERROR;
      return;
    }
    C *column = buffer.data;
    std::vector<C> result(filters * geometry.inputSize);
    GemmWorkspace<C> gemm;
    for (int64_t image = 0; image < batch; ++image) {
      std::fill(result.begin(), result.end(), C(0));
      for (int64_t g = 0; g < group; ++g) {
        // column = w_g^T (rows x groupChannels) * x_g (groupChannels x
        // columns), w_g being groupChannels x rows.
        multiplyMatrices<T>(
            rows, columns, groupChannels,
            MatrixRef<T>{weight + g * groupChannels * rows, 1, rows},
            MatrixRef<T>{input +
                             (image * channels + g * groupChannels) * columns,
                         columns, 1},
            column, columns, gemm);
        // col2im: add each column entry where the convolution would have
        // read it from.
        for (int64_t f = 0; f < groupFilters; ++f) {
          C *plane =
              result.data() + (g * groupFilters + f) * geometry.inputSize;
          for (int64_t k = 0; k < geometry.kernelSize; ++k) {
            const C *row = column + (f * geometry.kernelSize + k) * columns;
            const int64_t *map = indexMap.data() + k * columns;
            for (int64_t o = 0; o < columns; ++o)
              if (map[o] >= 0)
                plane[map[o]] += row[o];
          }
        }
      }
      for (int64_t filter = 0; filter < filters; ++filter) {
        C shift = bias ? load<T>(bias->data, filter) : C(0);
        int64_t base = (image * filters + filter) * geometry.inputSize;
        for (int64_t i = 0; i < geometry.inputSize; ++i)
          store<T>(out->data, base + i,
                   bias ? result[filter * geometry.inputSize + i] + shift
                        : result[filter * geometry.inputSize + i]);
      }
    }
  });
  return status;
}

extern "C" lethe_rt_status
lethe_rt_conv_grad_weight(lethe_rt_context *context, const lethe_rt_tensor *x,
                          const lethe_rt_tensor *dy, const int64_t *strides,
                          const int64_t *pads, const int64_t *dilations,
                          int64_t group, const lethe_rt_tensor *dw,
                          const lethe_rt_tensor *workspace) {
  const char *kernel = "lethe_rt_conv_grad_weight";
  // dy plays the convolution's output, dw its weight.
  Geometry geometry;
  if (!checkConvolution(context, kernel, x, dw, /*bias=*/nullptr, dy, strides,
                        pads, dilations, group, {"dw", "dy"}, geometry))
    return LETHE_RT_ERROR;
  int64_t batch = x->shape[0], channels = x->shape[1], filters = dw->shape[0];
  std::vector<int64_t> indexMap = makeIndexMap(geometry);
  int64_t groupChannels = channels / group, groupFilters = filters / group;
  int64_t rows = groupChannels * geometry.kernelSize;
  int64_t columns = geometry.outputSize;

  lethe_rt_status status = LETHE_RT_OK;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T *input = static_cast<const T *>(x->data);
    const T *gradient = static_cast<const T *>(dy->data);
    ColumnBuffer<T> buffer;
    if (!buffer.acquire(context, kernel, workspace, rows * columns)) {
      status = LETHE_RT_ERROR;
      return;
    }
    T *column = buffer.data;
    std::vector<C> product(groupFilters * rows), sum(filters * rows, C(0));
    GemmWorkspace<C> gemm;
    for (int64_t image = 0; image < batch; ++image) {
      for (int64_t g = 0; g < group; ++g) {
        // The forward's columns, then dw_g += dy_g (groupFilters x columns)
        // * column^T (columns x rows), images in order.
        im2col(input +
                   (image * channels + g * groupChannels) * geometry.inputSize,
               groupChannels, geometry, indexMap, column);
        multiplyMatrices<T>(
            groupFilters, rows, columns,
            MatrixRef<T>{gradient +
                             (image * filters + g * groupFilters) * columns,
                         columns, 1},
            MatrixRef<T>{column, 1, columns}, product.data(), rows, gemm);
        C *target = sum.data() + g * groupFilters * rows;
        for (int64_t i = 0; i < groupFilters * rows; ++i)
          target[i] += product[i];
      }
    }
    for (int64_t i = 0; i < filters * rows; ++i)
      store<T>(dw->data, i, sum[i]);
  });
  return status;
}
