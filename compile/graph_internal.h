/* graph_internal.h — the IR of compiled graphs, shared by the builder (graph.c), the passes
 * (passes.c), the executor (executor.c) and the dumps (dump.c).
 *
 * A graph is a list of values and a list of nodes, in the order they were added. A value
 * is an input, a param, a constant or a result of a node; a node is one pith_graph_call.
 * Values never change: an in-place op's result is the value it was given, and the node
 * records that it mutates it. See Note [Stand-ins] and Note [Effects]. */
#ifndef PITH_COMPILE_GRAPH_INTERNAL_H
#define PITH_COMPILE_GRAPH_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/tensor.h"
#include "dispatch/registry.h"
#include "dispatch/value.h"
#include "kernels/elementwise_ops.h"
#include "kernels/linalg.h"
#include "kernels/reduce.h"
#include "pith/graph.h"

/* The identity of one graph, shared by its stand-ins' storages: it outlives the graph, so
 * that a stand-in kept after pith_graph_free is recognised as one of a freed graph. */
typedef struct {
    atomic_int refcount;
    atomic_bool alive;
    uint64_t serial;
} graph_ident;

/* The ctx of a stand-in's storage: its graph and the value that owns the storage. */
typedef struct {
    graph_ident *ident;
    int root;
} standin_ctx;

typedef enum {
    GVAL_INPUT,
    GVAL_PARAM,
    GVAL_CONST, /* a 0-dim wrapped number, by value */
    GVAL_RESULT,
} gval_kind;

typedef struct {
    gval_kind kind;
    int index;  /* input or param number; for a result, which of its node's results */
    int node;   /* the producing node, or -1 */
    int root;   /* the value whose storage this one lives in (itself for a root) */
    /* The stand-in (a Meta tensor; owned). For a constant, the constant itself (a CPU
     * 0-dim tensor owned by the graph), for a param the held tensor is in `held`. */
    pith_tensor *t;
    pith_tensor *held; /* a param's tensor (retained) */
} gvalue;

/* Effects of a node (See Note [Effects]). */
enum {
    EFFECT_MUTATES = 1u << 0, /* writes a Tensor(a!) argument in place */
    EFFECT_OUT = 1u << 1,     /* ... and that argument is an out= (keyword-only) one */
    EFFECT_RANDOM = 1u << 2,  /* draws from a generator */
};

/* One tensor reference among a node's arguments: argument `arg`, entry `entry` of a list
 * (-1 for a plain Tensor argument), value `value`, read at version `version` of its root. */
typedef struct {
    int arg;
    int entry;
    int value;
    int64_t version;
} gref;

typedef struct {
    const pith_op *op;
    pith_value *args; /* owned copies, defaults filled; tensors as the graph holds them */
    size_t nargs;
    gref *refs;
    size_t nrefs;
    int *results; /* value ids, flattened (a Tensor[] return gives one per entry) */
    size_t nresults;
    int nlist[PITH_MAX_RETURNS]; /* per return: -1 for a Tensor, else the list length */
    unsigned effects;
    int *mutated; /* values written in place */
    size_t nmutated;
} gnode;

struct pith_graph {
    graph_ident *ident;
    gvalue *values;
    size_t nvalues, cap_values;
    gnode *nodes;
    size_t nnodes, cap_nodes;
    int *inputs;
    size_t ninputs, cap_inputs;
    int nparams;
    int *outputs;
    size_t noutputs, cap_outputs;
    int64_t *root_version; /* per value (used for roots): mutations so far */
    /* stand-in pointer -> value id (open addressing; capacity a power of two) */
    struct {
        const pith_tensor *key;
        int value;
    } *map;
    size_t map_cap, map_used;
};

/* ---- typed invokers of the built-in kernels (invoke.c) ----
 * Calls the typed kernel `fn` of built-in op `op` with its arguments read from a value
 * array (borrowed): the boxed adapter's unboxing without a stack. */
typedef pith_status (*compile_invoker)(const pith_op *op, void (*fn)(void), pith_keyset ks,
                                       const pith_value *args, pith_value *ret);
compile_invoker compile_invoker_of(const pith_op *op);

