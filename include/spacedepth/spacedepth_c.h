/* spacedepth: SpaceToDepth and DepthToSpace kernels. The plain C API (FFI-friendly).
 *
 * Every call returns an sd_status. On failure nothing has been written to the output, and
 * sd_last_error() returns one line naming the broken rule and the values involved (per thread).
 * Nothing is thrown across this boundary, and no call aborts the process. The library's version
 * is spacedepth_version() (spacedepth/version.h, included here).
 */
#ifndef SPACEDEPTH_C_H
#define SPACEDEPTH_C_H

#include <stdint.h>

#include "spacedepth/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sd_status {
    SD_OK = 0,
    SD_ERROR_INVALID_ARGUMENT = 1, /* an enum out of range, a block < 1, a negative dim */
    SD_ERROR_SHAPE = 2,            /* divisibility, or an output shape that is not the implied one */
    SD_ERROR_OVERFLOW = 3,         /* a size or offset does not fit in 64 bits (or in size_t) */
    SD_ERROR_OVERLAP = 4,          /* input and output memory overlap, or the output aliases itself */
    SD_ERROR_NULL_DATA = 5,        /* null data pointer with a non-zero size */
    SD_ERROR_UNSUPPORTED = 6,      /* a valid request this build cannot run */
    SD_ERROR_KERNEL = 7,           /* the Halide kernel reported an error; the message carries it */
    SD_ERROR_OUT_OF_MEMORY = 8     /* an allocation failed, in host or device memory */
} sd_status;

/* Every enum below spans the whole int range (the _RANGE_ enumerators are never valid values),
 * so an out-of-range value from a caller is an error the library reports, not undefined
 * behaviour when C++ reads it (found by the fuzzer under UBSan, -fsanitize=enum). */
#define SD_ENUM_RANGE(prefix) prefix##_RANGE_MIN_ = -2147483647 - 1, prefix##_RANGE_MAX_ = 2147483647

typedef enum sd_op { SD_SPACE_TO_DEPTH = 0, SD_DEPTH_TO_SPACE = 1, SD_ENUM_RANGE(SD_OP) } sd_op;

/* DirectML's DML_DEPTH_SPACE_ORDER; OpenVINO's blocks_first (DCR) and depth_first (CRD). With the
 * block position k = (bz*bh + by)*bw + bx and its area bd*bh*bw: DCR: deep channel k*C + c
 * (TensorFlow, ONNX default); CRD: c*area + k (PyTorch pixel_shuffle, ONNX mode "CRD"). */
typedef enum sd_order { SD_ORDER_DCR = 0, SD_ORDER_CRD = 1, SD_ENUM_RANGE(SD_ORDER) } sd_order;

/* Memory layouts, at every spatial rank (1: W; 2: H, W; 3: D, H, W):
 *   NHWC        channels last:  [N, spatial..., C] (NWC, NHWC, NDHWC);
 *   NCHW        channels first: [N, C, spatial...] (NCW, NCHW, NCDHW);
 *   NCHWC4/8/16 blocked channels: [N, C/k, spatial..., k] with k = 4, 8 or 16 (oneDNN's nChw8c,
 *               nChw16c, nCdhw16c), any element width; C must be a multiple of k;
 *   NCHW_VECT_C NCHWC4 with 1-byte elements only (TensorFlow's name). */
typedef enum sd_layout {
    SD_LAYOUT_NHWC = 0,
    SD_LAYOUT_NCHW = 1,
    SD_LAYOUT_NCHW_VECT_C = 2,
    SD_LAYOUT_NCHWC4 = 3,
    SD_LAYOUT_NCHWC8 = 4,
    SD_LAYOUT_NCHWC16 = 5,
    SD_ENUM_RANGE(SD_LAYOUT)
} sd_layout;

/* One row per element width. */
/* clang-format off */
typedef enum sd_dtype {
    SD_BOOL = 0, SD_INT8, SD_UINT8, SD_QINT8, SD_QUINT8,    /* 1 byte  */
    SD_INT16, SD_UINT16, SD_FLOAT16, SD_BFLOAT16,           /* 2 bytes */
    SD_INT32, SD_UINT32, SD_FLOAT32, SD_QINT32,             /* 4 bytes */
    SD_INT64, SD_UINT64, SD_FLOAT64, SD_COMPLEX64,          /* 8 bytes */
    SD_COMPLEX128,                                          /* 16 bytes */
    SD_DTYPE_COUNT,
    SD_ENUM_RANGE(SD_DTYPE)
} sd_dtype;
/* clang-format on */

