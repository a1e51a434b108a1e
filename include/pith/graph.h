/* graph.h — compiled graphs: build a graph of op calls over stand-in values, compile it,
 * and run it on real tensors without the dispatcher. Included by pith.h.
 *
 * A graph value is a Meta tensor that stands for it (a stand-in): pith_graph_input and
 * pith_graph_param make them, and pith_graph_call runs an op in the boxed convention over
 * stand-ins and returns stand-ins of its results, with the shapes that the op's Meta kernel
 * gives. docs/compile.md describes the passes, the memory plan and the executor. */
#ifndef PITH_GRAPH_H
#define PITH_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pith_graph pith_graph;
typedef struct pith_compiled pith_compiled;

/* Options of pith_graph_compile. A NULL pointer means the defaults, and so does a struct
 * filled by pith_compile_options_init. */
typedef struct pith_compile_options {
    /* The size of this struct, set by pith_compile_options_init: fields added later are
     * read only when the caller's struct has them. */
    size_t struct_size;
    /* Dead-code elimination (default true). */
    bool dce;
    /* Common-subexpression elimination (default true). */
    bool cse;
    /* Memory planning into one arena (default true). Without it every intermediate gets a
     * buffer of its own, still allocated once per arena, for comparison. */
    bool plan_memory;
    /* How many arenas a compiled graph keeps for concurrent runs (default 4, at least 1).
     * A run takes a free arena or, when all are in use, makes one for itself. */
    int arena_pool;
    /* Fusion of elementwise chains (with their casts, row ops, reductions over the
     * innermost dims and GEMM heads) into groups run tile by tile (default true). Results
     * are eager's bit for bit either way. */
    bool fuse;
} pith_compile_options;

PITH_API void pith_compile_options_init(pith_compile_options *opts);

PITH_API pith_graph *pith_graph_new(void);
PITH_API void pith_graph_free(pith_graph *g);

/* The stand-in of an input (new reference); `strides` NULL means contiguous. */
PITH_API pith_tensor *pith_graph_input(pith_graph *g, pith_dtype dtype, int ndim,
                                       const int64_t *sizes, const int64_t *strides);
/* The stand-in of a tensor held by reference (the graph retains `t`), whose data is read
 * at every run (new reference). */
PITH_API pith_tensor *pith_graph_param(pith_graph *g, pith_tensor *t);
/* Adds a call: arguments on the stack, results back on it as stand-ins. */
PITH_API pith_status pith_graph_call(pith_graph *g, const pith_op *op, pith_stack *stack);
/* Marks an output, in order. */
PITH_API pith_status pith_graph_output(pith_graph *g, const pith_tensor *value);

PITH_API pith_compiled *pith_graph_compile(const pith_graph *g,
                                           const pith_compile_options *opts);
PITH_API void pith_compiled_free(pith_compiled *c);
/* Runs with the inputs in the order of pith_graph_input calls; `outputs` gets new
 * references, in the order of pith_graph_output calls. */
PITH_API pith_status pith_compiled_run(pith_compiled *c, pith_tensor *const *inputs,
                                       int ninputs, pith_tensor **outputs, int noutputs);

/* Counts, for tests and tools. */
PITH_API int pith_compiled_num_inputs(const pith_compiled *c);
PITH_API int pith_compiled_num_outputs(const pith_compiled *c);
/* Bytes of one arena, and the bytes the intermediates would take without planning. */
PITH_API size_t pith_compiled_arena_bytes(const pith_compiled *c);
PITH_API size_t pith_compiled_intermediate_bytes(const pith_compiled *c);

/* Text dumps (free with pith_string_free); NULL with the error set on failure. */
PITH_API char *pith_graph_dump(const pith_graph *g);
PITH_API char *pith_compiled_dump(const pith_compiled *c);
PITH_API void pith_string_free(char *s);

#ifdef __cplusplus
}
#endif

#endif /* PITH_GRAPH_H */