/* How a call of a built-in op may join a fused group: See Note [Fusion classes]
 * (fusion.c). The table is written from the op file (compile/generated/fusion_classes.c). */
typedef enum {
    FUSION_NONE = 0,
    FUSION_ELEMENTWISE, /* a member of an elementwise chain */
    FUSION_REDUCTION,   /* a reduction root */
    FUSION_ROW,         /* a row member: softmax, log_softmax, layer_norm */
    FUSION_GEMM         /* a GEMM head */
} fusion_class;
extern const unsigned char compile_fusion_classes[PITH_NUM_BUILTIN_OPS];

/* ---- compiled graphs (passes.c plans them, executor.c runs them) ---- */

typedef enum {
    STEP_VIEW,  /* results are views: nothing runs (a per-run base rebinds a header) */
    STEP_ALLOC, /* empty / empty_strided: the result is its buffer */
    STEP_OUT,   /* a pure op, called in destination-passing form (its .out overload) */
    STEP_CALL,  /* anything else: effects, several results, no .out, boxed kernels */
    STEP_GROUP, /* a fused chain of elementwise calls, run tile by tile (fusion.c) */
} step_kind;

/* ---- fused elementwise groups (fusion.c; See Note [Fusion legality]) ---- */

enum {
    GROUP_MAX_MEMBERS = 20,
    GROUP_MAX_OPERANDS = 6 * GROUP_MAX_MEMBERS, /* a member adds at most six (casts too) */
    GROUP_MAX_SCRATCH = 8, /* tile buffers live at once; a member past them is materialised */
    GROUP_MAX_CASTS = 2,   /* inputs converted tile by tile, each holding a tile buffer */
};

typedef enum {
    OPERAND_VALUE,   /* a value's tensor: an input of the group, or a materialised result */
    OPERAND_CONST,   /* a constant, converted once to the dtype its loop reads */
    OPERAND_SCRATCH, /* a result that lives only in a tile buffer */
    OPERAND_HEAD,    /* an input of the GEMM head only: read whole by the product, no strides */
    OPERAND_CAST,    /* an input read converted: each tile cast into a tile buffer */
} operand_kind;

typedef struct {
    operand_kind kind;
    int value;  /* the graph value (every kind) */
    int scratch; /* OPERAND_SCRATCH and OPERAND_CAST: which tile buffer */
    elementwise_loop cast;  /* OPERAND_CAST: cast_loop(to, the value's dtype) */
    pith_dtype to;          /* OPERAND_CAST: the dtype it is read as */
    /* OPERAND_VALUE and OPERAND_CAST: bytes per step of each coalesced dim of the group (0:
     * broadcast), of the value's own tensor. */
    int64_t strides[PITH_MAX_DIMS];
    _Alignas(16) unsigned char constant[16]; /* OPERAND_CONST */
} goperand;

typedef struct {
    elementwise_fusable f; /* for a reduction: nin 1, and its in and out dtypes */
    bool reduce;           /* the group's root: a reduction over the last dim */
    reduce_fusable r;
    bool row;              /* a softmax, log_softmax or layer_norm over the innermost dims */
    int row_dims;          /* for a row op or a root: how many innermost dims make a row */
    int64_t row_len;       /* and their product */
    softmax_fusable sm;
    bool lnorm;            /* the row op is a layer_norm: in[1], in[2] its weight, bias */
    layer_norm_fusable ln;
    bool gemm;             /* the GEMM head (member 0): in[] are A, B and the addend */
    matmul_fusable mm;
    const pith_op *op;
    int node;
    int result; /* value id */
    int out;    /* operand of its result */
    int in[3];  /* operands of its inputs (f.nin of them); -1 for None */
} gmember;

typedef struct {
    int ndim; /* the group's shape, coalesced over every operand */
    int64_t sizes[PITH_MAX_DIMS];
    int64_t numel;
    int64_t tile;            /* elements per tile (See Note [Fusion tiles]) */
    size_t scratch_itemsize; /* bytes per element of a tile buffer */
    int nscratch;
    bool gemm; /* members[0] is a GEMM head (See Note [GEMM epilogues], fusion.c) */
    gmember *members;
    size_t nmembers;
    goperand *operands;
    size_t noperands;
} cgroup;

