/*===- lethe_rt.h - The Lethe runtime C ABI -------------------------------===*\
|*                                                                            *|
|* Part of the Lethe project.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * The C ABI that Lethe's reference interpreter (lethe-run) and its planned
 * executables call. One entry per kernel; every kernel takes tensor
 * descriptors whose shapes are static (known when the IR was compiled) and
 * whose data is contiguous row-major. Attribute arguments mirror the `lethe`
 * dialect's op attributes (ONNX semantics); where the dialect infers a result
 * shape, the kernel reads it from the output descriptor.
 *
 * Backends: `cpu` (runtime/cpu; host memory, deterministic: the same inputs
 * give the same bits, which recompute relies on) and, later, `cuda`.
 *
 * Errors: every kernel returns LETHE_RT_OK or LETHE_RT_ERROR; after an
 * error, lethe_rt_last_error(context) returns a one-line message naming the
 * kernel and the problem. Kernels never abort on bad arguments.
 *
 * Element types: f32 and f64 are computed in their own precision; f16 and
 * bf16 are stored as such and computed in f32 (rounded to nearest even on
 * store); i1 is one byte (0 or 1). Signed (i8 to i64) and unsigned (ui8 to
 * ui64) integers wrap on overflow like two's-complement hardware.
 */

#ifndef LETHE_RT_H
#define LETHE_RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Tensors and status
 *===----------------------------------------------------------------------===*/

typedef enum lethe_rt_dtype {
  LETHE_RT_F16 = 0,
  LETHE_RT_BF16 = 1,
  LETHE_RT_F32 = 2,
  LETHE_RT_F64 = 3,
  LETHE_RT_I1 = 4,
  LETHE_RT_I8 = 5,
  LETHE_RT_I32 = 6,
  LETHE_RT_I64 = 7,
  LETHE_RT_I16 = 8,
  LETHE_RT_U8 = 9,
  LETHE_RT_U16 = 10,
  LETHE_RT_U32 = 11,
  LETHE_RT_U64 = 12,
} lethe_rt_dtype;

/* A view of a contiguous row-major tensor. `shape` has `rank` entries (none
 * for a scalar); the descriptor does not own `data` or `shape`. */
typedef struct lethe_rt_tensor {
  void *data;
  lethe_rt_dtype dtype;
  int32_t rank;
  const int64_t *shape;
} lethe_rt_tensor;

typedef enum lethe_rt_status {
  LETHE_RT_OK = 0,
  LETHE_RT_ERROR = 1,
} lethe_rt_status;

/* A runtime context: it holds the last error, the memory and the streams
 * (see "Memory and streams"), and on the CUDA backend the library handles. A
 * context is used by one thread at a time. */
typedef struct lethe_rt_context lethe_rt_context;

/* Creates a context; NULL when out of memory. */
lethe_rt_context *lethe_rt_context_create(void);

/* Destroys a context created by lethe_rt_context_create (NULL is a no-op). */
void lethe_rt_context_destroy(lethe_rt_context *context);

/* The message of the last error on `context` ("" if none). */
const char *lethe_rt_last_error(const lethe_rt_context *context);

/* Bytes one element of `dtype` occupies. */
size_t lethe_rt_dtype_size(lethe_rt_dtype dtype);

/* Number of elements of `tensor` (1 for a scalar). */
int64_t lethe_rt_num_elements(const lethe_rt_tensor *tensor);

/*===----------------------------------------------------------------------===*
 * Elementwise
 *===----------------------------------------------------------------------===*/

typedef enum lethe_rt_unary_kind {
  LETHE_RT_NEG,
  LETHE_RT_RELU,
  LETHE_RT_LEAKY_RELU, /* alpha: the negative slope */
  LETHE_RT_SIGMOID,
  LETHE_RT_TANH,
  LETHE_RT_GELU,      /* exact, with erf */
  LETHE_RT_GELU_TANH, /* the tanh approximation */
  LETHE_RT_ERF,
  LETHE_RT_EXP,
  LETHE_RT_LOG,
  LETHE_RT_SQRT,
} lethe_rt_unary_kind;

/* out = f(in) elementwise; `in` and `out` have the same shape and a float
 * dtype. `alpha` and `beta` are the parameters noted above (else ignored). */
lethe_rt_status lethe_rt_unary(lethe_rt_context *context,
                               lethe_rt_unary_kind kind, double alpha,
                               double beta, const lethe_rt_tensor *in,
                               const lethe_rt_tensor *out);

/* out = min(max(in, *min), *max) elementwise (ONNX Clip), for every dtype but
 * i1. `min` and `max` each point to one element of in's dtype, or are NULL
 * for no bound; with *min > *max every element becomes *max, and NaN stays
 * NaN. */
lethe_rt_status lethe_rt_clip(lethe_rt_context *context,
                              const lethe_rt_tensor *in, const void *min,
                              const void *max, const lethe_rt_tensor *out);

typedef enum lethe_rt_binary_kind {
  LETHE_RT_ADD,
  LETHE_RT_SUB,
  LETHE_RT_MUL,
  LETHE_RT_DIV, /* integer division truncates toward zero */
  LETHE_RT_POW,
} lethe_rt_binary_kind;