/* The most dims a tensor has: N, C and three spatial dims. */
#define SD_MAX_NDIM 5

/* A tensor: ndim logical dims, N and C first and then the spatial dims, whatever the layout:
 * (N, C, W), (N, C, H, W) or (N, C, D, H, W). A stride per logical dim, in elements. For the
 * blocked layouts (NCHWC4/8/16, NCHW_VECT_C) strides[1] is the stride between groups of k
 * channels, and the k channels of a group are adjacent. data is the element at logical index 0;
 * a stride may be negative (a reversed dim, as numpy's x[:, ::-1], reaching below data) or 0 on
 * the input (a broadcast). Entries past ndim are ignored. sd_tensor_init_dense() and
 * sd_tensor_init_dense_nd() fill a dense tensor. */
typedef struct sd_tensor {
    void *data;
    sd_dtype dtype;
    sd_layout layout;
    int ndim;                     /* 3, 4 or 5: spatial rank 1, 2 or 3 */
    int64_t dims[SD_MAX_NDIM];    /* N, C, (D,) (H,) W */
    int64_t strides[SD_MAX_NDIM]; /* in elements, per logical dim */
} sd_tensor;

/* The block: block_w at every rank, block_h from rank 2, block_d at rank 3. Each is >= 1 (1 is
 * the identity along that dim). A block size for a dim the tensors do not have must be 0 or 1,
 * so a zero-initialised block_d leaves rank-2 code as it was. */
typedef struct sd_params {
    sd_op op;
    int64_t block_h;
    int64_t block_w;
    sd_order order;
    int threads; /* 0: the library setting (sd_set_num_threads); 1: the caller's thread only;
                    N > 1: up to N threads from the process-wide pool */
    int64_t block_d;
} sd_params;

/* Fills t as a dense rank-2 tensor (ndim 4) of the given layout. */
sd_status sd_tensor_init_dense(sd_tensor *t, void *data, sd_dtype dtype, sd_layout layout, int64_t n, int64_t c,
                               int64_t h, int64_t w);
/* Fills t as a dense tensor of ndim (3, 4 or 5) logical dims: N, C, then the spatial dims. */
sd_status sd_tensor_init_dense_nd(sd_tensor *t, void *data, sd_dtype dtype, sd_layout layout, int ndim,
                                  const int64_t *dims);

/* The logical output dims (N, C, H, W) that params imply for a rank-2 input of in_dims. */
sd_status sd_output_dims(const sd_params *params, const int64_t in_dims[4], int64_t out_dims[4]);
/* The same at any rank: ndim (3, 4 or 5) dims in, ndim out. */
sd_status sd_output_dims_nd(const sd_params *params, int ndim, const int64_t *in_dims, int64_t *out_dims);

/* Runs params->op from in to out. Validates everything first (docs/SPEC.md section 5). */
sd_status sd_run(const sd_params *params, const sd_tensor *in, const sd_tensor *out);

/* The same op on CUDA device memory: in->data and out->data are device pointers (CUdeviceptr)
 * that the caller owns. The kernel is launched on cu_stream (a CUstream; NULL: the default
 * stream) in cu_context (a CUcontext; NULL: a context Halide creates) and is not waited for:
 * synchronise the stream before reading the output. No host copies are made. Without a CUDA
 * driver or GPU, or in a build without CUDA kernels, it returns an error naming the cause. */
sd_status sd_run_cuda(const sd_params *params, const sd_tensor *in, const sd_tensor *out, void *cu_context,
                      void *cu_stream);

/* A plan: one call validated and planned once, then run on any memory of that shape. Inference
 * engines call these ops on the same shapes again and again; a plan pays the validation, the
 * view and the kernel choice once, at create, so a run costs little more than the kernel.
 *
 * sd_plan_create: params and two descriptors, tensors whose data pointers are ignored. Checks
 *   every rule but the two about memory, and returns the plan in *plan (NULL on failure).
 * sd_plan_run: the planned call on in and out, which must not overlap, and may be null only for
 *   a zero-size tensor. It reads the plan only, so any number of threads may run one plan at
 *   once. Addresses aligned to 8 bytes are the fast path; others are planned again per call.
 * sd_plan_destroy: frees the plan; NULL is allowed. */