typedef struct {
    step_kind kind;
    int node;             /* the graph node */
    const pith_op *op;    /* the op called: the node's, or its .out overload */
    compile_invoker invoke; /* typed call of `fn`, or NULL: call `record` boxed */
    void (*fn)(void);
    const pith_kernel_record *record;
    pith_value *args;     /* template: non-tensor arguments; tensors are patched per run */
    size_t nargs;
    gref *refs;           /* tensor arguments (values after CSE) */
    size_t nrefs;
    int *results;
    size_t nresults;
    unsigned effects;
    cgroup *group; /* STEP_GROUP: its members; results are the materialised ones */
} cstep;

typedef enum {
    ROOT_INPUT,
    ROOT_PARAM,
    ROOT_CONST,
    ROOT_ARENA, /* an intermediate in the arena */
    ROOT_FRESH, /* reaches an output: allocated by the run, at its step */
    ROOT_DYN,   /* made by a kernel that allocates it (STEP_CALL) */
} root_kind;

/* How a run gets a value's tensor. */
typedef enum {
    SLOT_NONE,     /* not used */
    SLOT_INPUT,    /* the caller's tensor */
    SLOT_EXTERNAL, /* a param or a constant, held by the compiled graph */
    SLOT_STATIC,   /* made once per arena: an arena buffer, or a view of one or of a param */
    SLOT_REBOUND,  /* a view header rebound each run (See Note [Rebound view headers]) */
    SLOT_RUN,      /* made by the run (FRESH, or returned by a kernel); released after it */
} slot_kind;

typedef struct {
    slot_kind slot;
    root_kind rk; /* of its root */
    int root;
    int input;    /* for SLOT_INPUT */
    int buffer;   /* for ARENA roots */
    bool from_call; /* set from a kernel's result (SLOT_RUN) */
    int def;        /* the step that makes it, or -1 */
    pith_tensor *meta;    /* the stand-in (retained): geometry and dtype */
    pith_tensor *ext;     /* a param or constant (retained) */
    int64_t delta;        /* offset from its root's offset, in elements */
} cvalue;

typedef struct {
    size_t bytes;
    size_t offset;
    int first, last; /* steps */
    int root;
} cbuffer;

typedef struct arena_ctx arena_ctx;

struct pith_compiled {
    uint64_t serial;
    cvalue *values;
    size_t nvalues;
    cstep *steps;
    size_t nsteps;
    int *inputs; /* value ids */
    size_t ninputs;
    int *outputs;
    size_t noutputs;
    cbuffer *buffers;
    size_t nbuffers;
    size_t arena_bytes, intermediate_bytes;
    size_t scratch_bytes; /* per thread, for the tile buffers of the largest group */
    pith_compile_options opts;
    char *removed; /* the passes' report, for the dump */
    /* Arenas not in use (See Note [Arenas]). */
    _Atomic(arena_ctx *) *pool;
    int npool;
};

void compiled_destroy(pith_compiled *c);
void cstep_clear(cstep *st);
void cgroup_free(cgroup *grp);
/* Fuses runs of consecutive elementwise steps into STEP_GROUPs (before the plan). `repl`
 * maps merged values (CSE). */
pith_status fuse_steps(pith_compiled *c, const pith_graph *g, const int *repl);
/* Runs a group's tiles: `slot` holds its operand values' tensors; `scratch` has
 * c->scratch_bytes for each of `scratch_threads` threads. */
pith_status group_run(const pith_compiled *c, const cgroup *grp, pith_tensor *const *slot,
                      unsigned char *scratch, int scratch_threads);

pith_status compiled_prepare_pool(pith_compiled *c);

/* ---- the builder (graph.c) ---- */
bool standin_of(const pith_tensor *t, const graph_ident **ident, int *root);
const char *gvalue_kind_name(gval_kind k);

/* ---- dumps (dump.c) ---- */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} strbuf;
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_value(strbuf *sb, const pith_value *v, const gref *refs, size_t nrefs, size_t arg);
void sb_geometry(strbuf *sb, const pith_tensor *t);
char *sb_finish(strbuf *sb);
void sb_group(strbuf *sb, const pith_compiled *c, const cgroup *grp);


#endif /* PITH_COMPILE_GRAPH_INTERNAL_H */
