/* cudnn.cu - the vendor row: cuDNN's fused scaled-dot-product attention
 * (flash attention), built through the cuDNN graph (backend) API from plain C
 * calls, checked, timed and profiled like every other rung.
 *
 * Idea: the ladder's rungs are kernels a reader can follow line by line; this
 * row is the library a user would call instead, so that each rung's figure
 * has the number it competes with beside it, measured by the same harness on
 * the same inputs (fresh random Q, K, V; poisoned O; the fp64 reference).
 *
 * Loading: libcudnn.so.9 (or $KBENCH_CUDNN_LIB) is opened at run time with
 * dlopen, never linked, so kbench builds and its other variants run where
 * cuDNN is missing; then this row is skipped, saying why. Without cuDNN's
 * headers at build time (no cudnn_graph.h) the row always skips, saying so.
 *
 * The graph (prepare, in the case's child, once per case): Q, K, V and O are
 * kbench's buffers as they are, [batch][heads][seq][dim] contiguous (strides
 * h*s*d, s*d, d, 1); K enters the first product as K^T, a strided view of K
 * with dims (b, h, d, s) and strides (h*s*d, s*d, 1, d). The operations are
 * the decomposed SDPA forward that cuDNN's runtime-fusion flash-attention
 * engine recognises as one pattern:
 *   S  = Q . K^T                 matmul, fp32 out (virtual: never in memory)
 *   S  = S * scale               pointwise MUL by a pass-by-value fp32 scalar
 *   causal only: r = GEN_INDEX(S, axis 2), c = GEN_INDEX(S, axis 3) (int32),
 *        keep = r >= c (CMP_GE, boolean), S = keep ? S : -inf (BINARY_SELECT
 *        with a pass-by-value scalar; -FLT_MAX for cuDNN before 9.10)
 *   m  = max_j S                 reduction MAX to (b, h, s, 1)
 *   E  = exp(S - m)              pointwise SUB, EXP
 *   l  = sum_j E                 reduction ADD to (b, h, s, 1)
 *   P  = E / l                   pointwise DIV, in the io dtype (fp16/bf16)
 *   stats = m + log l            pointwise LOG, ADD: written, fp32 per row
 *   O  = P . V                   matmul into O
 * cuDNN 9.14 (the H200's) matches this pattern to its flash-attention engine
 * only with the softmax statistics written out (the training graph); without
 * them, or with P or the causal indices in other types, its heuristics offer
 * no engine ("Dropout set of ops not configured correctly"). KBENCH_CUDNN_FORM
 * picks another form to try (see dnn_form). Non-causal cases first try cuDNN's
 * single SDPA_FWD operation (cuDNN 9.13.1 and newer; Q, K, V as stored, K not
 * transposed), which ran faster than the decomposed graph on the H200 (651
 * against 613 TFLOP/s at the default shape, 522 against 506 at dim 64), and
 * fall back to the decomposed graph when cuDNN will not build it or has no
 * engine for it; KBENCH_CUDNN_GRAPH=decomposed skips it. The operation has no
 * causal mask.
 * Engine choice: heuristics mode A, each engine config in its order
 * until one finalises into a plan, then the fallback mode's list; the plan's
 * workspace is allocated once. When cuDNN has no engine for the graph
 * (CUDNN_STATUS_NOT_SUPPORTED and its kin) the case is skipped with cuDNN's
 * own message; any other cuDNN error fails the case with the call, the
 * descriptor and attribute involved, and cuDNN's message.
 * KBENCH_CUDNN_VERBOSE=1 prints the version, the graph, the heuristics' list
 * and the chosen engine (global index, knobs, notes, workspace) to stderr.
 *
 * Launch: cudnnSetStream and cudnnBackendExecute, nothing else. cuDNN's
 * kernels are not kbench's, so the launcher notes no launches; the harness
 * then records the kernels that ran (names, grid, block, registers, shared
 * and local memory) from one extra launch traced with the CUPTI Activity API,
 * and the counter pass works per kernel as for any rung. The host cost of
 * cudnnBackendExecute falls inside the timed window, as a user's call's would;
 * the GPU is still busy with the L2 flush before each sample meanwhile.
 *
 * Measured on the H200 (results/h200/attention.json, cuDNN 9.14, bf16,
 * 2026-12-01): the SDPA_FWD operation and the causal graph both run one
 * runtime-compiled kernel, sdpa_sm90_flash_fprop_wgmma (132 blocks of 384
 * threads, 168 registers at launch, 225 KB of shared memory: a persistent,
 * warp-specialised wgmma kernel). TFLOP/s: 614.8 at the default shape (633.1
 * and 671.1 in two later runs: the GPU's clock varies under this load), 552.4
 * causal, 529.1 and 467.6 at dim 64, 620.2 and 581.6 at seq 16384; tensor pipe
 * active 75.6% of cycles at the default shape. */
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <initializer_list>

#include "attention.cuh"

#if !defined(KBENCH_NO_CUDNN_HEADERS) && __has_include(<cudnn_graph.h>)
#define KB_HAVE_CUDNN 1
#include <cudnn_graph.h>
#else
#define KB_HAVE_CUDNN 0
#endif

/* The library opened at run time, and the variable that names another. */
#define DNN_LIB_DEFAULT "libcudnn.so.9"
#define DNN_LIB_ENV "KBENCH_CUDNN_LIB"
#define DNN_GRAPH_ENV "KBENCH_CUDNN_GRAPH"
#define DNN_VERBOSE_ENV "KBENCH_CUDNN_VERBOSE"

/* Why the row cannot run, in a build without cuDNN's headers. */
#define DNN_NO_HEADERS                                                                   \
    "kbench was built without cuDNN's headers (cudnn_graph.h was not found), so it "     \
    "cannot call cuDNN; rebuild with a CUDA toolkit that has them"

/* What the last failed launch said (a cudaError_t cannot carry cuDNN's
 * message); "" when it has nothing to add. */
static char last_failure[512];

extern "C" const char *kb_attention_cudnn_last_error(void)
{
    return last_failure;
}

#if KB_HAVE_CUDNN

/* ---- the library ----------------------------------------------------------------------- */

/* cuDNN versions are major * 10000 + minor * 100 + patch from 9.0 on. */
#define DNN_V9 90000
#define DNN_V_NEG_INF_MASK 91000 /* masks with -inf (before: -FLT_MAX) */
#define DNN_V_SDPA_OP 91301      /* the single SDPA_FWD operation */

