// Annotations that let one function body compile for host and CUDA device.
#pragma once

#ifdef __CUDACC__
#define STF_HOST_DEVICE __host__ __device__
#else
#define STF_HOST_DEVICE
#endif