/* out = lhs (op) rhs with ONNX multidirectional broadcasting. */
lethe_rt_status lethe_rt_binary(lethe_rt_context *context,
                                lethe_rt_binary_kind kind,
                                const lethe_rt_tensor *lhs,
                                const lethe_rt_tensor *rhs,
                                const lethe_rt_tensor *out);

/* out = condition ? lhs : rhs, the three broadcast together. */
lethe_rt_status lethe_rt_where(lethe_rt_context *context,
                               const lethe_rt_tensor *condition,
                               const lethe_rt_tensor *lhs,
                               const lethe_rt_tensor *rhs,
                               const lethe_rt_tensor *out);

/* out = in converted to out's dtype (ONNX Cast: float to integer truncates
 * toward zero and saturates at the integer's range, NaN giving 0; integer to
 * narrower integer keeps the low bits; anything to i1 is x != 0). */
lethe_rt_status lethe_rt_cast(lethe_rt_context *context,
                              const lethe_rt_tensor *in,
                              const lethe_rt_tensor *out);

/* out = in, element for element (reshape, flatten, squeeze, unsqueeze and
 * the like, which change the shape but not the data). */
lethe_rt_status lethe_rt_copy(lethe_rt_context *context,
                              const lethe_rt_tensor *in,
                              const lethe_rt_tensor *out);

/*===----------------------------------------------------------------------===*
 * Matrix products
 *===----------------------------------------------------------------------===*/

/* numpy matmul (ONNX MatMul), batch dimensions broadcast. */
lethe_rt_status lethe_rt_matmul(lethe_rt_context *context,
                                const lethe_rt_tensor *lhs,
                                const lethe_rt_tensor *rhs,
                                const lethe_rt_tensor *out);

/* out = alpha * op(a) * op(b) + beta * c (ONNX Gemm); `c` may be NULL and
 * broadcasts to out's (M, N). */
lethe_rt_status lethe_rt_gemm(lethe_rt_context *context,
                              const lethe_rt_tensor *a,
                              const lethe_rt_tensor *b,
                              const lethe_rt_tensor *c, double alpha,
                              double beta, int trans_a, int trans_b,
                              const lethe_rt_tensor *out);

/*===----------------------------------------------------------------------===*
 * Convolution and pooling (layout N, C, D1..Dn; n = rank - 2 spatial dims;
 * `pads` has 2n entries, all begins then all ends)
 *
 * The convolutions take a trailing `workspace`: scratch memory the kernel may
 * use while it runs. NULL lets the backend find its own (the CPU backend
 * allocates it on the heap). Otherwise it is a byte buffer, a rank-1
 * LETHE_RT_U8 tensor whose one dim is its size in bytes, with data aligned to
 * 8 bytes (the arena's blocks are aligned to 256), holding at least the op's
 * workspace bytes -- the cost interface's getWorkspaceBytes() of the lethe
 * op, or the more that a measured profile found the backend asks for
 * (`lethe.workspace_bytes`; lethe_rt_op_workspace_wanted), for which a
 * planned step gives each such op a block of its arena
 * (`lethe.workspace_offset`) -- and the kernel uses it instead of
 * allocating: the CPU backend keeps its im2col column buffer there, the
 * CUDA backend cuDNN's workspace. Its contents before
 * and after the call mean nothing. A buffer that is too small is an error
 * that names the bytes needed.
 *===----------------------------------------------------------------------===*/

/* ONNX Conv; `bias` may be NULL. */
lethe_rt_status
lethe_rt_conv(lethe_rt_context *context, const lethe_rt_tensor *x,
              const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
              const int64_t *strides, const int64_t *pads,
              const int64_t *dilations, int64_t group,
              const lethe_rt_tensor *out, const lethe_rt_tensor *workspace);

/* ONNX ConvTranspose (output_shape already resolved into pads). */
lethe_rt_status
lethe_rt_conv_transpose(lethe_rt_context *context, const lethe_rt_tensor *x,
                        const lethe_rt_tensor *w, const lethe_rt_tensor *bias,
                        const int64_t *strides, const int64_t *pads,
                        const int64_t *dilations, const int64_t *output_padding,
                        int64_t group, const lethe_rt_tensor *out,
                        const lethe_rt_tensor *workspace);

/* ONNX MaxPool, for float and integer dtypes (not i1); padding never wins
 * the max, NaN wins over numbers, and of equal maxima the first
 * in the window (row-major) wins. The output shape (which encodes ceil_mode)
 * is out's. `indices` (i64, out's shape) is optional: NULL, or it receives
 * where each max is in x, as ONNX's Indices output: an offset into x
 * flattened row-major (storage_order 0), or with each N, C plane's spatial
 * dims flattened column-major (storage_order 1). */
lethe_rt_status
lethe_rt_max_pool(lethe_rt_context *context, const lethe_rt_tensor *x,
                  const int64_t *kernel_shape, const int64_t *strides,
                  const int64_t *pads, const int64_t *dilations,
                  int64_t storage_order, const lethe_rt_tensor *out,
                  const lethe_rt_tensor *indices);

/* ONNX AveragePool; with count_include_pad, padding counts in the divisor
 * (but not the part of a ceil_mode window past the padded input). */