typedef struct sd_plan sd_plan;
sd_status sd_plan_create(const sd_params *params, const sd_tensor *in_desc, const sd_tensor *out_desc, sd_plan **plan);
sd_status sd_plan_run(const sd_plan *plan, const void *in, void *out);
void sd_plan_destroy(sd_plan *plan);

/* How a plan is made (FFTW's planner flags):
 *   SD_PLAN_ESTIMATE: by the planner's rules, spending no time (sd_plan_create's way).
 *   SD_PLAN_MEASURE:  the rules' plan and its alternatives (kernel family, the AVX2 path beside
 *                     AVX-512, loop order; serial or parallel stays the rules') are timed on
 *                     scratch tensors of the call's shape within time_limit_ms, in rounds, and
 *                     the fastest is kept where it beats the rules' plan by 5 % or more (the
 *                     median of the rounds' paired timings), twice. A tensor whose calls cannot
 *                     be timed within the limit keeps the rules' plan (sd_plan_describe says why).
 * Either way a choice the wisdom holds for the call's shape is taken without timing. */
typedef enum sd_plan_flags { SD_PLAN_ESTIMATE = 0, SD_PLAN_MEASURE = 1 } sd_plan_flags;
#define SD_PLAN_DEFAULT_TIME_LIMIT_MS 5.0
typedef struct sd_plan_options {
    unsigned flags;       /* SD_PLAN_ESTIMATE or SD_PLAN_MEASURE */
    double time_limit_ms; /* for measuring: 0 is SD_PLAN_DEFAULT_TIME_LIMIT_MS; at most 60000 */
} sd_plan_options;
/* sd_plan_create with options (NULL: SD_PLAN_ESTIMATE). */
sd_status sd_plan_create_with(const sd_params *params, const sd_tensor *in_desc, const sd_tensor *out_desc,
                              const sd_plan_options *options, sd_plan **plan);
/* The plan in words, and how it was made, into text (size bytes, always NUL-terminated when
 * size > 0, cut to fit); returns the full length, as snprintf does, or -1 for a NULL plan. */
int sd_plan_describe(const sd_plan *plan, char *text, int size);

/* Wisdom (FFTW's word): the choices measured plans made, per call shape (op, order, block,
 * threads, and each tensor's dtype, layout, dims and strides). The process keeps them, and every
 * later plan and one-shot call of that shape on any thread takes them without timing.
 *   sd_wisdom_export: writes them to a text file, replaced whole (never left partial).
 *   sd_wisdom_import: adds a file's choices, replacing those of the same shapes. A file that
 *     breaks a rule (its line is named), or one measured with another library version, CPU
 *     model, kernel target or core count, is not imported at all, and the status says why.
 *   sd_wisdom_forget: drops them all. */
sd_status sd_wisdom_export(const char *path);
sd_status sd_wisdom_import(const char *path);
void sd_wisdom_forget(void);

/* One line: the rule and the values, of the last failed call on this thread ("" if none). */
const char *sd_last_error(void);

const char *sd_status_name(sd_status status);
const char *sd_dtype_name(sd_dtype dtype); /* "float32", ...; NULL when out of range */
int sd_dtype_size(sd_dtype dtype);         /* bytes; 0 when out of range */
sd_status sd_dtype_from_name(const char *name, sd_dtype *dtype);
/* The dtype policy the Python module and the CLI apply too: a numpy array-interface type string
   ("<f4", "|b1", ">i2", "|V2") to the dtype that moves it. Byte order does not matter (whole
   elements move); numpy's numbers and bools map to their own dtype; other kinds of 1, 2, 4, 8 or 16
   bytes (raw "V", ml_dtypes' bfloat16 and float8, long double "f16") move as uint8 ... uint64 or
   complex128 of that width. Objects, strings, datetimes and timedeltas: SD_ERROR_UNSUPPORTED;
   anything else: SD_ERROR_INVALID_ARGUMENT. */
sd_status sd_dtype_from_typestr(const char *typestr, sd_dtype *dtype);

/* Process-wide thread count for kernels that run in parallel (0 = one per core), at most
   SD_MAX_THREADS, the most Halide's thread pool holds; outside 0 to SD_MAX_THREADS:
   SD_ERROR_INVALID_ARGUMENT, and the count is unchanged. */
#define SD_MAX_THREADS 256
sd_status sd_set_num_threads(int threads);
int sd_get_num_threads(void);

#ifdef __cplusplus
}
#endif

#endif /* SPACEDEPTH_C_H */
