/* out_target_shim.c — lets out_kernels_test.cc ask where an out= kernel would write: the
 * choice lives in kernels/out_target.c, behind core/tensor.h's C11 atomics. */
#include "kernels/out_target.h"

/* Whether out_target_begin writes `target` itself (no temporary) for these inputs. */
bool shim_out_target_is_direct(pith_tensor *target, const pith_tensor *input)
{
    pith_tensor *dst = out_target_begin(target, &input, 1, false);
    bool direct = dst == target;
    pith_release(dst);
    return direct;
}