lethe_rt_status lethe_rt_avg_pool(lethe_rt_context *context,
                                  const lethe_rt_tensor *x,
                                  const int64_t *kernel_shape,
                                  const int64_t *strides, const int64_t *pads,
                                  int count_include_pad,
                                  const lethe_rt_tensor *out);

/* The weight gradient of lethe_rt_conv: dw (M, C/group, k...) from the
 * convolution's input x (N, C, D...) and its output gradient dy (N, M,
 * O...). The input gradient is lethe_rt_conv_transpose of dy with w. */
lethe_rt_status
lethe_rt_conv_grad_weight(lethe_rt_context *context, const lethe_rt_tensor *x,
                          const lethe_rt_tensor *dy, const int64_t *strides,
                          const int64_t *pads, const int64_t *dilations,
                          int64_t group, const lethe_rt_tensor *dw,
                          const lethe_rt_tensor *workspace);

/* The input gradient of lethe_rt_max_pool (float dtypes): dx = 0, then each
 * element of dy is added at its window's maximum in x (found as the forward
 * finds it). */
lethe_rt_status
lethe_rt_max_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const lethe_rt_tensor *x, const int64_t *kernel_shape,
                       const int64_t *strides, const int64_t *pads,
                       const int64_t *dilations, const lethe_rt_tensor *dx);

/* The input gradient of lethe_rt_avg_pool: each element of dy, divided by
 * its window's divisor, is added to the window's elements of dx. */
lethe_rt_status
lethe_rt_avg_pool_grad(lethe_rt_context *context, const lethe_rt_tensor *dy,
                       const int64_t *kernel_shape, const int64_t *strides,
                       const int64_t *pads, int count_include_pad,
                       const lethe_rt_tensor *dx);

/* ONNX GlobalAveragePool. */
lethe_rt_status lethe_rt_global_avg_pool(lethe_rt_context *context,
                                         const lethe_rt_tensor *x,
                                         const lethe_rt_tensor *out);

/*===----------------------------------------------------------------------===*
 * Normalization, softmax, dropout
 *===----------------------------------------------------------------------===*/

/* ONNX BatchNormalization, inference: y = scale * (x - mean) /
 * sqrt(var + epsilon) + bias, per channel (axis 1). */
lethe_rt_status
lethe_rt_batch_norm(lethe_rt_context *context, const lethe_rt_tensor *x,
                    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
                    const lethe_rt_tensor *mean, const lethe_rt_tensor *var,
                    double epsilon, const lethe_rt_tensor *y);

/* ONNX BatchNormalization, training mode: normalizes with the batch's mean
 * and population variance, and writes running_mean_out = running_mean *
 * momentum + batch_mean * (1 - momentum) (likewise the variance),
 * saved_mean = batch_mean, saved_inv_std = 1 / sqrt(batch_var + epsilon).
 * running_mean_out may be running_mean itself (an update in place), and
 * running_var_out running_var; no other output may overlap an input. */
lethe_rt_status lethe_rt_batch_norm_train(
    lethe_rt_context *context, const lethe_rt_tensor *x,
    const lethe_rt_tensor *scale, const lethe_rt_tensor *bias,
    const lethe_rt_tensor *running_mean, const lethe_rt_tensor *running_var,
    double epsilon, double momentum, const lethe_rt_tensor *y,
    const lethe_rt_tensor *running_mean_out,
    const lethe_rt_tensor *running_var_out, const lethe_rt_tensor *saved_mean,
    const lethe_rt_tensor *saved_inv_std);

/* ONNX LayerNormalization over the dims from `axis` (normalized, >= 0) on;
 * `bias` may be NULL; `mean` and `inv_std_dev` have x's shape with those
 * dims set to 1. */
lethe_rt_status lethe_rt_layer_norm(lethe_rt_context *context,
                                    const lethe_rt_tensor *x,
                                    const lethe_rt_tensor *scale,
                                    const lethe_rt_tensor *bias, int64_t axis,
                                    double epsilon, const lethe_rt_tensor *y,
                                    const lethe_rt_tensor *mean,
                                    const lethe_rt_tensor *inv_std_dev);

/* The gradients of lethe_rt_batch_norm_train with respect to x, scale and
 * bias, from dy, x, scale and the saved batch statistics. */
lethe_rt_status lethe_rt_batch_norm_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *saved_mean, const lethe_rt_tensor *saved_inv_std,
    const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias);

/* The gradients of lethe_rt_layer_norm with respect to x, scale and bias,
 * from dy, x, scale (of the normalized shape x.shape[axis:]) and the
 * statistics the forward returned; dscale and dbias have the normalized
 * shape. */
lethe_rt_status lethe_rt_layer_norm_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dy,
    const lethe_rt_tensor *x, const lethe_rt_tensor *scale,
    const lethe_rt_tensor *mean, const lethe_rt_tensor *inv_std_dev,
    int64_t axis, const lethe_rt_tensor *dx, const lethe_rt_tensor *dscale,
    const lethe_rt_tensor *dbias);

/* Softmax (log_softmax when `log` is non-zero) along `axis` (>= 0). */
lethe_rt_status lethe_rt_softmax(lethe_rt_context *context,
                                 const lethe_rt_tensor *x, int64_t axis,
                                 int log, const lethe_rt_tensor *out);

