/* dlpack.h — the DLPack structs that pith._C exchanges, written from the DLPack 1.1 header
 * (dmlc/dlpack include/dlpack/dlpack.h, DLPACK_MAJOR_VERSION 1, DLPACK_MINOR_VERSION 1),
 * whose ABI is that of 1.0: pith produces version 1.0 and reads any 1.x. Only the parts
 * pith uses are here; the field order and types must stay exactly the spec's. */
#ifndef PITH_BINDINGS_DLPACK_H
#define PITH_BINDINGS_DLPACK_H

#include <stdint.h>

#define PITH_DLPACK_MAJOR 1
#define PITH_DLPACK_MINOR 0

typedef struct {
    uint32_t major;
    uint32_t minor;
} DLPackVersion;

/* DLDeviceType: an int32-sized C enum in the spec; only the CPU value is used here. */
enum { kDLCPU = 1 };

typedef struct {
    int32_t device_type;
    int32_t device_id;
} DLDevice;

/* DLDataTypeCode */
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} DLDataType;

typedef struct {
    void *data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; pith always sets them */
    uint64_t byte_offset;
} DLTensor;

/* The legacy (pre-1.0) managed tensor, in capsules named "dltensor". */
typedef struct DLManagedTensor {
    DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensor *self);
} DLManagedTensor;

#define DLPACK_FLAG_BITMASK_READ_ONLY (UINT64_C(1) << 0)
#define DLPACK_FLAG_BITMASK_IS_COPIED (UINT64_C(1) << 1)

/* The versioned managed tensor, in capsules named "dltensor_versioned". */
typedef struct DLManagedTensorVersioned {
    DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct DLManagedTensorVersioned *self);
    uint64_t flags;
    DLTensor dl_tensor;
} DLManagedTensorVersioned;

#endif /* PITH_BINDINGS_DLPACK_H */