/* The functions kbench calls, found with dlsym; GetLastErrorString and
 * GetCudartVersion may be absent (NULL). */
typedef struct dnn_lib {
    void *dl;
    char name[256]; /* as passed to dlopen */
    size_t version; /* cudnnGetVersion() */
    size_t cudart;  /* cudnnGetCudartVersion(), 0 when absent */
    decltype(&cudnnGetVersion) GetVersion;
    decltype(&cudnnGetCudartVersion) GetCudartVersion;
    decltype(&cudnnGetErrorString) GetErrorString;
    decltype(&cudnnGetLastErrorString) GetLastErrorString;
    decltype(&cudnnCreate) Create;
    decltype(&cudnnDestroy) Destroy;
    decltype(&cudnnSetStream) SetStream;
    decltype(&cudnnBackendCreateDescriptor) BackendCreateDescriptor;
    decltype(&cudnnBackendDestroyDescriptor) BackendDestroyDescriptor;
    decltype(&cudnnBackendSetAttribute) BackendSetAttribute;
    decltype(&cudnnBackendGetAttribute) BackendGetAttribute;
    decltype(&cudnnBackendFinalize) BackendFinalize;
    decltype(&cudnnBackendExecute) BackendExecute;
} dnn_lib;

/* The library in use: loaded once per name and kept open for the life of the
 * process (a library the process has used is never unloaded). */
static dnn_lib lib;

static const char *lib_name(void)
{
    const char *s = getenv(DNN_LIB_ENV);
    return s && *s ? s : DNN_LIB_DEFAULT;
}

/* Opens library `name` into *L and finds its functions. Returns 0, or -1
 * with why it cannot be used in why (the library is closed again when
 * nothing of it ran). */
static int lib_open(const char *name, dnn_lib *L, char *why, size_t why_size)
{
    memset(L, 0, sizeof *L);
    kb_strlcpy(L->name, name, sizeof L->name);
    dlerror();
    L->dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!L->dl) {
        const char *de = dlerror();
        snprintf(why, why_size, "cuDNN not found: dlopen %s: %s", name, de ? de : "failed");
        return -1;
    }
#define SYM(f, required) {"cudnn" #f, &L->f, sizeof L->f, required}
    const struct {
        const char *sym;
        void *slot; /* a function pointer field of *L */
        size_t size;
        int required; /* 0: absent from some cuDNN 9 releases, left NULL */
    } syms[] = {
        SYM(GetVersion, 1),         SYM(GetCudartVersion, 0),
        SYM(GetErrorString, 1),     SYM(GetLastErrorString, 0),
        SYM(Create, 1),             SYM(Destroy, 1),
        SYM(SetStream, 1),          SYM(BackendCreateDescriptor, 1),
        SYM(BackendDestroyDescriptor, 1), SYM(BackendSetAttribute, 1),
        SYM(BackendGetAttribute, 1), SYM(BackendFinalize, 1),
        SYM(BackendExecute, 1),
    };
#undef SYM
    for (size_t i = 0; i < KB_COUNT(syms); i++) {
        void *p = dlsym(L->dl, syms[i].sym);
        if (p) {
            memcpy(syms[i].slot, &p, syms[i].size);
        } else if (syms[i].required) {
            snprintf(why, why_size, "cuDNN not usable: %s has no %s", name, syms[i].sym);
            dlclose(L->dl); /* not cuDNN, or not one kbench can drive: nothing of it ran */
            L->dl = NULL;
            return -1;
        }
    }
    return 0;
}

/* The library lib_name() names, opened once and kept open for the life of
 * the process (a library the process has used is never unloaded; a second,
 * different cuDNN is refused). Returns it, or NULL with why it cannot be used
 * in why. */
static const dnn_lib *lib_load(char *why, size_t why_size)
{
    const char *name = lib_name();
    if (lib.dl && strcmp(lib.name, name) == 0)
        return &lib;
    dnn_lib L;
    if (lib_open(name, &L, why, why_size) != 0)
        return NULL;
    if (lib.dl) {
        snprintf(why, why_size, "cuDNN not usable: %s asked for, but this process already uses %s",
                 name, lib.name);
        return NULL; /* left open: closing a library is never worth the risk */
    }
    L.version = L.GetVersion();
    L.cudart = L.GetCudartVersion ? L.GetCudartVersion() : 0;
    if (L.version < DNN_V9) {
        snprintf(why, why_size,
                 "cuDNN not usable: %s is version %zu, and kbench drives the cuDNN 9 graph API "
                 "(9.0 or newer)",
                 name, L.version);
        return NULL; /* left open: its code has run */
    }
    lib = L;
    return &lib;
}