/* The input gradient of lethe_rt_softmax (log_softmax when `log` is
 * non-zero) along `axis` (>= 0), from dy and the forward's output y:
 * y (dy - sum(dy y)), or dy - exp(y) sum(dy), summed along the axis in f64. */
lethe_rt_status lethe_rt_softmax_grad(lethe_rt_context *context,
                                      const lethe_rt_tensor *dy,
                                      const lethe_rt_tensor *y, int64_t axis,
                                      int log, const lethe_rt_tensor *dx);

/* Dropout. In training, element i is kept with probability 1 - ratio,
 * decided by a counter-based generator keyed by (seed, step, i), and scaled
 * by 1 / (1 - ratio); the same arguments give the same mask on any backend,
 * which recompute relies on. `step` is the step counter, a scalar i64 in
 * the same memory as the other tensors (so that a device backend reads it
 * where the optimizer updates it, without a copy to the host), or NULL for
 * step 0. Outside training out = x and the mask is all ones. `mask` (i1)
 * may be NULL. */
lethe_rt_status lethe_rt_dropout(lethe_rt_context *context,
                                 const lethe_rt_tensor *x, double ratio,
                                 uint64_t seed, const lethe_rt_tensor *step,
                                 int training, const lethe_rt_tensor *out,
                                 const lethe_rt_tensor *mask);

/*===----------------------------------------------------------------------===*
 * Reductions
 *===----------------------------------------------------------------------===*/

typedef enum lethe_rt_reduce_kind {
  LETHE_RT_REDUCE_SUM,
  LETHE_RT_REDUCE_MEAN,
  LETHE_RT_REDUCE_MAX,
} lethe_rt_reduce_kind;

/* Reduces x over `axes` (normalized, >= 0, `num_axes` of them; none means
 * all). out has x's rank with those dims 1 (keepdims) or removed: its data
 * layout is the same either way. */
lethe_rt_status lethe_rt_reduce(lethe_rt_context *context,
                                lethe_rt_reduce_kind kind,
                                const lethe_rt_tensor *x, const int64_t *axes,
                                int64_t num_axes, const lethe_rt_tensor *out);

/* The input gradient of lethe_rt_reduce with LETHE_RT_REDUCE_MAX (float
 * dtypes): the maxima of each reduced group (x equal to y, the forward's
 * result) share its gradient dy equally, the other elements get 0. y and dy
 * have out's shape (with or without the reduced dims). */
lethe_rt_status lethe_rt_reduce_max_grad(lethe_rt_context *context,
                                         const lethe_rt_tensor *dy,
                                         const lethe_rt_tensor *x,
                                         const lethe_rt_tensor *y,
                                         const int64_t *axes, int64_t num_axes,
                                         const lethe_rt_tensor *dx);

/*===----------------------------------------------------------------------===*
 * Data movement
 *===----------------------------------------------------------------------===*/

/* out = x with its dims permuted: out dim i is x dim perm[i]. */
lethe_rt_status lethe_rt_transpose(lethe_rt_context *context,
                                   const lethe_rt_tensor *x,
                                   const int64_t *perm,
                                   const lethe_rt_tensor *out);

/* Concatenates `num_inputs` tensors along `axis` (>= 0). */
lethe_rt_status lethe_rt_concat(lethe_rt_context *context,
                                const lethe_rt_tensor *const *inputs,
                                int64_t num_inputs, int64_t axis,
                                const lethe_rt_tensor *out);

/* Splits x along `axis` (>= 0) into `num_outputs` consecutive pieces, the
 * sizes being the outputs' dims along the axis. */
lethe_rt_status lethe_rt_split(lethe_rt_context *context,
                               const lethe_rt_tensor *x, int64_t axis,
                               const lethe_rt_tensor *const *outputs,
                               int64_t num_outputs);

/* out[i0..] = x[starts[d] + i_d * steps[d] ...] for every dim d (starts
 * already clamped and steps non-zero, one per dim of x). */
lethe_rt_status lethe_rt_slice(lethe_rt_context *context,
                               const lethe_rt_tensor *x, const int64_t *starts,
                               const int64_t *steps,
                               const lethe_rt_tensor *out);

/* ONNX Gather along `axis` (>= 0); negative indices count from the end; an
 * index out of range is an error. */
lethe_rt_status lethe_rt_gather(lethe_rt_context *context,
                                const lethe_rt_tensor *data,
                                const lethe_rt_tensor *indices, int64_t axis,
                                const lethe_rt_tensor *out);

/* The input gradient of lethe_rt_slice: dx = 0, then dy written at the
 * elements the slice (same starts and steps) reads. */
lethe_rt_status lethe_rt_slice_grad(lethe_rt_context *context,
                                    const lethe_rt_tensor *dy,
                                    const int64_t *starts, const int64_t *steps,
                                    const lethe_rt_tensor *dx);

/* The data gradient of lethe_rt_gather (float dtypes): dx = 0, then each
 * slice of dy added at the index it was gathered from (indices in order). */
lethe_rt_status lethe_rt_gather_grad(lethe_rt_context *context,
                                     const lethe_rt_tensor *dy,
                                     const lethe_rt_tensor *indices,
                                     int64_t axis, const lethe_rt_tensor *dx);

/* Broadcasts x to out's shape (ONNX Expand). */
lethe_rt_status lethe_rt_expand(lethe_rt_context *context,
                                const lethe_rt_tensor *x,
                                const lethe_rt_tensor *out);

/* How ONNX Resize maps an output coordinate back to the input (attribute
 * coordinate_transformation_mode). */
typedef enum lethe_rt_coordinate_mode {
  LETHE_RT_HALF_PIXEL,
  LETHE_RT_ASYMMETRIC,
  LETHE_RT_ALIGN_CORNERS,
  LETHE_RT_PYTORCH_HALF_PIXEL,
  LETHE_RT_TF_HALF_PIXEL_FOR_NN,
  LETHE_RT_TF_CROP_AND_RESIZE,
} lethe_rt_coordinate_mode;

/* How mode nearest rounds a coordinate to an index (attribute nearest_mode). */
typedef enum lethe_rt_nearest_mode {
  LETHE_RT_ROUND_PREFER_FLOOR,
  LETHE_RT_ROUND_PREFER_CEIL,
  LETHE_RT_FLOOR,
  LETHE_RT_CEIL,
} lethe_rt_nearest_mode;

typedef enum lethe_rt_resize_mode {
  LETHE_RT_RESIZE_NEAREST,
  LETHE_RT_RESIZE_LINEAR, /* N-linear: 2 points per dim */
  LETHE_RT_RESIZE_CUBIC,  /* N-cubic (Keys): 4 points per dim */
} lethe_rt_resize_mode;

/* ONNX Resize's attributes. */
typedef struct lethe_rt_resize_options {
  lethe_rt_resize_mode mode;
  lethe_rt_coordinate_mode coordinates;
  lethe_rt_nearest_mode nearest; /* mode nearest only */
  double cubic_coeff_a;          /* mode cubic only (ONNX's default: -0.75) */
  /* Linear and cubic: points outside the input get weight 0 and the other
   * weights are scaled to sum to 1 (otherwise they repeat the edge). */
  int32_t exclude_outside;
  /* LETHE_RT_TF_CROP_AND_RESIZE only: the region of interest, x's rank
   * starts then as many ends, in coordinates normalized to [0, 1], and the
   * value of output elements that map outside the input. NULL and ignored
   * otherwise. */
  const double *roi;
  double extrapolation_value;
} lethe_rt_resize_options;

/* ONNX Resize of x by one scale per dim (out's shape is the resized shape).
 * Mode nearest copies elements of any dtype; linear and cubic need a float
 * dtype and compute in double. */
lethe_rt_status lethe_rt_resize(lethe_rt_context *context,
                                const lethe_rt_tensor *x, const double *scales,
                                const lethe_rt_resize_options *options,
                                const lethe_rt_tensor *out);

/* The input gradient of lethe_rt_resize (float dtypes; the adjoint of the
 * resize): dx (the forward's input shape) from dy (its output shape). */
lethe_rt_status lethe_rt_resize_grad(lethe_rt_context *context,
                                     const lethe_rt_tensor *dy,
                                     const double *scales,
                                     const lethe_rt_resize_options *options,
                                     const lethe_rt_tensor *dx);

/*===----------------------------------------------------------------------===*
 * Losses (reduction: none, sum or mean; the weighted mean divides by the sum
 * of the weights of the counted elements, as ONNX does)
 *===----------------------------------------------------------------------===*/

typedef enum lethe_rt_reduction {
  LETHE_RT_REDUCTION_NONE,
  LETHE_RT_REDUCTION_SUM,
  LETHE_RT_REDUCTION_MEAN,
} lethe_rt_reduction;

/* ONNX SoftmaxCrossEntropyLoss: scores (N, C, D...), labels (N, D...),
 * `weights` (C) may be NULL; elements whose label equals ignore_index (when
 * has_ignore_index) count for nothing. Writes the loss and log_prob (the
 * log-softmax of the scores along axis 1). */
lethe_rt_status lethe_rt_softmax_cross_entropy(
    lethe_rt_context *context, const lethe_rt_tensor *scores,
    const lethe_rt_tensor *labels, const lethe_rt_tensor *weights,
    lethe_rt_reduction reduction, int has_ignore_index, int64_t ignore_index,
    const lethe_rt_tensor *loss, const lethe_rt_tensor *log_prob);

/* ONNX NegativeLogLikelihoodLoss on log-probabilities (N, C, D...). */
lethe_rt_status lethe_rt_nll(lethe_rt_context *context,
                             const lethe_rt_tensor *input,
                             const lethe_rt_tensor *target,
                             const lethe_rt_tensor *weight,
                             lethe_rt_reduction reduction, int has_ignore_index,
                             int64_t ignore_index, const lethe_rt_tensor *loss);

/* Mean squared error (PyTorch's MSELoss): (a - b)^2 reduced. */
lethe_rt_status lethe_rt_mse(lethe_rt_context *context,
                             const lethe_rt_tensor *a, const lethe_rt_tensor *b,
                             lethe_rt_reduction reduction,
                             const lethe_rt_tensor *loss);