/* "9.14.0" */
static void version_str(size_t v, char *buf, size_t n)
{
    snprintf(buf, n, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
}

/* ---- errors ---------------------------------------------------------------------------- */

/* 1 when st means cuDNN cannot run this case here (no engine, an unsupported
 * shape, layout or data type, a missing part of cuDNN): a skip; -1 for any
 * other failure. */
static int dnn_class(cudnnStatus_t st)
{
    if (st / 1000 * 1000 == CUDNN_STATUS_NOT_SUPPORTED)
        return 1;
    if (st == CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED ||
        st == CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)
        return 1;
    return -1;
}

/* Writes "<what> failed: <CUDNN_STATUS_...> (<code>): <cuDNN's last message>"
 * into why; what is printf-style. */
static void dnn_explain(const dnn_lib *L, cudnnStatus_t st, char *why, size_t why_size,
                        const char *fmt, ...) KB_PRINTF(5, 6);
static void dnn_explain(const dnn_lib *L, cudnnStatus_t st, char *why, size_t why_size,
                        const char *fmt, ...)
{
    char what[256], detail[512] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (L->GetLastErrorString)
        L->GetLastErrorString(detail, sizeof detail);
    for (char *p = detail; *p; p++) /* one line */
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    const char *name = L->GetErrorString(st);
    snprintf(why, why_size, "%s failed: %s (%d)%s%s", what, name ? name : "unknown status",
             (int)st, detail[0] ? ": " : "", detail);
}

/* ---- building descriptors -------------------------------------------------------------- */

/* Descriptors one case can create: its graph (about 40) and the heuristics'
 * engine configs and trial plans. */
#define DNN_MAX_DESC 1024
#define DNN_MAX_CONFIGS 64 /* engine configs taken from one heuristics query */
#define DNN_MAX_KNOBS 32   /* knob choices read off the chosen engine config */

/* Everything prepare builds for the case; lives until the next prepare. */
/* The graphs: cuDNN's single SDPA_FWD operation, or the decomposed pattern. */
enum { GRAPH_SDPA, GRAPH_DECOMPOSED };

typedef struct dnn_case {
    cudnnHandle_t handle;
    int device; /* the CUDA device the handle belongs to */
    cudnnBackendDescriptor_t desc[DNN_MAX_DESC]; /* all created, destroyed in reverse */
    int ndesc;
    cudnnBackendDescriptor_t plan, pack;
    void *workspace;
    int graph;   /* GRAPH_SDPA or GRAPH_DECOMPOSED: the one planned */
    void *stats; /* the softmax statistics, when the graph's form writes them */
    float scale;      /* pass-by-value operands: read by cudnnBackendExecute */
    float mask_value;
    kb_case_key key; /* the case the plan is for (zero: none) */
} dnn_case;

static dnn_case C;

/* A build in progress: helpers do nothing once rc is set (the first failure
 * is the one reported), so a graph reads as a list of steps with one check. */
typedef struct bld {
    const dnn_lib *L;
    int rc;        /* 0, or 1 (cannot run here) / -1 (error) after a failure */
    char *why;     /* the first failure */
    size_t why_size;
} bld;

static void bld_fail(bld *b, cudnnStatus_t st, const char *what, const char *desc,
                     const char *attr)
{
    if (b->rc)
        return;
    b->rc = dnn_class(st);
    dnn_explain(b->L, st, b->why, b->why_size, "%s(%s%s%s)", what, desc, attr ? ", " : "",
                attr ? attr : "");
}

static cudnnBackendDescriptor_t make(bld *b, cudnnBackendDescriptorType_t type,
                                     const char *type_name)
{
    cudnnBackendDescriptor_t d = NULL;
    if (b->rc)
        return NULL;
    if (C.ndesc == DNN_MAX_DESC) {
        b->rc = -1;
        snprintf(b->why, b->why_size, "cudnn: more than %d descriptors for one case",
                 DNN_MAX_DESC);
        return NULL;
    }
    cudnnStatus_t st = b->L->BackendCreateDescriptor(type, &d);
    if (st != CUDNN_STATUS_SUCCESS) {
        bld_fail(b, st, "cudnnBackendCreateDescriptor", type_name, NULL);
        return NULL;
    }
    C.desc[C.ndesc++] = d;
    return d;
}

static void set(bld *b, cudnnBackendDescriptor_t d, const char *dname,
                cudnnBackendAttributeName_t attr, const char *aname,
                cudnnBackendAttributeType_t type, int64_t count, const void *value)
{
    if (b->rc)
        return;
    cudnnStatus_t st = b->L->BackendSetAttribute(d, attr, type, count, value);
    if (st != CUDNN_STATUS_SUCCESS)
        bld_fail(b, st, "cudnnBackendSetAttribute", dname, aname);
}

#define MAKE(b, type) make((b), (type), #type)

#define SET(b, d, dname, attr, type, count, value)                                       \
    set((b), (d), (dname), (attr), #attr, (type), (count), (value))

static void fin(bld *b, cudnnBackendDescriptor_t d, const char *dname)
{
    if (b->rc)
        return;
    cudnnStatus_t st = b->L->BackendFinalize(d);
    if (st != CUDNN_STATUS_SUCCESS)
        bld_fail(b, st, "cudnnBackendFinalize", dname, NULL);
}

/* A tensor of nd dims; name names it in messages ("tensor K^T"). */
static cudnnBackendDescriptor_t tensor(bld *b, const char *name, int64_t uid,
                                       cudnnDataType_t dt, int nd, const int64_t *dims,
                                       const int64_t *strides, bool is_virtual, bool by_value)
{
    const int64_t align = 16; /* cudaMalloc'd buffers; tensor-core engines need 16 */
    cudnnBackendDescriptor_t t = MAKE(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    SET(b, t, name, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    SET(b, t, name, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dims);
    SET(b, t, name, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides);
    SET(b, t, name, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    SET(b, t, name, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    SET(b, t, name, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    SET(b, t, name, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    fin(b, t, name);
    return t;
}

/* A descriptor-valued attribute of an operation; a NULL value is left unset. */
typedef struct dnn_link {
    cudnnBackendAttributeName_t attr;
    const char *attr_name;
    cudnnBackendDescriptor_t value;
} dnn_link;

#define LINK(attr, value) {(attr), #attr, (value)}

/* An operation descriptor of `type` with the links set in their order,
 * finalised. */
static cudnnBackendDescriptor_t operation(bld *b, const char *name,
                                          cudnnBackendDescriptorType_t type,
                                          const char *type_name,
                                          std::initializer_list<dnn_link> links)
{
    cudnnBackendDescriptor_t op = make(b, type, type_name);
    for (const dnn_link &l : links)
        if (l.value)
            set(b, op, name, l.attr, l.attr_name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &l.value);
    fin(b, op, name);
    return op;
}

/* OPERATION(b, name, type, LINK(...), ...) */
#define OPERATION(b, name, type, ...) operation((b), (name), (type), #type, {__VA_ARGS__})

/* The settings descriptor of `type` (a reduction's, a matmul's) with its
 * compute type, attribute comp, fp32; the caller sets the rest and finalises
 * it. */
static cudnnBackendDescriptor_t fp32_settings(bld *b, const char *name,
                                              cudnnBackendDescriptorType_t type,
                                              const char *type_name,
                                              cudnnBackendAttributeName_t comp,
                                              const char *comp_name)
{
    const cudnnDataType_t prec = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t d = make(b, type, type_name);
    set(b, d, name, comp, comp_name, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    return d;
}

#define FP32_SETTINGS(b, name, type, comp) fp32_settings((b), (name), (type), #type, (comp), #comp)

/* y = mode(x[, bt][, t]) computed in prec; axis >= 0 for GEN_INDEX. For
 * BINARY_SELECT, y = t ? x : bt. */
static cudnnBackendDescriptor_t pointwise(bld *b, const char *name, cudnnPointwiseMode_t mode,
                                          cudnnDataType_t prec, int64_t axis,
                                          cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t bt,
                                          cudnnBackendDescriptor_t t,
                                          cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pw = MAKE(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    SET(b, pw, name, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    SET(b, pw, name, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (axis >= 0)
        SET(b, pw, name, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    fin(b, pw, name);
    return OPERATION(b, name, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                     LINK(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw),
                     LINK(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x),
                     LINK(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, bt),
                     LINK(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t),
                     LINK(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y));
}

/* y = reduce(x) over the axes where y has extent 1, in fp32. */
static cudnnBackendDescriptor_t reduction(bld *b, const char *name, cudnnReduceTensorOp_t how,
                                          cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t red = FP32_SETTINGS(b, name, CUDNN_BACKEND_REDUCTION_DESCRIPTOR,
                                                 CUDNN_ATTR_REDUCTION_COMP_TYPE);
    SET(b, red, name, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
        &how);
    fin(b, red, name);
    return OPERATION(b, name, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                     LINK(CUDNN_ATTR_OPERATION_REDUCTION_DESC, red),
                     LINK(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x),
                     LINK(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y));
}

/* c = a . bm (batched over the leading dims), fp32 accumulation. */
static cudnnBackendDescriptor_t matmul(bld *b, const char *name, cudnnBackendDescriptor_t a,
                                       cudnnBackendDescriptor_t bm,
                                       cudnnBackendDescriptor_t c)
{
    cudnnBackendDescriptor_t mm =
        FP32_SETTINGS(b, name, CUDNN_BACKEND_MATMUL_DESCRIPTOR, CUDNN_ATTR_MATMUL_COMP_TYPE);
    fin(b, mm, name);
    return OPERATION(b, name, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
                     LINK(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a),
                     LINK(CUDNN_ATTR_OPERATION_MATMUL_BDESC, bm),
                     LINK(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c),
                     LINK(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm));
}

/* ---- the graphs ------------------------------------------------------------------------ */

/* Unique ids of the tensors the variant pack binds, and of the virtual ones. */
enum {
    UID_Q = 1, UID_K, UID_V, UID_O, UID_SCALE, UID_MASK_VALUE,
    UID_S = 100, UID_S_SCALED, UID_ROW, UID_COL, UID_KEEP, UID_S_MASKED, UID_MAX, UID_SUB,
    UID_EXP, UID_SUM, UID_P, UID_LOG, UID_STATS,
};

/* Forms of the decomposed graph (KBENCH_CUDNN_FORM, a bit mask): 1 P in fp32,
 * 2 the softmax statistics written out (max + log sum, fp32 per row), 4 the
 * causal indices in int32. cuDNN 9.14 on the H200 finds an engine only for
 * the forms with the statistics (2 and 6; 0, 1, 3, 4, 5 and 7 have none: its
 * flash-attention matcher wants the training graph), so 2 is the default. */
#define DNN_FORM_P_F32 1
#define DNN_FORM_STATS 2
#define DNN_FORM_INDEX_I32 4
#define DNN_FORM_ENV "KBENCH_CUDNN_FORM"

static int dnn_form(void)
{
    const char *s = getenv(DNN_FORM_ENV);
    return s && s[0] >= '0' && s[0] <= '7' && !s[1] ? s[0] - '0' : DNN_FORM_STATS;
}

#define DNN_MAX_OPS 16

/* The shape as cuDNN sees it, and the io data type. */
typedef struct dnn_shape {
    int64_t b, h, s, d;
    int causal;
    cudnnDataType_t io;
    int form; /* the decomposed graph's form (dnn_form), read once per case */
} dnn_shape;

static dnn_shape dnn_shape_of(const int64_t *shape, kb_dtype dt)
{
    dnn_shape sh;
    sh.b = shape[ATT_BATCH];
    sh.h = shape[ATT_HEADS];
    sh.s = shape[ATT_SEQ];
    sh.d = shape[ATT_DIM];
    sh.causal = (int)shape[ATT_CAUSAL];
    sh.io = dt == KB_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
    sh.form = dnn_form();
    return sh;
}

/* The operation graph from ops[0 .. n); handle may be NULL (cuDNN 9.8 and
 * newer take the device from the current context then). */
static cudnnBackendDescriptor_t op_graph(bld *b, cudnnHandle_t handle,
                                         const cudnnBackendDescriptor_t *ops, int n)
{
    const char *name = "operation graph";
    cudnnBackendDescriptor_t g = MAKE(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    SET(b, g, name, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops);
    if (handle)
        SET(b, g, name, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    fin(b, g, name);
    return g;
}

/* The decomposed SDPA forward (see the header comment). */
static cudnnBackendDescriptor_t decomposed_graph(bld *b, cudnnHandle_t handle,
                                                 const dnn_shape *sh)
{
    const int64_t B = sh->b, H = sh->h, S = sh->s, D = sh->d;
    const int64_t qd[4] = {B, H, S, D}, qs[4] = {H * S * D, S * D, D, 1};
    const int64_t ktd[4] = {B, H, D, S}, kts[4] = {H * S * D, S * D, 1, D};
    const int64_t sd[4] = {B, H, S, S}, ss[4] = {H * S * S, S * S, S, 1};
    const int64_t rd[4] = {B, H, S, 1}, rs[4] = {H * S, S, 1, 1};
    const int64_t one[4] = {1, 1, 1, 1};
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32,
                          boolean = CUDNN_DATA_BOOLEAN;
    cudnnBackendDescriptor_t ops[DNN_MAX_OPS];
    int n = 0;

    cudnnBackendDescriptor_t q = tensor(b, "tensor Q", UID_Q, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t kt =
        tensor(b, "tensor K^T", UID_K, sh->io, 4, ktd, kts, false, false);
    cudnnBackendDescriptor_t v = tensor(b, "tensor V", UID_V, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t o = tensor(b, "tensor O", UID_O, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t scale =
        tensor(b, "tensor scale", UID_SCALE, f32, 4, one, one, false, true);
    cudnnBackendDescriptor_t s0 = tensor(b, "tensor S", UID_S, f32, 4, sd, ss, true, false);
    cudnnBackendDescriptor_t s1 =
        tensor(b, "tensor S*scale", UID_S_SCALED, f32, 4, sd, ss, true, false);
    ops[n++] = matmul(b, "matmul Q.K^T", q, kt, s0);
    ops[n++] = pointwise(b, "pointwise S*scale", CUDNN_POINTWISE_MUL, f32, -1, s0, scale, NULL,
                         s1);
    cudnnBackendDescriptor_t last = s1;
    if (sh->causal) {
        cudnnBackendDescriptor_t row = tensor(b, "tensor row", UID_ROW, i32, 4, sd, ss, true,
                                              false);
        cudnnBackendDescriptor_t col = tensor(b, "tensor col", UID_COL, i32, 4, sd, ss, true,
                                              false);
        cudnnBackendDescriptor_t keep =
            tensor(b, "tensor row>=col", UID_KEEP, boolean, 4, sd, ss, true, false);
        cudnnBackendDescriptor_t mval =
            tensor(b, "tensor mask value", UID_MASK_VALUE, f32, 4, one, one, false, true);
        cudnnBackendDescriptor_t masked =
            tensor(b, "tensor masked S", UID_S_MASKED, f32, 4, sd, ss, true, false);
        const cudnnDataType_t ip = sh->form & DNN_FORM_INDEX_I32 ? i32 : f32;
        ops[n++] = pointwise(b, "pointwise GEN_INDEX rows", CUDNN_POINTWISE_GEN_INDEX, ip, 2,
                             s1, NULL, NULL, row);
        ops[n++] = pointwise(b, "pointwise GEN_INDEX columns", CUDNN_POINTWISE_GEN_INDEX, ip,
                             3, s1, NULL, NULL, col);
        ops[n++] = pointwise(b, "pointwise row>=col", CUDNN_POINTWISE_CMP_GE, boolean, -1, row,
                             col, NULL, keep);
        ops[n++] = pointwise(b, "pointwise causal select", CUDNN_POINTWISE_BINARY_SELECT, f32,
                             -1, s1, mval, keep, masked);
        last = masked;
    }
    cudnnBackendDescriptor_t mx = tensor(b, "tensor row max", UID_MAX, f32, 4, rd, rs, true,
                                         false);
    cudnnBackendDescriptor_t sub =
        tensor(b, "tensor S-max", UID_SUB, f32, 4, sd, ss, true, false);
    cudnnBackendDescriptor_t ex = tensor(b, "tensor exp", UID_EXP, f32, 4, sd, ss, true, false);
    cudnnBackendDescriptor_t sum = tensor(b, "tensor row sum", UID_SUM, f32, 4, rd, rs, true,
                                          false);
    cudnnBackendDescriptor_t p = tensor(b, "tensor P", UID_P,
                                        sh->form & DNN_FORM_P_F32 ? f32 : sh->io, 4, sd, ss,
                                        true, false);
    ops[n++] = reduction(b, "reduction row max", CUDNN_REDUCE_TENSOR_MAX, last, mx);
    ops[n++] = pointwise(b, "pointwise S-max", CUDNN_POINTWISE_SUB, f32, -1, last, mx, NULL,
                         sub);
    ops[n++] = pointwise(b, "pointwise exp", CUDNN_POINTWISE_EXP, f32, -1, sub, NULL, NULL, ex);
    ops[n++] = reduction(b, "reduction row sum", CUDNN_REDUCE_TENSOR_ADD, ex, sum);
    if (sh->form & DNN_FORM_STATS) {
        cudnnBackendDescriptor_t lg = tensor(b, "tensor log sum", UID_LOG, f32, 4, rd, rs, true,
                                             false);
        cudnnBackendDescriptor_t stats =
            tensor(b, "tensor stats", UID_STATS, f32, 4, rd, rs, false, false);
        ops[n++] = pointwise(b, "pointwise log sum", CUDNN_POINTWISE_LOG, f32, -1, sum, NULL,
                             NULL, lg);
        ops[n++] = pointwise(b, "pointwise max + log sum", CUDNN_POINTWISE_ADD, f32, -1, mx, lg,
                             NULL, stats);
    }
    ops[n++] = pointwise(b, "pointwise exp/sum", CUDNN_POINTWISE_DIV, f32, -1, ex, sum, NULL, p);
    ops[n++] = matmul(b, "matmul P.V", p, v, o);
    return op_graph(b, handle, ops, n);
}

/* cuDNN's single SDPA_FWD operation (non-causal): Q, K, V as stored. */
static cudnnBackendDescriptor_t sdpa_graph(bld *b, cudnnHandle_t handle, const dnn_shape *sh)
{
    const int64_t qd[4] = {sh->b, sh->h, sh->s, sh->d};
    const int64_t qs[4] = {sh->h * sh->s * sh->d, sh->s * sh->d, sh->d, 1};
    const int64_t one[1] = {1};
    cudnnBackendDescriptor_t q = tensor(b, "tensor Q", UID_Q, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t k = tensor(b, "tensor K", UID_K, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t v = tensor(b, "tensor V", UID_V, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t o = tensor(b, "tensor O", UID_O, sh->io, 4, qd, qs, false, false);
    cudnnBackendDescriptor_t scale =
        tensor(b, "tensor scale", UID_SCALE, CUDNN_DATA_FLOAT, 1, one, one, false, true);
    cudnnBackendDescriptor_t op =
        OPERATION(b, "operation SDPA_FWD", CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR,
                  LINK(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q),
                  LINK(CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k),
                  LINK(CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v),
                  LINK(CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o),
                  LINK(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale));
    return op_graph(b, handle, &op, 1);
}

/* Which graph KBENCH_CUDNN_GRAPH asks for: 1 the SDPA_FWD operation first
 * where cuDNN has it (the default: on the H200 it ran non-causal attention
 * faster than the decomposed graph, 651 against 613 TFLOP/s at the default
 * shape), 0 the decomposed graph only, -1 a value it does not know. */
static int graph_choice(void)
{
    const char *s = getenv(DNN_GRAPH_ENV);
    if (!s || !*s || strcmp(s, "sdpa") == 0)
        return 1;
    return strcmp(s, "decomposed") == 0 ? 0 : -1;
}

static int verbose(void)
{
    const char *s = getenv(DNN_VERBOSE_ENV);
    return s && *s && strcmp(s, "0") != 0;
}

/* ---- engine and plan ------------------------------------------------------------------- */

/* Describes engine config cfg in buf: "engine 8 (knobs 40=128 41=128),
 * runtime-compiled" (knob types are cudnnBackendKnobType_t values); what
 * cannot be read is left out. Its descriptors are its own, destroyed before
 * it returns. */
static void describe_config(const dnn_lib *L, cudnnBackendDescriptor_t cfg, char *buf,
                            size_t n)
{
    cudnnBackendDescriptor_t eng = NULL, knobs[DNN_MAX_KNOBS];
    int nk = 0;
    int64_t cnt = 0, idx = -1, nnotes = 0;
    size_t used;
    cudnnBackendBehaviorNote_t notes[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    snprintf(buf, n, "engine ?");
    if (L->BackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &eng) !=
            CUDNN_STATUS_SUCCESS ||
        L->BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                               1, &cnt, &eng) != CUDNN_STATUS_SUCCESS ||
        L->BackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &cnt,
                               &idx) != CUDNN_STATUS_SUCCESS)
        goto done;
    used = (size_t)snprintf(buf, n, "engine %lld", (long long)idx);
    while (nk < DNN_MAX_KNOBS && L->BackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
                                                            &knobs[nk]) == CUDNN_STATUS_SUCCESS)
        nk++;
    if (nk == DNN_MAX_KNOBS &&
        L->BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, nk, &cnt,
                               knobs) == CUDNN_STATUS_SUCCESS)
        for (int64_t i = 0; i < cnt && i < nk && used < n; i++) {
            cudnnBackendKnobType_t type;
            int64_t value = 0, got = 0;
            if (L->BackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                       CUDNN_TYPE_KNOB_TYPE, 1, &got,
                                       &type) != CUDNN_STATUS_SUCCESS ||
                L->BackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                       CUDNN_TYPE_INT64, 1, &got,
                                       &value) != CUDNN_STATUS_SUCCESS)
                break;
            used += (size_t)snprintf(buf + used, n - used, "%s%d=%lld%s",
                                     i ? " " : " (knobs ", (int)type, (long long)value,
                                     i == cnt - 1 ? ")" : "");
        }
    if (used < n &&
        L->BackendGetAttribute(eng, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE,
                               CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &nnotes,
                               notes) == CUDNN_STATUS_SUCCESS)
        for (int64_t i = 0; i < nnotes && i < CUDNN_BEHAVIOR_NOTE_TYPE_COUNT && used < n; i++)
            if (notes[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION)
                used += (size_t)snprintf(buf + used, n - used, ", runtime-compiled");
done:
    /* a description only: nothing to do about a failure to destroy */
    for (int i = nk - 1; i >= 0; i--)
        L->BackendDestroyDescriptor(knobs[i]);
    if (eng)
        L->BackendDestroyDescriptor(eng);
}

/* Appends "; " and s to buf (bounded). */
static void append(char *buf, size_t n, const char *s)
{
    size_t len = strlen(buf);
    if (len + 3 < n)
        snprintf(buf + len, n - len, "%s%s", len ? "; " : "", s);
}

/* Asks the heuristics for engine configs of graph g (mode A, then the
 * fallback list) and finalises the first that cuDNN accepts into C.plan.
 * Returns 0, or 1/-1 with why (every config's failure, briefly). */
static int choose_plan(const dnn_lib *L, cudnnBackendDescriptor_t g, char *why, size_t n)
{
    static const struct {
        cudnnBackendHeurMode_t mode;
        const char *name;
    } modes[] = {{CUDNN_HEUR_MODE_A, "mode A"}, {CUDNN_HEUR_MODE_FALLBACK, "fallback mode"}};
    char tried[1024] = "", one[512];
    int worst = 1; /* a failure that is not "cannot run here" makes it -1 */
    for (size_t m = 0; m < KB_COUNT(modes); m++) {
        bld b = {L, 0, one, sizeof one};
        cudnnBackendDescriptor_t heur = MAKE(&b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        SET(&b, heur, "engine heuristics", CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g);
        SET(&b, heur, "engine heuristics", CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
            &modes[m].mode);
        fin(&b, heur, "engine heuristics");
        int64_t count = 0;
        if (!b.rc) {
            cudnnStatus_t st = L->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                                      NULL);
            if (st != CUDNN_STATUS_SUCCESS)
                bld_fail(&b, st, "cudnnBackendGetAttribute", "engine heuristics",
                         "CUDNN_ATTR_ENGINEHEUR_RESULTS");
        }
        if (b.rc) {
            char head[600];
            snprintf(head, sizeof head, "heuristics %s: %s", modes[m].name, one);
            append(tried, sizeof tried, head);
            worst = b.rc < 0 ? -1 : worst;
            continue;
        }
        if (count > DNN_MAX_CONFIGS)
            count = DNN_MAX_CONFIGS;
        cudnnBackendDescriptor_t cfg[DNN_MAX_CONFIGS];
        for (int64_t i = 0; i < count; i++)
            cfg[i] = MAKE(&b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
        int64_t got = 0;
        if (!b.rc && count > 0) {
            cudnnStatus_t st = L->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                                      &got, cfg);
            if (st != CUDNN_STATUS_SUCCESS)
                bld_fail(&b, st, "cudnnBackendGetAttribute", "engine heuristics",
                         "CUDNN_ATTR_ENGINEHEUR_RESULTS");
        }
        if (b.rc) {
            append(tried, sizeof tried, one);
            worst = -1;
            continue;
        }
        if (verbose())
            fprintf(stderr, "kbench: cudnn: heuristics %s offers %lld engine config(s)\n",
                    modes[m].name, (long long)got);
        if (got == 0) {
            char head[128];
            snprintf(head, sizeof head, "heuristics %s offers no engine config", modes[m].name);
            append(tried, sizeof tried, head);
        }
        for (int64_t i = 0; i < got; i++) {
            char desc[160];
            describe_config(L, cfg[i], desc, sizeof desc);
            bld pb = {L, 0, one, sizeof one};
            cudnnBackendDescriptor_t plan = MAKE(&pb, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
            SET(&pb, plan, "execution plan", CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
            fin(&pb, plan, "execution plan");
            if (verbose())
                fprintf(stderr, "kbench: cudnn:   config %lld: %s: %s\n", (long long)i, desc,
                        pb.rc ? one : "finalised");
            if (!pb.rc) {
                C.plan = plan;
                if (verbose())
                    fprintf(stderr, "kbench: cudnn: plan: heuristics %s, config %lld, %s\n",
                            modes[m].name, (long long)i, desc);
                return 0;
            }
            char head[800];
            snprintf(head, sizeof head, "%s %s: %s", modes[m].name, desc, one);
            append(tried, sizeof tried, head);
            worst = pb.rc < 0 ? -1 : worst;
        }
    }
    snprintf(why, n, "cuDNN has no engine that builds a plan for this graph: %s", tried);
    return worst;
}

/* ---- the case -------------------------------------------------------------------------- */

/* Destroys what the previous case built (descriptors, workspace); keeps the
 * handle. Returns 0, or -1 with why when the workspace cannot be freed. */
static int case_release(const dnn_lib *L, char *why, size_t n)
{
    for (int i = C.ndesc - 1; i >= 0; i--)
        L->BackendDestroyDescriptor(C.desc[i]); /* nothing to do about a failure here */
    C.ndesc = 0;
    C.plan = C.pack = NULL;
    memset(&C.key, 0, sizeof C.key);
    if (C.workspace) {
        cudaError_t ce = cudaFree(C.workspace);
        C.workspace = NULL;
        if (ce != cudaSuccess) {
            snprintf(why, n, "cudaFree of the previous case's cuDNN workspace failed: %s (%s)",
                     cudaGetErrorString(ce), cudaGetErrorName(ce));
            return -1;
        }
    }
    if (C.stats) {
        cudaError_t ce = cudaFree(C.stats);
        C.stats = NULL;
        if (ce != cudaSuccess) {
            snprintf(why, n, "cudaFree of the previous case's softmax statistics failed: %s",
                     cudaGetErrorString(ce));
            return -1;
        }
    }
    return 0;
}

/* At exit, what the last case built is released and the handle destroyed, so
 * a process that ran cases (the GPU tests run many in one) ends with nothing of
 * cuDNN's allocated. Registered after the CUDA runtime's own exit handler, so
 * it runs first. */
static void case_at_exit(void)
{
    char why[64];
    case_release(&lib, why, sizeof why); /* nothing to do about a failure at exit */
    if (C.handle)
        lib.Destroy(C.handle);
    C.handle = NULL;
}

/* The handle for the current device, created once. */
static int case_handle(const dnn_lib *L, char *why, size_t n)
{
    int dev = 0;
    if (kb_current_device(&dev, why, n) != 0)
        return -1;
    if (C.handle && C.device == dev)
        return 0;
    if (C.handle)
        L->Destroy(C.handle); /* another device's: nothing to do about a failure here */
    C.handle = NULL;
    cudnnStatus_t st = L->Create(&C.handle);
    if (st != CUDNN_STATUS_SUCCESS) {
        C.handle = NULL;
        dnn_explain(L, st, why, n, "cudnnCreate on device %d", dev);
        return dnn_class(st);
    }
    C.device = dev;
    static int at_exit;
    if (!at_exit && atexit(case_at_exit) == 0)
        at_exit = 1;
    return 0;
}

/* The workspace the plan asks for, and the variant pack binding kbench's
 * buffers, the scalars and the workspace to the graph's tensors. */
static int case_bind(const dnn_lib *L, const kb_args *a, const dnn_shape *sh, char *why,
                     size_t n)
{
    int64_t ws = 0, cnt = 0;
    cudnnStatus_t st = L->BackendGetAttribute(C.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                              CUDNN_TYPE_INT64, 1, &cnt, &ws);
    if (st != CUDNN_STATUS_SUCCESS) {
        dnn_explain(L, st, why, n,
                    "cudnnBackendGetAttribute(execution plan, "
                    "CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)");
        return -1;
    }
    if (ws < 0) {
        snprintf(why, n, "cuDNN's plan asks for a workspace of %lld bytes", (long long)ws);
        return -1;
    }
    if (ws > 0) {
        size_t free_b = 0, total_b = 0;
        cudaError_t ce = cudaMemGetInfo(&free_b, &total_b);
        if (ce != cudaSuccess) {
            snprintf(why, n, "cudaMemGetInfo failed: %s (%s)", cudaGetErrorString(ce),
                     cudaGetErrorName(ce));
            return -1;
        }
        if ((uint64_t)ws > (uint64_t)free_b) {
            snprintf(why, n,
                     "cuDNN's plan needs a workspace of %lld bytes; %zu of the GPU's %zu are "
                     "free",
                     (long long)ws, free_b, total_b);
            return 1;
        }
        ce = cudaMalloc(&C.workspace, (size_t)ws);
        if (ce != cudaSuccess) {
            C.workspace = NULL;
            snprintf(why, n, "allocating cuDNN's workspace of %lld bytes failed: %s (%s)",
                     (long long)ws, cudaGetErrorString(ce), cudaGetErrorName(ce));
            return -1;
        }
    }
    if (verbose())
        fprintf(stderr, "kbench: cudnn: workspace %lld bytes\n", (long long)ws);
    C.scale = (float)(1.0 / sqrt((double)sh->d));
    C.mask_value = L->version >= DNN_V_NEG_INF_MASK ? -INFINITY : -FLT_MAX;
    int64_t uids[7] = {UID_Q, UID_K, UID_V, UID_O, UID_SCALE, UID_MASK_VALUE};
    void *ptrs[7] = {(void *)a->in[0], (void *)a->in[1], (void *)a->in[2], a->out[0], &C.scale,
                     &C.mask_value};
    int64_t nbound = sh->causal ? 6 : 5;
    if (C.graph == GRAPH_DECOMPOSED && (sh->form & DNN_FORM_STATS)) {
        const size_t sb = (size_t)(sh->b * sh->h * sh->s) * sizeof(float);
        cudaError_t ce = cudaMalloc(&C.stats, sb);
        if (ce != cudaSuccess) {
            C.stats = NULL;
            snprintf(why, n, "allocating the softmax statistics (%zu bytes) failed: %s", sb,
                     cudaGetErrorString(ce));
            return -1;
        }
        uids[nbound] = UID_STATS;
        ptrs[nbound++] = C.stats;
    }
    bld b = {L, 0, why, n};
    const char *name = "variant pack";
    C.pack = MAKE(&b, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    SET(&b, C.pack, name, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, nbound, uids);
    SET(&b, C.pack, name, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, nbound,
        ptrs);
    SET(&b, C.pack, name, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
        &C.workspace);
    fin(&b, C.pack, name);
    return b.rc;
}

/* The graphs to try for this case, in order, from KBENCH_CUDNN_GRAPH: the
 * SDPA_FWD operation first when asked and possible, then the decomposed
 * graph. Returns how many (1 or 2), or -1 with why for a bad value. */
static int graph_plan(const dnn_lib *L, const dnn_shape *sh, int kinds[2], char *why, size_t n)
{
    const int choice = graph_choice();
    int k = 0;
    if (choice < 0) {
        snprintf(why, n, "%s='%s' is neither 'decomposed' nor 'sdpa'", DNN_GRAPH_ENV,
                 getenv(DNN_GRAPH_ENV));
        return -1;
    }
    if (choice == 1 && !sh->causal && L->version >= DNN_V_SDPA_OP)
        kinds[k++] = GRAPH_SDPA;
    else if (choice == 1 && verbose())
        fprintf(stderr, "kbench: cudnn: the SDPA_FWD operation needs cuDNN 9.13.1 and "
                        "non-causal attention; using the decomposed graph\n");
    kinds[k++] = GRAPH_DECOMPOSED;
    return k;
}

static const char *graph_name(int kind, const dnn_shape *sh)
{
    if (kind == GRAPH_SDPA)
        return "the SDPA_FWD operation";
    return sh->causal ? "the decomposed graph (causal)" : "the decomposed graph";
}

static cudnnBackendDescriptor_t build_graph(bld *b, int kind, cudnnHandle_t handle,
                                            const dnn_shape *sh)
{
    return kind == GRAPH_SDPA ? sdpa_graph(b, handle, sh) : decomposed_graph(b, handle, sh);
}

#endif /* KB_HAVE_CUDNN */

/* ---- the variant's entry points -------------------------------------------------------- */

extern "C" int kb_attention_cudnn_unsupported(const int64_t *shape, kb_dtype d, char *why,
                                              size_t why_size)
{
    (void)shape;
#if KB_HAVE_CUDNN
    if (d != KB_FP16 && d != KB_BF16) {
        snprintf(why, why_size, "cudnn runs fp16 and bf16, not %s", kb_dtype_name(d));
        return 1;
    }
    return lib_load(why, why_size) ? 0 : 1;
#else
    (void)d;
    snprintf(why, why_size, "%s", DNN_NO_HEADERS);
    return 1;
#endif
}

/* Builds the descriptors of the case's graphs (those KBENCH_CUDNN_GRAPH asks
 * for) and finalises their operation graphs, with no handle and no GPU: what
 * the unit tests can check of the graph on a machine without one. Returns 0,
 * 1 when cuDNN cannot be loaded (or was not built in), -1 with cuDNN's
 * complaint. Frees what it built, and any case prepared before in this
 * process (a test's call, never the harness's). */
extern "C" int kb_attention_cudnn_check_graph(const int64_t *shape, kb_dtype d, char *why,
                                              size_t why_size)
{
#if KB_HAVE_CUDNN
    const dnn_lib *L = lib_load(why, why_size);
    if (!L)
        return 1;
    if (case_release(L, why, why_size) != 0)
        return -1;
    const dnn_shape sh = dnn_shape_of(shape, d);
    int kinds[2];
    const int nk = graph_plan(L, &sh, kinds, why, why_size);
    bld b = {L, 0, why, why_size};
    for (int i = 0; i < nk && !b.rc; i++)
        build_graph(&b, kinds[i], NULL, &sh);
    const int rc = nk < 0 || b.rc ? -1 : 0;
    char ignored[8];
    case_release(L, ignored, sizeof ignored); /* no workspace: cannot fail */
    return rc;
#else
    (void)shape;
    (void)d;
    snprintf(why, why_size, "%s", DNN_NO_HEADERS);
    return 1;
#endif
}

extern "C" int kb_attention_cudnn_prepare(const kb_args *a, char *why, size_t why_size)
{
#if KB_HAVE_CUDNN
    int rc = kb_attention_cudnn_unsupported(a->shape, a->dtype, why, why_size);
    if (rc)
        return rc;
    const dnn_lib *L = &lib;
    if ((rc = case_release(L, why, why_size)) != 0 || (rc = case_handle(L, why, why_size)) != 0)
        return rc;
    const dnn_shape sh = dnn_shape_of(a->shape, a->dtype);
    if (verbose()) {
        char v[32];
        Dl_info info;
        void *sym = NULL;
        memcpy(&sym, &L->GetVersion, sizeof sym);
        memset(&info, 0, sizeof info);
        version_str(L->version, v, sizeof v);
        fprintf(stderr, "kbench: cudnn: %s (%s) is cuDNN %s, built with CUDA runtime %zu\n",
                L->name, dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?", v,
                L->cudart);
    }
    int kinds[2];
    const int nk = graph_plan(L, &sh, kinds, why, why_size);
    if (nk < 0)
        return -1;
    for (int i = 0; i < nk; i++) {
        if (verbose())
            fprintf(stderr, "kbench: cudnn: %s for b=%lld h=%lld s=%lld d=%lld %s\n",
                    graph_name(kinds[i], &sh), (long long)sh.b, (long long)sh.h,
                    (long long)sh.s, (long long)sh.d, kb_dtype_name(a->dtype));
        bld b = {L, 0, why, why_size};
        cudnnBackendDescriptor_t g = build_graph(&b, kinds[i], C.handle, &sh);
        rc = b.rc ? b.rc : choose_plan(L, g, why, why_size);
        if (rc == 0) {
            C.graph = kinds[i];
            break;
        }
        if (i + 1 < nk && verbose())
            fprintf(stderr, "kbench: cudnn: %s cannot run (%s); trying the next graph\n",
                    graph_name(kinds[i], &sh), why);
    }
    if (rc != 0 || (rc = case_bind(L, a, &sh, why, why_size)) != 0)
        return rc;
    kb_case_key_of(a, ATT_CAUSAL + 1, &C.key);
    return 0;
#else
    (void)a;
    snprintf(why, why_size, "%s", DNN_NO_HEADERS);
    return 1;
#endif
}

/* Runs the plan prepare built on stream s. The plan is bound to the case's
 * buffers and shape: a call with others is refused (cudaErrorInvalidValue),
 * as is a call before prepare. A cuDNN failure returns the pending CUDA
 * error, or cudaErrorUnknown, with cuDNN's message in
 * kb_attention_cudnn_last_error(). */
extern "C" cudaError_t kb_attention_cudnn(const kb_args *a, cudaStream_t s)
{
    last_failure[0] = '\0';
#if KB_HAVE_CUDNN
    cudaError_t ce = kb_case_key_check(&C.key, a, "cudnn", last_failure, sizeof last_failure);
    if (ce != cudaSuccess)
        return ce;
    const char *call = "cudnnSetStream";
    cudnnStatus_t st = lib.SetStream(C.handle, s);
    if (st == CUDNN_STATUS_SUCCESS) {
        call = "cudnnBackendExecute";
        st = lib.BackendExecute(C.handle, C.plan, C.pack);
    }
    if (st != CUDNN_STATUS_SUCCESS) {
        dnn_explain(&lib, st, last_failure, sizeof last_failure, "cudnn: %s", call);
        return kb_library_error();
    }
    return cudaGetLastError();
#else
    (void)a;
    (void)s;
    snprintf(last_failure, sizeof last_failure, "%s", DNN_NO_HEADERS);
    return cudaErrorNotSupported;
#endif
}