/*===----------------------------------------------------------------------===*
 * Optimizer updates (ONNX ai.onnx.preview.training semantics, one tensor
 * each). x, g, the state tensors and the outputs have one shape and one float
 * dtype, computed in its compute type (f32 for f16 and bf16) and rounded once
 * on store; `lr` is a scalar (rank 0) of f32 or f64, `step` a scalar i64.
 * Each output may be the very tensor of an input (an update in place) or
 * must not overlap any input or other output.
 *===----------------------------------------------------------------------===*/

/* x_new = x - lr * (norm_coefficient * x + g). */
lethe_rt_status
lethe_rt_sgd_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                    const lethe_rt_tensor *x, const lethe_rt_tensor *g,
                    double norm_coefficient, const lethe_rt_tensor *x_new);

/* ONNX Momentum: with gr = norm_coefficient * x + g and b = beta when
 * step > 0, else 1: v_new = alpha * v + b * gr; x_new = x - lr * v_new, or
 * with `nesterov` non-zero x_new = x - lr * (gr + alpha * v_new). */
lethe_rt_status
lethe_rt_momentum_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                         const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                         const lethe_rt_tensor *g, const lethe_rt_tensor *v,
                         double alpha, double beta, double norm_coefficient,
                         int nesterov, const lethe_rt_tensor *x_new,
                         const lethe_rt_tensor *v_new);

/* ONNX Adagrad: with r = lr / (1 + step * decay_factor) and gr =
 * norm_coefficient * x + g: h_new = h + gr * gr; x_new = x - r * gr /
 * (sqrt(h_new) + epsilon). */
lethe_rt_status
lethe_rt_adagrad_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                        const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                        const lethe_rt_tensor *g, const lethe_rt_tensor *h,
                        double decay_factor, double epsilon,
                        double norm_coefficient, const lethe_rt_tensor *x_new,
                        const lethe_rt_tensor *h_new);

/* ONNX Adam with AdamW's decoupled weight decay: with gr = norm_coefficient
 * * x + g: v_new = alpha * v + (1 - alpha) * gr; h_new = beta * h + (1 -
 * beta) * gr * gr; r = lr * sqrt(1 - beta^step) / (1 - alpha^step) when
 * step > 0, else lr; x_new = (1 - norm_coefficient_post) * (x * (1 - lr *
 * weight_decay) - r * (v_new / (sqrt(h_new) + epsilon))). */
lethe_rt_status
lethe_rt_adam_update(lethe_rt_context *context, const lethe_rt_tensor *lr,
                     const lethe_rt_tensor *step, const lethe_rt_tensor *x,
                     const lethe_rt_tensor *g, const lethe_rt_tensor *v,
                     const lethe_rt_tensor *h, double alpha, double beta,
                     double epsilon, double norm_coefficient,
                     double norm_coefficient_post, double weight_decay,
                     const lethe_rt_tensor *x_new, const lethe_rt_tensor *v_new,
                     const lethe_rt_tensor *h_new);

/*===----------------------------------------------------------------------===*
 * Gradients (the backward of the kernels above; f16 and bf16 compute in f32,
 * the loss gradients in f64, each result rounded once to its dtype)
 *===----------------------------------------------------------------------===*/

/* What each kind's `saved` tensor is (the forward's input x or output y),
 * and its dx. */
typedef enum lethe_rt_activation_grad_kind {
  LETHE_RT_RELU_GRAD,       /* saved = y: dx = dy where y > 0, else 0 */
  LETHE_RT_LEAKY_RELU_GRAD, /* saved = x: dx = dy where x > 0, else alpha dy */
  LETHE_RT_GELU_GRAD,       /* saved = x: dx = dy gelu'(x), erf form */
  LETHE_RT_GELU_TANH_GRAD,  /* saved = x: dx = dy gelu'(x), tanh form */
} lethe_rt_activation_grad_kind;

/* The gradient of clip (float dtypes): dx = dy where min <= x <= max, else
 * 0 (an absent bound is -INFINITY or INFINITY; min <= max). */
lethe_rt_status lethe_rt_clip_grad(lethe_rt_context *context,
                                   const lethe_rt_tensor *dy,
                                   const lethe_rt_tensor *x, double min,
                                   double max, const lethe_rt_tensor *dx);

/* dx = dy * f'(...) elementwise for the activation `kind`; dy, saved and dx
 * have the same shape and float dtype; alpha is LeakyRelu's (else ignored). */
lethe_rt_status lethe_rt_activation_grad(lethe_rt_context *context,
                                         lethe_rt_activation_grad_kind kind,
                                         double alpha,
                                         const lethe_rt_tensor *dy,
                                         const lethe_rt_tensor *saved,
                                         const lethe_rt_tensor *dx);

/* The gradient of lethe_rt_softmax_cross_entropy with respect to its scores:
 *   dscores[n, c, d...] = g(n, d...) * w(label)
 *                         * (exp(log_prob[n, c, d...]) - [c == label]),
 * where label = labels[n, d...], w is weights[label] (1 without weights), and
 * g is dloss (a scalar) for reduction sum, dloss divided by the sum of the
 * weights of the counted elements (their number without weights) for mean
 * (0 when that sum is 0), and dloss[n, d...] for none; an ignored element
 * (label == ignore_index when has_ignore_index) gets 0 in every class.
 * log_prob is the forward's second output, dscores has its shape and dtype,
 * dloss has its dtype. dscores may be log_prob itself (in place). */
lethe_rt_status lethe_rt_softmax_cross_entropy_grad(
    lethe_rt_context *context, const lethe_rt_tensor *dloss,
    const lethe_rt_tensor *log_prob, const lethe_rt_tensor *labels,
    const lethe_rt_tensor *weights, lethe_rt_reduction reduction,
    int has_ignore_index, int64_t ignore_index, const lethe_rt_tensor *dscores);

/* The gradient of lethe_rt_nll with respect to its input (N, C, D...):
 * dinput[n, c, d...] = -g(n, d...) * w(label) where c == label, else 0 (g, w
 * and ignored elements as above). dinput's shape gives C. */
lethe_rt_status
lethe_rt_nll_grad(lethe_rt_context *context, const lethe_rt_tensor *dloss,
                  const lethe_rt_tensor *target, const lethe_rt_tensor *weight,
                  lethe_rt_reduction reduction, int has_ignore_index,
                  int64_t ignore_index, const lethe_rt_tensor *dinput);

/*===----------------------------------------------------------------------===*
 * Memory and streams (shaped after MLIR's GPU runtime wrappers: mgpuMemcpy,
 * mgpuEventRecord, mgpuStreamWaitEvent)
 *===----------------------------------------------------------------------===*/
/*
 * Memory. A context owns one device arena and one host pool, allocated once
 * by lethe_rt_memory_init; a planned step allocates nothing else. Tensors live
 * at the offsets --lethe-assign-arena chose (lethe.offset, lethe.offsets and
 * lethe.host_offset; the sizes are lethe.arena's `size` and `host_size`): a
 * kernel's descriptor points at lethe_rt_arena_base(context) + offset. Both
 * bases are aligned to 256 bytes (the pass's default alignment and
 * cudaMalloc's).
 *
 * Streams. Every context has three streams, each running its work in the
 * order it was issued:
 *   compute         every kernel;
 *   device-to-host  lethe_rt_offload_async (arena to host pool);
 *   host-to-device  lethe_rt_prefetch_async (host pool to arena).
 * Work on different streams is unordered (it may overlap) unless an event
 * orders it: lethe_rt_event_record(e, s) marks the work issued to s so far,
 * and lethe_rt_stream_wait_event(t, e) makes the work issued to t afterwards
 * start only once that work is done (cudaEventRecord, cudaStreamWaitEvent).
 * An event may be recorded again; a wait uses the mark the event had when
 * the wait was issued. A correct program therefore waits
 *   - on the compute stream, for an offload before a kernel overwrites its
 *     source (the region is released), and for a prefetch before a kernel
 *     reads its destination;
 *   - on a copy stream, for the kernel that wrote an offload's source, and
 *     for the last kernel that read a prefetch destination's previous
 *     tenant;
 *   - on the host-to-device stream, for the offload that filled the host
 *     region a prefetch reads; on the device-to-host stream, for a prefetch
 *     still reading a host region that an offload would overwrite.
 * The host pool's contents are defined for the caller only after
 * lethe_rt_synchronize.
 *
 * CPU backend: copies run at the latest moment the stream order allows; a
 * missing wait shows as wrong data. Kernels run when called (an event
 * recorded on the compute stream is complete at once). Each copy stream is a
 * queue of pending copies, which run only when something forces them: a
 * compute-stream wait on an event recorded after them, which runs them at
 * the wait; a wait of the other copy stream, which runs them (up to the
 * event) before that stream's later copies; lethe_rt_synchronize; the
 * synchronous copies; lethe_rt_context_destroy. When both copy streams must
 * run, each step runs the later issued of their next operations, so that
 * copies no event orders tend to run in the reverse of their issue order. So
 * an offload whose source a kernel overwrites before waiting copies the new
 * data, a kernel that reads a prefetch's destination without waiting sees
 * the old contents, and a prefetch that does not wait for the offload
 * filling its host region reads what was there before. The arena and the
 * pool start filled with 0xFF bytes (NaN in every float type), so a read of
 * memory nothing wrote shows too. What the CPU backend cannot show is a
 * copy-stream wait missing for a kernel: kernels have finished when called.
 *
 * Errors: every call checks its arguments and, on a bad one, does nothing
 * and returns LETHE_RT_ERROR with a one-line message naming the call and the
 * problem (lethe_rt_last_error): a null pointer, memory used before
 * lethe_rt_memory_init or initialized twice, an offset + bytes past the end
 * of the arena or the pool, an unknown stream, an event that is not a live
 * event of this context (another context's, or destroyed: best effort), and
 * a wait on an event never recorded (which CUDA would treat as complete; it
 * is an error on every Lethe backend, as it is almost always a record the
 * program forgot). Calls never abort.
 */

/* The streams of a context. */
typedef enum lethe_rt_stream {
  LETHE_RT_STREAM_COMPUTE = 0,        /* kernels */
  LETHE_RT_STREAM_DEVICE_TO_HOST = 1, /* offloads */
  LETHE_RT_STREAM_HOST_TO_DEVICE = 2, /* prefetches */
} lethe_rt_stream;

/* A mark in a stream's work (cudaEvent_t); owned by the context that created
 * it. */
typedef struct lethe_rt_event lethe_rt_event;

/* Allocates the context's device arena and host pool (either size may be 0).
 * Once per context; fails when out of memory. */
lethe_rt_status lethe_rt_memory_init(lethe_rt_context *context,
                                     uint64_t arena_bytes,
                                     uint64_t host_pool_bytes);

/* The first byte of the arena (of the host pool); NULL, with an error, before
 * lethe_rt_memory_init. */
void *lethe_rt_arena_base(lethe_rt_context *context);
void *lethe_rt_host_pool_base(lethe_rt_context *context);

/* Synchronous copies between caller memory and the arena (weights in, results
 * out): they first wait for every stream, then copy `bytes` bytes. `source`
 * (`destination`) may be NULL only when `bytes` is 0. */
lethe_rt_status lethe_rt_copy_to_arena(lethe_rt_context *context,
                                       uint64_t arena_offset,
                                       const void *source, uint64_t bytes);
lethe_rt_status lethe_rt_copy_from_arena(lethe_rt_context *context,
                                         void *destination,
                                         uint64_t arena_offset, uint64_t bytes);

/* Issues a copy of `bytes` bytes from the arena to the host pool on the
 * device-to-host stream, and returns. */
lethe_rt_status lethe_rt_offload_async(lethe_rt_context *context,
                                       uint64_t host_offset,
                                       uint64_t arena_offset, uint64_t bytes);

/* Issues a copy of `bytes` bytes from the host pool to the arena on the
 * host-to-device stream, and returns. */
lethe_rt_status lethe_rt_prefetch_async(lethe_rt_context *context,
                                        uint64_t arena_offset,
                                        uint64_t host_offset, uint64_t bytes);

/* Creates an event, not yet recorded, into *event. Events need no memory
 * (they may be created before lethe_rt_memory_init) and live until
 * lethe_rt_event_destroy or the context's destruction. */
lethe_rt_status lethe_rt_event_create(lethe_rt_context *context,
                                      lethe_rt_event **event);

/* Destroys an event of `context` (NULL is a no-op). Waits already issued on
 * it still hold. */
lethe_rt_status lethe_rt_event_destroy(lethe_rt_context *context,
                                       lethe_rt_event *event);

/* Marks in `event` the work issued to `stream` so far (replacing any earlier
 * mark). */
lethe_rt_status lethe_rt_event_record(lethe_rt_context *context,
                                      lethe_rt_event *event,
                                      lethe_rt_stream stream);

/* Makes the work issued to `stream` from now on start only after the work
 * `event` marks; the caller does not wait. (An event of `stream` itself
 * orders nothing more: a stream runs in order.) */
lethe_rt_status lethe_rt_stream_wait_event(lethe_rt_context *context,
                                           lethe_rt_stream stream,
                                           lethe_rt_event *event);

/* Waits on the host until the work issued to every stream is done. */
lethe_rt_status lethe_rt_synchronize(lethe_rt_context *context);

/* What the context's memory has allocated and copied. The copy counters
 * count the copies issued (run or still pending). */
typedef struct lethe_rt_memory_stats {
  uint64_t arena_bytes, host_pool_bytes;      /* allocated by memory_init */
  uint64_t offloaded_bytes, prefetched_bytes; /* issued so far */
  uint64_t offloads, prefetches;
} lethe_rt_memory_stats;

/* Writes the context's memory statistics to *stats (all 0 before
 * lethe_rt_memory_init). */
lethe_rt_status lethe_rt_get_memory_stats(lethe_rt_context *context,
                                          lethe_rt_memory_stats *stats);

/*===----------------------------------------------------------------------===*
 * Op boundaries (for timing and tracing a compiled step)
 *===----------------------------------------------------------------------===*/

/* Called by a compiled step before each of its ops (lethe_program.h): the
 * op's index in the program's manifest. */
typedef void (*lethe_rt_op_hook)(void *user_data, int32_t op_index);

/* Installs `hook` (NULL removes it), called with `user_data` by every
 * lethe_rt_op_begin on `context`. */
lethe_rt_status lethe_rt_set_op_hook(lethe_rt_context *context,
                                     lethe_rt_op_hook hook, void *user_data);

/* Marks the start of op `op_index` of a compiled step: calls the context's
 * hook, if any (on the CUDA backend, once the compute stream has finished
 * the ops before, so that the time between two hooks is an op's time on the
 * device). Fails only on a NULL context. */
lethe_rt_status lethe_rt_op_begin(lethe_rt_context *context, int32_t op_index);

/* The most workspace bytes that a call on `context` since the last
 * lethe_rt_op_begin asked for beyond the workspace it was given: the least
 * with which it would have run its fast way, 0 when every call had what it
 * needed (0 for a NULL context). The CUDA backend's convolutions ask: given
 * less than the least workspace of a deterministic cuDNN algorithm, they run
 * in direct kernels, far slower. A hook reads it for the previous op; the
 * driver records it in --profile as the op's `workspace_bytes`, from which
 * the planner sizes the op's workspace (docs/Executables.md). */
uint64_t lethe_rt_op_workspace_wanted(const lethe_rt_context *context);

#ifdef __cplusplus
}
#endif

#endif /* LETHE_RT_H */
